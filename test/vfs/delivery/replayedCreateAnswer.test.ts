// A create whose answer was lost is sent again after a restart and the service replays the answer
// it gave then (its Idempotency-Key): the note as it was made. Edited elsewhere since, the listing
// this mount started from already has a newer version; the replayed answer must not take the note
// back to the old one (stat said 16 bytes, a read gave the 1 of the newer version). Found by the
// multi-device simulation (soak seed 1000: a device rolled back to a snapshot whose journal still
// held the create).
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { TxtfsClient } from "../../../src/client/api.ts";
import { createLogger } from "../../../src/lib/logger.ts";
import { Vfs } from "../../../src/vfs/vfs.ts";
import { startFaultProxy } from "../../helpers/faultProxy.ts";
import { mountVfs, readAll, t, u, until, useVfsServer } from "../fixture.ts";

useVfsServer();

const dirs: string[] = [];
const started: Vfs[] = [];
afterEach(async () => {
  for (const v of started.splice(0)) await v.stop().catch(() => {});
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function deviceOn(url: string, cacheDir: string): Vfs {
  const vfs = new Vfs({
    client: new TxtfsClient({ url, key: u.key, source: "mount", timeoutMs: 2000 }),
    cacheDir,
    cacheSize: 1 << 20,
    uid: 0,
    gid: 0,
    logger: createLogger("vfs-test", (process.env.VFS_LOG as "silent") ?? "silent"),
    pollWait: 1,
  });
  started.push(vfs);
  return vfs;
}

it("a create's answer replayed after a restart never takes the note back to the version it made", async () => {
  const proxy = await startFaultProxy(t.url, { random: () => 0 });
  const dir = mkdtempSync(join(tmpdir(), "txtfs-vfs-a-"));
  dirs.push(dir);
  const here = deviceOn(proxy.url, dir);
  await here.start();
  const other = await mountVfs();
  proxy.set({ loseAnswer: 1 }); // every request reaches the service, no answer comes back
  const fd = await here.create("/b.md", 0o644);
  await here.write(fd, Buffer.from("0123456789abcdef"), 0);
  await here.release(fd);
  expect(await here.drain()).toBe(1); // applied there, still journalled here
  await until(() => other.readdir("/").includes("b.md"), "the other device to show b.md");
  await other.truncate("/b.md", 1);
  expect(await other.drain()).toBe(0);

  // kill -9: a new Vfs on the cache dir as it is, the network back.
  const copy = mkdtempSync(join(tmpdir(), "txtfs-vfs-a2-"));
  dirs.push(copy);
  cpSync(dir, copy, { recursive: true });
  await proxy.close();
  const again = deviceOn(t.url, copy);
  await again.start();
  expect(await again.drain()).toBe(0);
  expect(await readAll(again, "/b.md")).toBe("0");
  expect((await again.getattr("/b.md")).size).toBe(1);
});

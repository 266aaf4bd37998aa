// A new file that is not a note is saved as an attachment a moment after its close (FreshFiles):
// a program's temp file renamed over its note at once (`sed -i`, `perl -i`) never becomes an
// attachment at all, while every other new file is on its way, counted as pending, kill -9 safe.
import { cpSync, existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { TxtfsClient } from "../../src/client/api.ts";
import { bytesOf, deviceOn, readAll, scratchDir, t, u, useVfsServer } from "./fixture.ts";

useVfsServer();

const api = () => new TxtfsClient({ url: t.url, key: u.key, source: "test", timeoutMs: 5000 });

async function put(vfs: ReturnType<typeof deviceOn>, path: string, bytes: Buffer) {
  const fd = await vfs.create(path, 0o644);
  await vfs.write(fd, bytes, 0);
  await vfs.flush(fd); // close(2) returns here
  await vfs.release(fd);
}

it("sed -i's temp file, closed and renamed over its note at once: the note's new text, no attachment ever", async () => {
  const dir = scratchDir("txtfs-vfs-f-");
  const vfs = deviceOn(t.url, dir);
  await vfs.start();
  await put(vfs, "/n.md", Buffer.from("quartz\n"));
  expect(await vfs.drain()).toBe(0);
  const before = vfs.metrics().requests.byKind;
  await put(vfs, "/sedAb12Cd", Buffer.from("quartz-r1\n"));
  await vfs.rename("/sedAb12Cd", "/n.md");
  expect(await vfs.drain()).toBe(0);
  expect(await readAll(vfs, "/n.md")).toBe("quartz-r1\n");
  expect(await vfs.readdir("/")).toEqual(["n.md"]);
  const after = vfs.metrics().requests.byKind;
  const attachmentRequests = Object.keys(after).filter(
    (k) => k.includes("attachments") && after[k] !== before[k] && !k.startsWith("GET"),
  );
  expect(attachmentRequests).toEqual([]);
  expect(await api().attachments.all()).toEqual([]);
  const snapshots = join(dir, "attachments");
  expect(existsSync(snapshots) ? readdirSync(snapshots) : []).toEqual([]); // none was taken
});

it("a new file closed: pending at once, never local-only; killed before its save, the next start sends it", async () => {
  const dir = scratchDir("txtfs-vfs-f-");
  const vfs = deviceOn(t.url, dir);
  await vfs.start();
  const bytes = Buffer.from([0, 1, 2, 0xff, 0xfe]);
  await put(vfs, "/r.bin", bytes);
  expect(vfs.metrics().saves.pending).toBe(1);
  expect(vfs.localOnly()).toEqual([]);
  // kill -9 now: the cache dir as it is, before the save's moment came.
  const copy = scratchDir("txtfs-vfs-f2-");
  cpSync(dir, copy, { recursive: true });
  await vfs.stop();
  await api()
    .attachments.all()
    .then(async (all) => {
      for (const a of all) await api().attachments.delete(a.id);
    }); // what the first device's stop sent: gone, so the restarted one must send it itself
  const again = deviceOn(t.url, copy);
  await again.start();
  expect(await again.drain()).toBe(0);
  const all = await api().attachments.all();
  expect(all.map((a) => a.name)).toEqual(["r.bin"]);
  expect((await api().attachments.read(all[0]!.id))!.bytes).toEqual(bytes);
  expect(await bytesOf(again, "/r.bin")).toEqual(bytes);
});

it("fsync of a new file journals its save at once", async () => {
  const vfs = deviceOn(t.url, scratchDir("txtfs-vfs-f-"));
  await vfs.start();
  const fd = await vfs.create("/s.bin", 0o644);
  await vfs.write(fd, Buffer.from("synced"), 0);
  await vfs.fsync(fd);
  expect((await api().attachments.all()).map((a) => a.name)).toEqual(["s.bin"]);
  await vfs.release(fd);
});

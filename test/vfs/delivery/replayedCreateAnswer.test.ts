// A create whose answer was lost is sent again after a restart and the service replays the answer
// it gave then (its Idempotency-Key): the note as it was made. Edited elsewhere since, the listing
// this mount started from already has a newer version; the replayed answer must not take the note
// back to the old one (stat said 16 bytes, a read gave the 1 of the newer version). Found by the
// multi-device simulation (soak seed 1000: a device rolled back to a snapshot whose journal still
// held the create).
import { cpSync } from "node:fs";
import { expect, it } from "vitest";
import { startFaultProxy } from "../../helpers/faultProxy.ts";
import { deviceOn, mountVfs, readAll, scratchDir, t, until, useVfsServer } from "../fixture.ts";

useVfsServer();

it("a create's answer replayed after a restart never takes the note back to the version it made", async () => {
  const proxy = await startFaultProxy(t.url, { random: () => 0 });
  const dir = scratchDir("txtfs-vfs-a-");
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
  const copy = scratchDir("txtfs-vfs-a2-");
  cpSync(dir, copy, { recursive: true });
  await proxy.close();
  const again = deviceOn(t.url, copy);
  await again.start();
  expect(await again.drain()).toBe(0);
  expect(await readAll(again, "/b.md")).toBe("0");
  expect((await again.getattr("/b.md")).size).toBe(1);
});

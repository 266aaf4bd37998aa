// A clock set back (NTP after a resumed VM, a wrong hardware clock corrected) after a delete was
// journalled: the delete's short grace counts from a time that is now in the future. It must not
// hold the delete, and every save behind it, until the clock catches up again.
import { afterEach, it, vi } from "vitest";
import { mountVfs, remote, until, useVfsServer, writeFile } from "../fixture.ts";

useVfsServer();
afterEach(() => vi.useRealTimers());

it("a delete journalled an hour 'ahead' goes as soon as the clock is set back, and the saves behind it too", async () => {
  const vfs = await mountVfs();
  await writeFile(vfs, "/a.md", "old\n");
  vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 3_600_000 }); // only the clock: timers run
  await vfs.unlink("/a.md");
  const fd = await vfs.create("/b.md", 0o644);
  await vfs.write(fd, Buffer.from("after the delete\n"), 0);
  await vfs.flush(fd);
  await vfs.release(fd);
  vi.useRealTimers(); // the clock set back by an hour
  await vfs.create("/c.md", 0o644).then((fd) => vfs.release(fd)); // a save now: a delivery soon
  await until(async () => {
    const names = (await remote()).map((n) => n.name).sort();
    return names.join() === "b.md,c.md";
  }, "the delete and the saves behind it on the service");
});

// The clock set back (NTP) while a round holds a delete in its grace: what the round left to wait
// "until" (the delete's time plus its 200 ms) is now minutes away by the clock. Neither the round's
// own retry nor the next save's may wait that long: the delete, and every save behind it, go at
// once (an entry stamped later than now by more than its grace is old enough: deliveryRounds.ts).
// The clock is the mount's own (VfsOptions.clock), moved by the test; timers run.
import { it } from "vitest";
import { heldCreates, mountVfs, remote, u, until, useVfsServer } from "../fixture.ts";

useVfsServer();

it("a delete held for its grace when the clock is set back ten minutes goes at once, and the saves behind it too", async () => {
  const clock = {
    offsetMs: 0,
    now() {
      return Date.now() + this.offsetMs;
    },
  };
  const gated = heldCreates();
  await u.api.post("/api/v1/files", { name: "a.md", content: "old\n" });
  const vfs = await mountVfs({ client: gated.client, clock });
  // A create on its way (held at the service's door), then a delete behind it: the round takes the
  // create and leaves the delete for its grace.
  const fd = await vfs.create("/x.md", 0o644);
  await vfs.write(fd, Buffer.from("x\n"), 0);
  await vfs.release(fd);
  await vfs.unlink("/a.md");
  await until(() => gated.held() > 0, "the round with the create on its way");
  clock.offsetMs = -600_000; // set back ten minutes
  const b = await vfs.create("/b.md", 0o644);
  await vfs.write(b, Buffer.from("after the delete\n"), 0);
  await vfs.release(b);
  gated.open();
  await until(async () => {
    const names = (await remote()).map((n) => n.name).sort();
    return names.join() === "b.md,x.md";
  }, "the delete and the saves behind it on the service");
});

// A request's locks are what its keeper held when it began; what it granted is checked again as it
// is kept, so two requests (or two servers) granting conflicting locks at once: the second is refused.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { FileLockKeeper, LockConflict, Locks } from "../../src/dav/locks.ts";

const dir = mkdtempSync(join(tmpdir(), "txtfs-dav-locks-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const exclusive = { path: "/a.md", scope: "exclusive", depth: "0", owner: "", timeoutS: 60 } as const;

describe("a lock keeper", () => {
  it("refuses the second of two conflicting grants made from the same state, and keeps the first across a restart", async () => {
    const file = join(dir, "locks.json");
    const keeper = new FileLockKeeper(file);
    const one = new Locks(await keeper.load(Date.now()));
    const two = new Locks(await keeper.load(Date.now()));
    const first = one.grant(exclusive);
    two.grant(exclusive);
    await keeper.save(one.changes()!, Date.now());
    await expect(keeper.save(two.changes()!, Date.now())).rejects.toBeInstanceOf(LockConflict);
    const again = await new FileLockKeeper(file).load(Date.now());
    expect(again.map((l) => l.token)).toEqual([first.token]);
    // A release from a later request is kept too; an expired lock is not loaded.
    const three = new Locks(again);
    three.release(first.token);
    await keeper.save(three.changes()!, Date.now());
    expect(await keeper.load(Date.now())).toEqual([]);
    const four = new Locks([]);
    four.grant({ ...exclusive, timeoutS: 1 });
    await keeper.save(four.changes()!, Date.now());
    expect(await keeper.load(Date.now() + 2000)).toEqual([]);
  });
});

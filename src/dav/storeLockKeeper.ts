// The locks of `/dav/` kept in the store (dav_locks, migration 19): every `txtfs serve` on one
// database sees the locks any of them granted, and a grant is checked against them in the unit of
// work that keeps it, so two servers cannot both grant conflicting locks.
import type { DavLockRow } from "../store/repos/davLocks.ts";
import type { Store } from "../store/store.ts";
import { conflictsIn, type Lock, type LockChanges, LockConflict, type LockKeeper } from "./locks.ts";

const iso = (ms: number) => new Date(ms).toISOString();

function lockOf(row: DavLockRow): Lock {
  return {
    token: row.token,
    path: row.path,
    scope: row.scope as Lock["scope"],
    depth: row.depth as Lock["depth"],
    owner: row.owner,
    timeoutS: row.timeout_s,
    expiresAt: Date.parse(row.expires_at),
  };
}

export class StoreLockKeeper implements LockKeeper {
  private readonly store: Store;
  private readonly userId: string;

  constructor(store: Store, userId: string) {
    this.store = store;
    this.userId = userId;
  }

  async load(now: number): Promise<Lock[]> {
    return (await this.store.read((tx) => tx.davLocks.live(this.userId, iso(now)))).map(lockOf);
  }

  save(changes: LockChanges, now: number): Promise<void> {
    return this.store.transaction(async (tx) => {
      await tx.davLocks.hold(this.userId);
      await tx.davLocks.deleteExpired(this.userId, iso(now));
      for (const token of changes.drop) await tx.davLocks.delete(this.userId, token);
      if (changes.granted.length) {
        const kept = (await tx.davLocks.live(this.userId, iso(now))).map(lockOf);
        for (const g of changes.granted)
          if (conflictsIn(kept, g.path, g.depth, g.scope).some((l) => l.token !== g.token))
            throw new LockConflict(`${g.path} was locked meanwhile`);
      }
      for (const l of changes.put)
        await tx.davLocks.put({
          token: l.token,
          user_id: this.userId,
          path: l.path,
          scope: l.scope,
          depth: l.depth,
          owner: l.owner,
          timeout_s: l.timeoutS,
          expires_at: iso(l.expiresAt),
        });
    });
  }
}

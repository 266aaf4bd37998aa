// What `/dav/` remembers of the notes a caller deleted, for a short while: clients that save by
// DELETE then PUT (davfs2, some editors) mean the same note, so a PUT of that name by that same
// caller (the same key) soon after brings the note back with its id and history. Kept in the
// store (dav_tombstones, migration 20), so the PUT may reach another server or follow a restart;
// bounded per account in count, bytes and time.
import type { FileSnapshot } from "../server/domain/fileRevival.ts";
import type { Tx } from "../store/store.ts";

export interface TombstoneLimits {
  /** How long after a DELETE a PUT continues the note. */
  ttlMs: number;
  /** At most this many kept at once per account (the oldest go first). */
  count: number;
  /** At most this many bytes of note and version bodies kept at once per account. */
  bytes: number;
}

export const TOMBSTONES: TombstoneLimits = { ttlMs: 30_000, count: 256, bytes: 32 << 20 };

const iso = (ms: number) => new Date(ms).toISOString();

export class ServiceTombstones {
  private readonly limits: TombstoneLimits;
  private readonly now: () => number;

  constructor(limits: TombstoneLimits = TOMBSTONES, now: () => number = Date.now) {
    this.limits = limits;
    this.now = now;
  }

  /** The caller (`principal` of account `userId`) deletes this note in `tx`: kept if that commits. */
  async remember(tx: Tx, userId: string, principal: string, snapshot: FileSnapshot): Promise<void> {
    const { owner_id, folder_id, name } = snapshot.file;
    const now = this.now();
    await tx.davTombstones.deleteExpired(iso(now));
    if (snapshot.bytes > this.limits.bytes) return;
    await tx.davTombstones.put({
      user_id: userId,
      principal,
      owner_id,
      folder_key: folder_id ?? "",
      name,
      snapshot: JSON.stringify(snapshot),
      bytes: snapshot.bytes,
      expires_at: iso(now + this.limits.ttlMs),
    });
    let count = 0;
    let bytes = 0;
    for (const t of await tx.davTombstones.sizes(userId)) {
      count += 1;
      bytes += t.bytes;
      if (count > this.limits.count || bytes > this.limits.bytes) await tx.davTombstones.delete(t);
    }
  }

  /** The note this caller deleted at that place within the window, taken (a tombstone serves once). */
  async take(
    tx: Tx,
    principal: string,
    ownerId: string,
    folderId: string | null,
    name: string,
  ): Promise<FileSnapshot | undefined> {
    const place = { principal, owner_id: ownerId, folder_key: folderId ?? "", name };
    const row = await tx.davTombstones.take(place, iso(this.now()));
    return row && (JSON.parse(row.snapshot) as FileSnapshot);
  }
}

// What `/dav/` remembers of the notes a caller deleted, for a short while: clients that save by
// DELETE then PUT (davfs2, some editors) mean the same note, so a PUT of that name by that same
// caller (the same key) soon after brings the note back with its id and history. Bounded in count,
// bytes and time; per server process (a PUT to another server of the service makes a new note).
import type { FileSnapshot } from "../server/domain/fileRevival.ts";

export interface TombstoneLimits {
  /** How long after a DELETE a PUT continues the note. */
  ttlMs: number;
  /** At most this many kept at once (the oldest go first). */
  count: number;
  /** At most this many bytes of note and version bodies kept at once. */
  bytes: number;
}

export const TOMBSTONES: TombstoneLimits = { ttlMs: 30_000, count: 256, bytes: 32 << 20 };

interface Tombstone {
  snapshot: FileSnapshot;
  at: number;
}

export class ServiceTombstones {
  /** principal \0 owner \0 folder \0 name -> the note deleted there; Map order is age order. */
  private readonly kept = new Map<string, Tombstone>();
  private bytes = 0;
  private readonly limits: TombstoneLimits;
  private readonly now: () => number;

  constructor(limits: TombstoneLimits = TOMBSTONES, now: () => number = Date.now) {
    this.limits = limits;
    this.now = now;
  }

  private static key(principal: string, ownerId: string, folderId: string | null, name: string) {
    return [principal, ownerId, folderId ?? "", name].join("\0");
  }

  /** The caller (`principal`) deleted this note. */
  remember(principal: string, snapshot: FileSnapshot): void {
    const { owner_id, folder_id, name } = snapshot.file;
    if (snapshot.bytes > this.limits.bytes) return;
    const key = ServiceTombstones.key(principal, owner_id, folder_id, name);
    this.drop(key);
    this.kept.set(key, { snapshot, at: this.now() });
    this.bytes += snapshot.bytes;
    this.expire();
    while (this.kept.size > this.limits.count || this.bytes > this.limits.bytes)
      this.drop(this.kept.keys().next().value!);
  }

  /** The note this caller deleted at that place within the window, taken (a tombstone serves once). */
  take(principal: string, ownerId: string, folderId: string | null, name: string): FileSnapshot | undefined {
    this.expire();
    const key = ServiceTombstones.key(principal, ownerId, folderId, name);
    const found = this.kept.get(key);
    this.drop(key);
    return found?.snapshot;
  }

  get size(): number {
    return this.kept.size;
  }

  private expire(): void {
    const oldest = this.now() - this.limits.ttlMs;
    for (const [key, t] of this.kept) {
      if (t.at > oldest) break;
      this.drop(key);
    }
  }

  private drop(key: string): void {
    const t = this.kept.get(key);
    if (!t) return;
    this.kept.delete(key);
    this.bytes -= t.snapshot.bytes;
  }
}

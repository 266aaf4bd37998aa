// What goes wrong writing the journal on this machine rather than the service: the cache dir's
// disk full or read-only. Remembered by the journal for `txtfs status` and `sync`.
import { statfsSync } from "node:fs";

/** Why the journal could not be written on this machine: `code` is the errno (ENOSPC, EROFS, …). */
export interface JournalFault {
  code: string;
  message: string;
  /** The cache dir. */
  path: string;
  since: string;
}

/** Free space on the cache dir's disk from which a full disk counts as having room again. */
export const ROOM_AGAIN_BYTES = 8 * 1024 * 1024;

export function freeBytes(dir: string): number {
  try {
    const s = statfsSync(dir);
    return s.bavail * s.bsize;
  } catch {
    return 0;
  }
}

/** A cache dir the daemon cannot write: said at start, with what to do. */
export function unwritable(cacheDir: string, err: unknown): Error {
  const code = (err as NodeJS.ErrnoException).code ?? "EIO";
  const why = code === "EROFS" ? "is read-only" : `cannot be written (${code})`;
  return Object.assign(
    new Error(
      `the cache dir ${cacheDir} ${why}: saves could not be kept there until they reach the service; make it writable, or mount with --cache-dir on a writable disk (nothing in it was changed)`,
    ),
    { code },
  );
}

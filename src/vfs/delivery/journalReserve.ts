// Disk space held back for the journal's own bookkeeping (journal/reserve, a file of zeros), so
// that delivering what is journalled never needs space the disk does not have: a save that fills
// the disk is refused (ENOSPC) while this space stays held, and the records a delivery writes (the
// bulk request on its way, each entry's removal) may take it. It grows with what is pending, since
// each pending entry's removal is a record to come.
import { closeSync, constants, fstatSync, ftruncateSync, openSync, writeSync } from "node:fs";

/** Held for any delivery round (its bulk request's record), and for each pending entry (its removal). */
export const RESERVE_BASE_BYTES = 64 * 1024;
export const RESERVE_PER_ENTRY_BYTES = 512;

const CHUNK = Buffer.alloc(64 * 1024);

export const reserveFor = (entries: number) => RESERVE_BASE_BYTES + RESERVE_PER_ENTRY_BYTES * entries;

export class JournalReserve {
  private readonly file: string;
  private fd: number | undefined;
  private bytes = 0;

  constructor(file: string) {
    this.file = file;
  }

  /** Bytes held now. */
  get held(): number {
    return this.bytes;
  }

  /**
   * Holds exactly `target` bytes: grows (writing zeros, so the blocks are allocated) or gives back
   * what is no longer needed. False when the disk has no room for all of it (what fitted is held).
   */
  hold(target: number): boolean {
    this.fd ??= openSync(this.file, constants.O_RDWR | constants.O_CREAT, 0o600);
    if (this.bytes === 0) this.bytes = fstatSync(this.fd).size; // left by an earlier daemon
    if (this.bytes > target) {
      ftruncateSync(this.fd, target);
      this.bytes = target;
      return true;
    }
    while (this.bytes < target) {
      let n = 0;
      try {
        n = writeSync(this.fd, CHUNK, 0, Math.min(CHUNK.length, target - this.bytes), this.bytes);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "ENOSPC") throw err;
      }
      if (n <= 0) {
        // A short write leaves the file at what was written (tmpfs: whole pages).
        this.bytes = fstatSync(this.fd).size;
        return false;
      }
      this.bytes += n;
    }
    return true;
  }

  /** Gives everything back, for a bookkeeping record that found the disk full. */
  release(): void {
    if (this.fd === undefined) return;
    ftruncateSync(this.fd, 0);
    this.bytes = 0;
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

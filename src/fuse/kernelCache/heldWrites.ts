// Writes C answered before JavaScript saw them (native/fuse3/held.c), applied here in the order
// they were answered, and what failed of them reported at the handle's next flush or fsync.
import { constants } from "node:os";
import type { Logger } from "../../lib/logger.ts";
import type { Vfs } from "../../vfs/vfs.ts";
import { errnoOf } from "../errno.ts";
import type { NodeTable } from "./nodes.ts";

const { EFBIG } = constants.errno;

/** The most bytes held in C at once: a 1 MB note written in 128 KiB pieces crosses once. */
export const HELD_WRITES_MAX_BYTES = 1024 * 1024;

export class HeldWrites {
  private readonly vfs: Pick<Vfs, "write">;
  private readonly nodes: NodeTable;
  private readonly log: Logger;
  /** Told before each write lands: the kernel dropped the note's size and times itself. */
  private readonly written: (ino: number) => void;
  /** Held writes a handle's next flush or fsync must report failed (the unforeseen only). */
  private readonly failed = new Map<number, number>();
  /**
   * The last handed-over write's application: every request that came after it waits for it (C
   * hands them over first; the vfs applies a write after a turn of its own, hence the wait).
   */
  private landing: Promise<void> | undefined;

  constructor(vfs: Pick<Vfs, "write">, nodes: NodeTable, log: Logger, written: (ino: number) => void) {
    this.vfs = vfs;
    this.nodes = nodes;
    this.log = log;
    this.written = written;
  }

  /** What requests must wait for before they start; undefined: nothing (the usual case). */
  get pending(): Promise<void> | undefined {
    return this.landing;
  }

  /** Once the writes handed over so far were applied. */
  landed(): Promise<void> {
    return this.landing ?? Promise.resolve();
  }

  /** C handed over a write it answered: applied after those before it. */
  apply(ino: number, fh: number, data: Buffer, offset: number): void {
    const apply = async () => {
      this.written(ino);
      try {
        // Only the largest note cuts a write short (an append the kernel's stale size let by).
        if ((await this.vfs.write(fh, data, offset)) !== data.length) this.failed.set(fh, EFBIG);
      } catch (err) {
        // The program is told why at its next fsync or close: EFBIG past the largest note, not EIO.
        this.failed.set(fh, errnoOf(err, this.log, "write (held in C)", this.nodes.pathOf(ino)));
      }
    };
    const done = (this.landing ?? Promise.resolve()).then(apply);
    this.landing = done;
    done.finally(() => {
      if (this.landing === done) this.landing = undefined;
    });
  }

  /** The errno the handle's flush or fsync answers for its held writes (0: none failed), once. */
  takeFailure(fh: number): number {
    const errno = this.failed.get(fh) ?? 0;
    this.failed.delete(fh);
    return errno;
  }

  /** The handle was released: what failed of it has nobody left to tell. */
  released(fh: number): void {
    this.failed.delete(fh);
  }
}

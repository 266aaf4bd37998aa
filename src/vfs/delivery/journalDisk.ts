// What this machine's disk allows the journal: the reserve held back so that delivering never
// needs new disk space (journalReserve.ts), and the last failure to write on it (a full disk, a
// read-only one), kept for `txtfs status` and `sync` until a write succeeds again.
import { journalReserveFile } from "../../lib/journalFiles.ts";
import { type Clock, isoNow, systemClock } from "../clock.ts";
import { freeBytes, type JournalFault, ROOM_AGAIN_BYTES } from "./journalFaults.ts";
import { JournalReserve, reserveFor } from "./journalReserve.ts";

export class JournalDisk {
  private readonly cacheDir: string;
  /** How many entries are pending: the reserve is held for their removals. */
  private readonly pendingCount: () => number;
  /** Space held back so that delivering never needs new disk space. */
  private readonly reserve: JournalReserve;
  /** The last failure to write the journal on this machine, until a write succeeds again. */
  private localFault: JournalFault | undefined;

  private readonly clock: Clock;

  constructor(cacheDir: string, pendingCount: () => number, clock: Clock = systemClock) {
    this.cacheDir = cacheDir;
    this.clock = clock;
    this.pendingCount = pendingCount;
    this.reserve = new JournalReserve(journalReserveFile(cacheDir));
  }

  /** Why the journal cannot be written right now, if it cannot. */
  fault(): JournalFault | undefined {
    // Space freed since (by the user, or elsewhere on that disk): said so once there is room.
    if (this.localFault?.code === "ENOSPC" && freeBytes(this.cacheDir) >= ROOM_AGAIN_BYTES)
      this.localFault = undefined;
    return this.localFault;
  }

  /** A write of the journal succeeded: whatever failed before is over. */
  wrote(): void {
    this.localFault = undefined;
  }

  /** Remembers a failure to write on this machine (for `txtfs status` and `sync`); returns it. */
  failed(err: unknown): unknown {
    const code = (err as NodeJS.ErrnoException).code ?? "EIO";
    const message =
      code === "ENOSPC"
        ? "the cache dir's disk is full"
        : code === "EROFS"
          ? "the cache dir is read-only"
          : (err as Error).message;
    if (this.localFault?.code !== code)
      this.localFault = { code, message, path: this.cacheDir, since: isoNow(this.clock) };
    return err;
  }

  /**
   * A write of the journal's own (a delivery's records): on a full disk it takes the reserve and
   * is tried once more; the reserve is held again as far as the disk allows.
   */
  bookkeeping(write: () => void): void {
    try {
      write();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOSPC") throw this.failed(err);
      this.reserve.release();
      try {
        write();
      } catch (again) {
        throw this.failed(again);
      } finally {
        this.hold(false);
      }
    }
  }

  /**
   * Holds the reserve for `entries` pending. `strict` (before a save): a disk without room for it
   * refuses the save with ENOSPC; otherwise as much as fits is held.
   */
  hold(strict: boolean, entries = this.pendingCount()): void {
    let whole = false;
    try {
      whole = this.reserve.hold(reserveFor(entries));
    } catch (err) {
      if (strict) throw this.failed(err);
      this.failed(err);
      return;
    }
    if (whole) {
      if (this.localFault?.code === "ENOSPC") this.localFault = undefined; // room again
      return;
    }
    const full = Object.assign(new Error("the cache dir's disk is full"), { code: "ENOSPC" });
    this.failed(full);
    if (strict) throw full;
  }

  close(): void {
    this.reserve.close();
  }
}

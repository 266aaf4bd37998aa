// The mount daemon's side of src/lib/refusedSaves.ts: what the service refused, kept in the cache
// dir for the CLI — the `.unsent` copies still there (rewritten when that changes), and, when the
// daemon stops, the refusals that kept nothing and that no `txtfs sync` reported yet.
import type { Logger } from "../lib/logger.ts";
import {
  addUnreportedRefusals,
  type Refusal,
  readUnsentCopies,
  stillKept,
  type UnsentCopy,
  writeUnsentCopies,
} from "../lib/refusedSaves.ts";

/** What the daemon's filesystem tells of its refusals (src/vfs/vfs.ts). */
export interface RefusalSource {
  readonly refused: readonly { path: string; reason: string; keptAs?: string; at: string }[];
  takeRefused(): { path: string; reason: string; keptAs?: string; at: string }[];
  localOnly(): { path: string }[];
}

export class RefusalRecords {
  private readonly cacheDir: string;
  private readonly vfs: RefusalSource;
  private readonly log: Logger;
  private unsent: UnsentCopy[];

  /** Made once the filesystem has loaded its local files: a copy is known by being one of them. */
  constructor(cacheDir: string, vfs: RefusalSource, log: Logger) {
    this.cacheDir = cacheDir;
    this.vfs = vfs;
    this.log = log;
    this.unsent = readUnsentCopies(cacheDir);
  }

  /** The copies still kept, from earlier mounts too; recorded again when that changed. */
  kept(): UnsentCopy[] {
    const now = stillKept(this.unsent, this.vfs.refused, new Set(this.vfs.localOnly().map((l) => l.path)));
    if (JSON.stringify(now) !== JSON.stringify(this.unsent)) {
      try {
        writeUnsentCopies(this.cacheDir, now);
      } catch (err) {
        this.log.error(
          { err: (err as Error).message },
          "could not record the refused saves kept as local copies",
        );
      }
    }
    this.unsent = now;
    return now;
  }

  /**
   * The daemon stops (its last delivery done): the copies are recorded, and so are the refusals
   * that kept nothing not reported yet, for `txtfs unmount` or the next `txtfs sync`. Returns those.
   */
  atStop(): Refusal[] {
    this.kept();
    const refusals = this.vfs
      .takeRefused()
      .filter((r) => !r.keptAs)
      .map(({ path, reason, at }) => ({ path, reason, at }));
    try {
      addUnreportedRefusals(this.cacheDir, refusals);
    } catch (err) {
      this.log.error({ err: (err as Error).message, refusals }, "could not record the refused changes");
    }
    return refusals;
  }
}

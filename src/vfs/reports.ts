// What the mount has to tell its user beyond errno: saves the service refused for good, metadata
// writes refused (EINVAL), and whether the service can be reached. `txtfs sync` and `txtfs status`
// read them; each is logged once when it happens.
import type { Logger } from "../lib/logger.ts";
import { BoundedMap } from "./boundedMap.ts";
import { type Clock, isoNow, systemClock } from "./clock.ts";
import { VfsError } from "./errors.ts";

export interface RefusedSave {
  path: string;
  reason: string;
  /** The local file its bytes were kept in. */
  keptAs?: string;
  at: string;
}

export class Reports {
  private readonly log: Logger;
  /** Saves the service refused for good (newest last, bounded), and those `txtfs sync` has not reported yet. */
  readonly refused: RefusedSave[] = [];
  unreported: RefusedSave[] = [];
  /** The last metadata write refused per path (a sidecar or xattr value breaking a rule). */
  readonly refusedMeta = new BoundedMap<string, { reason: string; at: string }>(100);
  /** Since when the service cannot be reached (ms; undefined while it answers). */
  unreachableSince: number | undefined;

  private readonly clock: Clock;

  constructor(log: Logger, clock: Clock = systemClock) {
    this.log = log;
    this.clock = clock;
  }

  saveRefused(save: RefusedSave): void {
    for (const list of [this.refused, this.unreported]) {
      list.push(save);
      if (list.length > 100) list.shift();
    }
  }

  /**
   * A sidecar or xattr write refused with EINVAL (a bad value) or EPERM (a tag the note's text
   * declares): logged with its reason, kept for `txtfs status`.
   */
  metadataRefused(path: string, err: unknown): void {
    if (!(err instanceof VfsError) || (err.errno !== "EINVAL" && err.errno !== "EPERM")) return;
    const reason = err.message === err.errno ? "not an accepted value" : err.message;
    this.log.warn({ path, reason, errno: err.errno }, "metadata write refused; nothing was changed");
    this.refusedMeta.delete(path); // the newest last
    this.refusedMeta.set(path, { reason, at: isoNow(this.clock) });
  }

  /** Whether the service answered (the change feed, a delivery): a change either way is logged once. */
  reachability(reachable: boolean): void {
    if (reachable && this.unreachableSince !== undefined) {
      this.log.info(
        { since: new Date(this.unreachableSince).toISOString() },
        "the service is reachable again",
      );
      this.unreachableSince = undefined;
    } else if (!reachable && this.unreachableSince === undefined) {
      this.unreachableSince = this.clock.now();
      this.log.warn("the service is unreachable; saves are kept in the journal until it returns");
    }
  }
}

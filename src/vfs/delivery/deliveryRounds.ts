// When the journal's delivery rounds go, one at a time: saves gather for a moment, a burst starts
// at once, young deletes and attachments wait out their grace, sync, fsync, unmount and settle drain.
import type { VfsCore } from "../core.ts";
import { fail } from "../errors.ts";
import type { Node } from "../tree.ts";
import { BULK_ITEMS } from "./bulk.ts";
import type { JournalEntry } from "./journal.ts";
import { dirKey, journalKey } from "./journalKeys.ts";
import type { RunningRound } from "./runningRound.ts";
import { Unanswered, whileAnswering } from "./whileAnswering.ts";

const DELIVERY_QUIET_MS = 20;

const DELIVERY_MAX_WAIT_MS = 1000;

/**
 * Saves waiting that make a burst: a round starts at once (right after the one on its way), so a
 * long burst goes up while it goes on and an unmount or `txtfs sync` right after has at most about
 * this much left. A full bulk request: smaller rounds take the daemon's time from the burst's own
 * FUSE calls (docs/benchmarks.md).
 */
const BURST_ITEMS = BULK_ITEMS;

/**
 * A note's delete waits this long in the journal before a delivery takes it (`txtfs sync`, fsync
 * and unmount take it at once): a create of the same path before then calls it off and the note
 * continues (tar -x, git checkout: unlink, then create a moment later). Without it a delivery that
 * happened to start between the two would send the delete, and the note would come back as a new
 * one (new id, no tags, no history).
 */
const DELETE_GRACE_MS = 200;

/**
 * A new attachment's create waits this long (sync, fsync and unmount take it at once): the temp
 * files of rsync and sed, renamed to a note's name right after their close, never go up.
 */
const ATTACHMENT_CREATE_GRACE_MS = 1000;

/** The parts rounds call: what the running round took, and the round itself (journalReplay.ts). */
export interface DeliveryRoundsParts {
  round: Pick<RunningRound, "size">;
  /** One round: false when it stopped because the service is unreachable. */
  replay: () => Promise<boolean>;
}

export type DeliveryRoundsCore = Pick<
  VfsCore,
  "client" | "clock" | "journal" | "log" | "reports" | "stopped"
>;

/**
 * Whether `e` was saved less than `graceMs` ago. One saved "later" than now by more than the grace
 * was stamped by a clock that has since been set back (NTP, a resumed VM): it is old enough, not
 * held until that clock catches up (an hour set back would hold the journal behind it an hour).
 */
function inGrace(e: JournalEntry, graceMs: number, now: number): boolean {
  const saved = Date.parse(e.savedAt);
  return saved + graceMs > now && saved <= now + graceMs;
}

/**
 * How long a round still waits for what it left "until" `until` (its time stamped plus `graceMs`):
 * none once that time passed, and none when the clock was set back since by more than the grace
 * (the entry is old enough then: inGrace, whose young entries are those `until` at most two graces
 * ahead). Taken as it was, a clock set back ten minutes while a delete waited for its grace made
 * the next round wait ten minutes, and every save behind it too.
 */
function heldFor(until: number | undefined, graceMs: number, now: number): number {
  if (until === undefined) return 0;
  const ms = until - now;
  return ms > 0 && ms <= 2 * graceMs ? ms : 0;
}

export class DeliveryRounds {
  private readonly c: DeliveryRoundsCore;
  private readonly round: DeliveryRoundsParts["round"];
  private readonly replay: DeliveryRoundsParts["replay"];

  constructor(c: DeliveryRoundsCore, parts: DeliveryRoundsParts) {
    this.c = c;
    this.round = parts.round;
    this.replay = parts.replay;
  }

  /** Whether `txtfs sync`, fsync, unmount or settle waits for the journal (bulk requests then carry more). */
  get drainWaiting(): boolean {
    return this.draining > 0;
  }

  /** The daemon is stopping: no delivery is started any more. */
  stopTimers(): void {
    clearTimeout(this.replayTimer);
    clearImmediate(this.burstStart);
  }

  /** The journal's next delivery: saves gathering (deliverSoon), or a retry while unreachable. */
  private replayTimer: NodeJS.Timeout | undefined;
  /** The next round of a burst, right after the operation that made it one (deliverSoon). */
  private burstStart: NodeJS.Immediate | undefined;
  /** When the first save still gathering for the next delivery was made. */
  private gatheringSince: number | undefined;
  /** The running delivery of the journal (one at a time), and whether saves arrived while it ran. */
  private replaying: Promise<void> | undefined;
  private replayAgain = false;
  private unreachable = false;
  /** When the deletes a round left for their grace (DELETE_GRACE_MS) may go. */
  private heldUntil: number | undefined;
  /** When the attachments' creates a round left for their grace (ATTACHMENT_CREATE_GRACE_MS) may go. */
  private createsHeldUntil: number | undefined;
  /** `txtfs sync`, fsync, unmount or settle is waiting: rounds take every entry, young deletes too. */
  private draining = 0;

  /**
   * What a delivery round takes: the journal in order, up to the first delete still in its grace
   * (the rest waits for it, so the service sees everything in the order it was done).
   */
  takeRound(): JournalEntry[] {
    const pending = this.c.journal.pending();
    this.heldUntil = this.createsHeldUntil = undefined;
    if (this.draining) return pending;
    const now = this.c.clock.now();
    const young = pending.findIndex((e) => e.delete === "file" && inGrace(e, DELETE_GRACE_MS, now));
    if (young >= 0) this.heldUntil = Date.parse(pending[young]!.savedAt) + DELETE_GRACE_MS;
    const taken = young < 0 ? pending : pending.slice(0, young);
    // A file that is not a note, made a moment ago, waits (without holding up the rest): a temp
    // file renamed to a note's name right after it is closed (rsync's `.name.XXXXXX`, sed's
    // `sedXXXXXX`) then never goes up as an attachment.
    return taken.filter((e) => {
      if (!e.attachment || e.fileId || e.delete || !inGrace(e, ATTACHMENT_CREATE_GRACE_MS, now)) return true;
      const until = Date.parse(e.savedAt) + ATTACHMENT_CREATE_GRACE_MS;
      this.createsHeldUntil = Math.min(this.createsHeldUntil ?? until, until);
      return false;
    });
  }

  /**
   * Saves gather for a moment before they are delivered, so a burst (a shell loop, `cp -r`, a
   * build) goes up in a few bulk requests instead of one each, and `echo x > note` (truncate,
   * flush, write, flush) never sends its empty step. Delivery starts once no save came for
   * DELIVERY_QUIET_MS, at the latest DELIVERY_MAX_WAIT_MS after the first one waiting, or as soon
   * as BURST_ITEMS are waiting; fsync(2), `txtfs sync`, unmount and operations that need a note
   * on the service (settle) deliver at once.
   * While the service is unreachable, its retry timer does.
   */
  deliverSoon(): void {
    if (this.unreachable) return;
    const now = this.c.clock.now();
    // A round now would stop at the delete the last one left for its grace (rm -rf: each unlink
    // would start a round that takes nothing).
    const heldMs = heldFor(this.heldUntil, DELETE_GRACE_MS, now);
    const held = heldMs > 0;
    // What the running round took stays in the journal until answered: it is not waiting.
    if (this.c.journal.size - this.round.size >= BURST_ITEMS && !held) {
      // A burst: the round starts once this operation is done, or right after the one on its
      // way. Not on a timer, which each save of the burst would put off again (saves less than a
      // millisecond apart: due timers run only between them, and never did in a fast loop).
      clearTimeout(this.replayTimer);
      this.replayTimer = undefined;
      this.gatheringSince = undefined;
      if (!this.burstStart)
        this.burstStart = setImmediate(() => {
          this.burstStart = undefined;
          void this.deliver();
        });
      return;
    }
    this.gatheringSince ??= now;
    const wait = Math.max(
      Math.min(DELIVERY_QUIET_MS, this.gatheringSince + DELIVERY_MAX_WAIT_MS - now),
      heldMs,
    );
    clearTimeout(this.replayTimer);
    this.replayTimer = setTimeout(
      () => {
        this.replayTimer = undefined;
        this.gatheringSince = undefined;
        void this.deliver();
      },
      Math.max(0, wait),
    );
    this.replayTimer.unref();
  }

  /** A round in `delayMs`, unless one is due already. */
  private scheduleReplay(delayMs: number): void {
    if (this.replayTimer || this.c.stopped) return;
    this.replayTimer = setTimeout(() => {
      this.replayTimer = undefined;
      void this.deliver();
    }, delayMs);
    this.replayTimer.unref();
  }

  /**
   * Delivers the journal (one delivery at a time; saves arriving while it runs are taken along).
   * Resolves when it is empty or the service is unreachable (then it retries every 2 s).
   */
  deliver(): Promise<void> {
    if (this.replaying) {
      this.replayAgain = true;
      return this.replaying;
    }
    const run = async () => {
      do {
        this.replayAgain = false;
        let delivered: boolean;
        try {
          delivered = await this.replay();
          if (!delivered) this.c.reports.reachability(false);
        } catch (err) {
          // Not the service but this machine: the cache dir's disk full, or the dir removed. What
          // is pending stays in the journal (and in memory); the round is tried again as while the
          // service is unreachable, and the daemon goes on (a rejection nobody awaited ended it).
          this.c.log.error({ err: (err as Error).message }, "delivery failed here; trying again in 2 s");
          delivered = false;
        }
        this.unreachable = !delivered;
      } while (this.replayAgain && !this.unreachable);
      if (this.unreachable) this.scheduleReplay(2000);
      else if (this.heldUntil !== undefined || this.createsHeldUntil !== undefined) {
        const now = this.c.clock.now();
        const waits = [
          ...(this.heldUntil !== undefined ? [heldFor(this.heldUntil, DELETE_GRACE_MS, now)] : []),
          ...(this.createsHeldUntil !== undefined
            ? [heldFor(this.createsHeldUntil, ATTACHMENT_CREATE_GRACE_MS, now)]
            : []),
        ];
        this.scheduleReplay(Math.min(...waits));
      }
    };
    this.replaying = run().finally(() => {
      this.replaying = undefined;
    });
    return this.replaying;
  }

  /**
   * Waits until every save is on the service, or the service is found unreachable. Returns the
   * number of saves still journalled (`txtfs sync`, fsync, unmount).
   */
  async drain(): Promise<number> {
    this.draining++;
    try {
      while (this.replaying || this.c.journal.size > 0) {
        await (this.replaying ?? this.deliver());
        if (this.unreachable) break;
      }
    } finally {
      this.draining--;
    }
    return this.c.journal.size;
  }

  /**
   * Remote operations on a note (rename, delete, metadata) come after its journalled save, or a
   * note still being created would be renamed or deleted before it exists.
   */
  async settle(node: Node | undefined): Promise<void> {
    const key =
      node?.kind === "file"
        ? journalKey(node)
        : node?.kind === "dir" && node.createKey
          ? dirKey(node)
          : undefined;
    if (!key || !this.c.journal.get(key)) return;
    // Into a black-holed link the round waits a write's deadline (a minute): a program is told
    // EIO once the service was silent for a read deadline, and the save goes on in the journal.
    const drained = this.drain();
    try {
      await whileAnswering(drained, this.c.client);
    } catch (err) {
      if (!(err instanceof Unanswered)) throw err;
      void drained.catch(() => {}); // its outcome is the journal's (delivered, or tried again)
      throw fail("EIO", `${err.message} and this item's change is still on its way`);
    }
    if (this.c.journal.get(key))
      throw fail("EIO", "the service is unreachable and this item's change is still on its way");
  }

  /** Every write-behind save is delivered through the journal: only a catch-up is worth an info line. */
  logDelivered(path: string, msg: string): void {
    if (this.unreachable) this.c.log.info({ path }, msg);
    else this.c.log.debug({ path }, msg);
  }

  /** Something a round did lets more go (a folder made: what waited for it): another round follows. */
  roundAgain(): void {
    this.replayAgain = true;
  }
}

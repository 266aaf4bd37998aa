// What the running delivery round took: any of it may reach the service any moment, so it is not
// ours to change until answered. The feed's deletes of what its creates made wait here for it.
import type { ChangeRecord } from "../../client/api.ts";
import type { VfsCore } from "../core.ts";
import type { Bulk } from "./bulk.ts";
import { Journal, type JournalEntry } from "./journal.ts";

export type RunningRoundCore = Pick<VfsCore, "follower" | "journal">;

export class RunningRound {
  private readonly c: RunningRoundCore;
  /** Keys of the journal entries the running round took (undefined: no round runs). */
  private taken: Set<string> | undefined;
  /** Feed deletes of notes and folders our creates made, come before their answers: applied once the round is over. */
  private deletedMeanwhile: ChangeRecord[] = [];

  constructor(c: RunningRoundCore) {
    this.c = c;
  }

  /**
   * Whether the journal entry `key` may be on its way to the service right now (then it is not ours
   * to change). An entry made after the running round started is not: the round never takes it.
   */
  onItsWay(key: string): boolean {
    return (
      this.taken?.has(key) === true ||
      this.c.journal.inflightBulk<Bulk>()?.items.some((i) => i.key === key) === true
    );
  }

  /** Whether the running delivery round took the journal entry `key` (its answer may come any moment). */
  inRound(key: string): boolean {
    return this.taken?.has(key) === true;
  }

  /** How many entries the running round took: they stay in the journal until answered, not waiting. */
  get size(): number {
    return this.taken?.size ?? 0;
  }

  /** A round starts with what it took. */
  begin(taken: JournalEntry[]): void {
    this.taken = new Set(taken.map((e) => Journal.keyOf(e)));
  }

  /** The round is over: nothing of its creates is on its way now, so the deletes that waited apply. */
  end(): void {
    this.taken = undefined;
    // A note is removed, or its newer save creates it again.
    for (const change of this.deletedMeanwhile.splice(0)) this.c.follower.apply(change);
  }

  /** A create of ours was answered: a feed delete of what it made, come before, waits for the round's end. */
  noteDeletedMeanwhile(id: string): void {
    const change = this.c.follower.takeDeleteOf(id);
    if (change) this.deletedMeanwhile.push(change);
  }
}

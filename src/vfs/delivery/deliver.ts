// The journal's delivery, as the rest of the vfs calls it: saves journalled, rounds started, drained
// and settled. Built here from its parts, one concern each (the files named beside each field).
import type { TxtFile } from "../../lib/apiTypes.ts";
import type { AttachmentDelivery } from "../attachments/attachmentDelivery.ts";
import type { Base } from "../base.ts";
import type { Conflicts } from "../conflicts.ts";
import type { Claims } from "../local/claims.ts";
import type { Attributes } from "../meta/attributes.ts";
import type { Renames } from "../namespace/renames.ts";
import type { FileNode, Node } from "../tree.ts";
import { BulkDelivery, type BulkDeliveryCore } from "./bulkDelivery.ts";
import { Deletes, type DeletesCore } from "./deletes.ts";
import { DeliveryRounds, type DeliveryRoundsCore } from "./deliveryRounds.ts";
import { FolderDelivery, type FolderDeliveryCore } from "./folderDelivery.ts";
import type { JournalEntry } from "./journal.ts";
import { JournalReplay, type JournalReplayCore } from "./journalReplay.ts";
import { JournalSaves, type JournalSavesCore } from "./journalSaves.ts";
import { NoteSend, type NoteSendCore } from "./noteSend.ts";
import { type RestoreCore, restoreJournal } from "./restoreJournal.ts";
import { RunningRound, type RunningRoundCore } from "./runningRound.ts";

/** The parts delivery calls: conflicts met, times and folders kept, tombstones, local placing. */
export interface DeliveryParts {
  attributes: Pick<Attributes, "keepFolderAttrs" | "rememberTimes" | "showRemoteVersion">;
  claims: Pick<Claims, "created" | "dropTombstone">;
  conflicts: Pick<Conflicts, "afterPreconditionFailed" | "ownSuccessor" | "replaced">;
  renames: Pick<Renames, "placeLocally">;
  /** Files that are not notes: their entries go on their own (attachments/attachmentDelivery.ts). */
  attachments: Pick<AttachmentDelivery, "send">;
}

/** What delivery uses of the mount's shared state: what its parts use. */
export type DeliveryCore = BulkDeliveryCore &
  DeletesCore &
  DeliveryRoundsCore &
  FolderDeliveryCore &
  JournalReplayCore &
  JournalSavesCore &
  NoteSendCore &
  RestoreCore &
  RunningRoundCore;

export class Delivery {
  private readonly c: DeliveryCore;
  private readonly renames: DeliveryParts["renames"];
  /** What the running round took (runningRound.ts). */
  private readonly round: RunningRound;
  /** When rounds go (deliveryRounds.ts). */
  private readonly rounds: DeliveryRounds;
  /** Saves into the journal (journalSaves.ts). */
  private readonly journalSaves: JournalSaves;
  /** A note's save sent on its own, and its answer (noteSend.ts). */
  private readonly noteSend: NoteSend;
  /** Folders made here (folderDelivery.ts). */
  private readonly folderDelivery: FolderDelivery;
  /** Deletes made here (deletes.ts). */
  private readonly deletes: Deletes;
  /** The journal delivered in bulk (bulkDelivery.ts). */
  private readonly bulk: BulkDelivery;
  /** One round, entry by entry (journalReplay.ts). */
  private readonly replay: JournalReplay;

  /** The rounds run the replay, which is built last (it calls every other part): they reach it by a function. */
  constructor(c: DeliveryCore, parts: DeliveryParts) {
    this.c = c;
    this.renames = parts.renames;
    this.round = new RunningRound(c);
    this.rounds = new DeliveryRounds(c, { round: this.round, replay: () => this.replay.replay() });
    this.journalSaves = new JournalSaves(c, { conflicts: parts.conflicts, rounds: this.rounds });
    this.noteSend = new NoteSend(c, { claims: parts.claims, conflicts: parts.conflicts, round: this.round });
    this.folderDelivery = new FolderDelivery(c, {
      attributes: parts.attributes,
      round: this.round,
      rounds: this.rounds,
    });
    this.deletes = new Deletes(c, {
      claims: parts.claims,
      conflicts: parts.conflicts,
      noteSend: this.noteSend,
      rounds: this.rounds,
    });
    this.bulk = new BulkDelivery(c, {
      attributes: parts.attributes,
      conflicts: parts.conflicts,
      deletes: this.deletes,
      folderDelivery: this.folderDelivery,
      journalSaves: this.journalSaves,
      noteSend: this.noteSend,
      rounds: this.rounds,
    });
    this.replay = new JournalReplay(c, {
      attachments: parts.attachments,
      attributes: parts.attributes,
      bulk: this.bulk,
      deletes: this.deletes,
      folderDelivery: this.folderDelivery,
      noteSend: this.noteSend,
      round: this.round,
      rounds: this.rounds,
    });
  }

  /** The daemon is stopping: no delivery is started any more. */
  stopTimers(): void {
    this.rounds.stopTimers();
  }

  /** Whether the journal entry `key` may be on its way to the service right now (then it is not ours to change). */
  onItsWay(key: string): boolean {
    return this.round.onItsWay(key);
  }

  /** Whether the running delivery round took the journal entry `key` (its answer may come any moment). */
  inRound(key: string): boolean {
    return this.round.inRound(key);
  }

  /** Records a save of `node` in the journal and shows it at once (journalSaves.ts). */
  journalSave(node: FileNode, content: Buffer, given: Base): Promise<void> {
    return this.journalSaves.journalSave(node, content, given);
  }

  /** Records bytes appended to `node` without its body: sent as `file.append`. */
  journalAppend(node: FileNode, tail: Buffer): Promise<void> {
    return this.journalSaves.journalAppend(node, tail);
  }

  /** One note's content to the service now, and the body it has after the answer (noteSend.ts). */
  send(
    node: FileNode,
    content: string | undefined,
    given: Base,
    move?: boolean,
    superseded?: string[],
  ): Promise<{ meta: TxtFile; body: string | undefined }> {
    return this.noteSend.send(node, content, given, move, superseded);
  }

  /** Shows a note as the service has it now. */
  reloadNote(id: string): Promise<void> {
    return this.noteSend.reloadNote(id);
  }

  /** A round soon: saves gather for a moment, a burst goes at once (deliveryRounds.ts). */
  deliverSoon(): void {
    this.rounds.deliverSoon();
  }

  /** Waits until every save is on the service, or it is found unreachable: the saves still journalled. */
  drain(): Promise<number> {
    return this.rounds.drain();
  }

  /** A note's or folder's journalled change is delivered before a remote operation on it. */
  settle(node: Node | undefined): Promise<void> {
    return this.rounds.settle(node);
  }

  /** After a restart: show journalled writes in the tree right away (restoreJournal.ts), then deliver them. */
  restoreJournal(entries: JournalEntry[]): void {
    restoreJournal(this.c, this.renames, entries);
    if (entries.length) this.rounds.deliverSoon();
  }
}

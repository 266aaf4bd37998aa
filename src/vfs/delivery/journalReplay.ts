// The journal's delivery round: first in bulk, then what is left one by one in order (attachments,
// deletes, folders, appends, saves), each answer applied; an unreachable service ends the round.
import { ApiError } from "../../client/api.ts";
import type { AttachmentDelivery } from "../attachments/attachmentDelivery.ts";
import { baseOf } from "../base.ts";
import type { VfsCore } from "../core.ts";
import { isTransient } from "../errors.ts";
import type { Attributes } from "../meta/attributes.ts";
import type { BulkDelivery } from "./bulkDelivery.ts";
import type { Deletes } from "./deletes.ts";
import type { DeliveryRounds } from "./deliveryRounds.ts";
import type { FolderDelivery } from "./folderDelivery.ts";
import type { JournalEntry } from "./journal.ts";
import { dirKey, journalKey } from "./journalKeys.ts";
import { landedOnBase } from "./landedOnBase.ts";
import type { NoteSend } from "./noteSend.ts";
import type { RunningRound } from "./runningRound.ts";

/** The parts a round calls: each kind of entry's delivery, the round's bookkeeping, times kept. */
export interface JournalReplayParts {
  /** Files that are not notes: their entries go on their own (attachments/attachmentDelivery.ts). */
  attachments: Pick<AttachmentDelivery, "send">;
  attributes: Pick<Attributes, "rememberTimes" | "showRemoteVersion">;
  bulk: Pick<BulkDelivery, "appendAlone" | "replayInBulk">;
  deletes: Pick<Deletes, "send" | "undone">;
  folderDelivery: Pick<FolderDelivery, "folderRefused" | "sendFolder">;
  noteSend: Pick<NoteSend, "refused" | "renamedButDeleted" | "send">;
  round: Pick<RunningRound, "begin" | "end">;
  rounds: Pick<DeliveryRounds, "logDelivered" | "roundAgain" | "takeRound">;
}

export type JournalReplayCore = Pick<VfsCore, "isPending" | "journal" | "nodeFor" | "notes">;

export class JournalReplay {
  private readonly c: JournalReplayCore;
  private readonly attachments: JournalReplayParts["attachments"];
  private readonly attributes: JournalReplayParts["attributes"];
  private readonly bulk: JournalReplayParts["bulk"];
  private readonly deletes: JournalReplayParts["deletes"];
  private readonly folderDelivery: JournalReplayParts["folderDelivery"];
  private readonly noteSend: JournalReplayParts["noteSend"];
  private readonly round: JournalReplayParts["round"];
  private readonly rounds: JournalReplayParts["rounds"];

  constructor(c: JournalReplayCore, parts: JournalReplayParts) {
    this.c = c;
    this.attachments = parts.attachments;
    this.attributes = parts.attributes;
    this.bulk = parts.bulk;
    this.deletes = parts.deletes;
    this.folderDelivery = parts.folderDelivery;
    this.noteSend = parts.noteSend;
    this.round = parts.round;
    this.rounds = parts.rounds;
  }

  /** Sends journalled writes in order. False when it stopped because the service is unreachable. */
  async replay(): Promise<boolean> {
    const atStart = new Set(this.c.journal.pending());
    const taken = this.rounds.takeRound();
    this.round.begin(taken);
    try {
      return await this.replayRound(new Set(taken), atStart);
    } finally {
      // Nothing of theirs is on its way now: the deletes that came for its creates apply.
      this.round.end();
    }
  }

  private async replayRound(before: Set<JournalEntry>, atStart: Set<JournalEntry>): Promise<boolean> {
    if (!(await this.bulk.replayInBulk(before))) return false;
    for (const entry of this.c.journal.pending()) {
      if (!before.has(entry)) {
        // Saved while the round went: the next round takes it (in bulk, with others). Left for
        // its grace (or behind one): the timer set when the delivery ends does.
        if (!atStart.has(entry)) this.rounds.roundAgain();
        continue;
      }
      if (entry.attachment) {
        if (!(await this.attachments.send(entry))) return false;
        continue;
      }
      if (entry.delete) {
        try {
          await this.deletes.send(entry);
        } catch (err) {
          if (isTransient(err)) return false;
          await this.deletes.undone(entry, (err as Error).message);
        }
        continue;
      }
      if (entry.folder) {
        try {
          await this.folderDelivery.sendFolder(entry);
        } catch (err) {
          if (isTransient(err)) return false;
          await this.folderDelivery.folderRefused(entry, err);
        }
        continue;
      }
      if (entry.append && !entry.move) {
        if (!(await this.bulk.appendAlone(entry))) return false;
        continue;
      }
      const node = this.c.nodeFor(entry);
      // Its folder, made here, is created first (later this round; then another round follows).
      if (this.c.isPending(node.parent) && this.c.journal.get(dirKey(node.parent))) continue;
      try {
        const base = entry.baseEtag ? { etag: entry.baseEtag, hash: entry.baseHash ?? "" } : null;
        const { meta, body } = await this.noteSend.send(
          node,
          entry.content,
          base,
          entry.move,
          entry.superseded,
        );
        // Kept as a conflict copy: the note is the remote version now. A save made across the
        // send (note.ts: the rule for await) builds on ours, so it keeps our base (and becomes a copy too), never the remote's.
        const kept = body === entry.content;
        // A rename alone lands on whatever content the service has: a save made since (or
        // through a handle open on the note) builds on its version only if that is the content
        // it was based on; else an edit made elsewhere came between, and the save must meet it.
        const ours = kept && (entry.content !== undefined || landedOnBase(meta, base));
        await this.c.journal.done(entry, ours ? meta : undefined);
        const newer = this.c.journal.get(journalKey(node));
        const open = node.note?.open;
        // Files opened before the switch go on with the body they were opened on (the kernel may
        // hold its pages): a write through them builds on it, and becomes a conflict copy too.
        const reattach = open && kept && (entry.content !== undefined || landedOnBase(meta, open.base));
        this.c.notes.of(node).delivered({
          newerWaits: newer !== undefined,
          conflict: !kept,
          landed: reattach ? baseOf(meta) : undefined,
          reattach: true,
        });
        if (!kept && !newer && !open) this.attributes.showRemoteVersion(node);
        this.attributes.rememberTimes(node);
        this.rounds.logDelivered(entry.path, "journalled write delivered");
      } catch (err) {
        if (isTransient(err)) return false;
        if (entry.move && entry.content === undefined && err instanceof ApiError && err.status === 404)
          await this.noteSend.renamedButDeleted(entry, node);
        else await this.noteSend.refused(entry, node, err as Error);
      }
    }
    return true;
  }
}

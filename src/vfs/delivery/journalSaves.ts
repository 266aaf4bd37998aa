// Saves recorded in the journal: shown at once and delivered in order in the background. What an
// entry names (id or create key, name, place, path) is read off the note when it is recorded.
import type { Base } from "../base.ts";
import type { Conflicts } from "../conflicts.ts";
import type { VfsCore } from "../core.ts";
import type { FileNode } from "../tree.ts";
import type { DeliveryRounds } from "./deliveryRounds.ts";

/** The parts journalling calls: our own successor of a base, and the next round. */
export interface JournalSavesParts {
  conflicts: Pick<Conflicts, "ownSuccessor">;
  rounds: Pick<DeliveryRounds, "deliverSoon">;
}

export type JournalSavesCore = Pick<
  VfsCore,
  "attrsChanged" | "journal" | "notes" | "placeOf" | "tree" | "writeBehind"
>;

export class JournalSaves {
  private readonly c: JournalSavesCore;
  private readonly conflicts: JournalSavesParts["conflicts"];
  private readonly rounds: JournalSavesParts["rounds"];

  constructor(c: JournalSavesCore, parts: JournalSavesParts) {
    this.c = c;
    this.conflicts = parts.conflicts;
    this.rounds = parts.rounds;
  }

  /**
   * Records a save of `node` in the journal (the service gets it in order, in the background) and
   * shows it at once. A note continuing a claim (`placeUnsent`) sends its name and folder too.
   */
  async journalSave(node: FileNode, content: Buffer, given: Base): Promise<void> {
    // Built on a version an earlier save of ours replaced: on ours (kept on disk, so a restart
    // still knows; see Conflicts.ownSuccessor).
    const base = node.id ? this.conflicts.ownSuccessor(node.id, given) : given;
    // A copy, now: the open buffer keeps changing (a write while the journal's lock is awaited, or
    // into its spare capacity), and what is shown must be what is journalled.
    const saved = Buffer.from(content);
    await this.c.journal.put(
      {
        ...this.entryOf(node),
        content: content.toString("utf8"),
        baseEtag: base?.etag ?? null,
        baseHash: base?.hash ?? null,
        ...(node.note?.placeUnsent ? { move: true as const } : {}),
      },
      !this.c.writeBehind, // write-behind: fsync(2) makes it durable; write-through: only offline saves land here
    );
    this.c.notes.of(node).journalledSave(saved); // its place went too: later saves of it keep the move
    this.c.attrsChanged(node);
    this.rounds.deliverSoon();
  }

  /** Who a journal entry of `node` is for: its id (or create key), name, place and path. */
  private entryOf(node: FileNode) {
    return {
      fileId: node.id,
      createKey: node.createKey,
      name: node.remoteName,
      ...this.c.placeOf(node.parent),
      path: this.c.tree.pathOf(node),
    };
  }

  /** Records bytes appended to `node` without its body (open/writes.ts, appendBlind): sent as `file.append`. */
  async journalAppend(node: FileNode, tail: Buffer): Promise<void> {
    await this.c.journal.put(
      { ...this.entryOf(node), content: tail.toString("utf8"), append: true, baseEtag: null },
      false,
    );
    this.c.notes.of(node).refreshSize();
    this.rounds.deliverSoon();
  }
}

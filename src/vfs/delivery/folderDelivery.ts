// Folders made here, to the service on their own: the answer binds the folder shown here (and
// what waited for it goes next); a refusal removes it and moves what it holds up a level.
import type { TxtFolder } from "../../lib/apiTypes.ts";
import type { VfsCore } from "../core.ts";
import type { Attributes } from "../meta/attributes.ts";
import { createOnItsWay } from "./createsOnTheirWay.ts";
import type { DeliveryRounds } from "./deliveryRounds.ts";
import { Journal, type JournalEntry } from "./journal.ts";
import type { RunningRound } from "./runningRound.ts";

/** The parts a folder's delivery calls: its attributes kept by id, the round's held deletes, the next round. */
export interface FolderDeliveryParts {
  attributes: Pick<Attributes, "keepFolderAttrs">;
  round: Pick<RunningRound, "noteDeletedMeanwhile">;
  rounds: Pick<DeliveryRounds, "logDelivered" | "roundAgain">;
}

export type FolderDeliveryCore = Pick<
  VfsCore,
  | "client"
  | "createsOnTheirWay"
  | "follower"
  | "isPending"
  | "journal"
  | "log"
  | "pendingDirs"
  | "placeOf"
  | "tree"
  | "unshadowDir"
>;

export class FolderDelivery {
  private readonly c: FolderDeliveryCore;
  private readonly attributes: FolderDeliveryParts["attributes"];
  private readonly round: FolderDeliveryParts["round"];
  private readonly rounds: FolderDeliveryParts["rounds"];

  constructor(c: FolderDeliveryCore, parts: FolderDeliveryParts) {
    this.c = c;
    this.attributes = parts.attributes;
    this.round = parts.round;
    this.rounds = parts.rounds;
  }

  /** A folder made here, to the service on its own (its Idempotency-Key: the create's key). */
  async sendFolder(entry: JournalEntry): Promise<void> {
    const dir = this.c.pendingDirs.get(Journal.keyOf(entry));
    if (!dir?.parent) return this.c.journal.done(entry); // removed here since it was journalled
    if (this.c.isPending(dir.parent)) return; // its own folder first
    const parentFolderId = dir.parent.id;
    await createOnItsWay(this.c, "folder", entry.name, parentFolderId, async () =>
      this.folderMade(
        entry,
        await this.c.client.createFolder({ name: entry.name, parentFolderId }, entry.createKey),
      ),
    );
  }

  /** A folder made here got its id: bound, and kept by it from now on. */
  async folderMade(entry: JournalEntry, folder: TxtFolder): Promise<void> {
    const key = Journal.keyOf(entry);
    const dir = this.c.pendingDirs.get(key);
    this.c.pendingDirs.delete(key);
    if (dir) {
      this.c.tree.bindFolder(dir, folder);
      this.round.noteDeletedMeanwhile(folder.id);
      this.attributes.keepFolderAttrs(dir); // its mode and times, kept by id from now on
      this.c.unshadowDir(dir, folder.id); // as a note does (created)
    }
    await this.c.journal.rebind(key, folder.id);
    await this.c.journal.done(entry);
    this.rounds.roundAgain(); // what waited for it goes next
    this.rounds.logDelivered(entry.path, "folder created");
  }

  /** The service refused a folder made here: it goes, what was put inside moves up a level. */
  async folderRefused(entry: JournalEntry, err: unknown): Promise<void> {
    this.c.log.error({ err, path: entry.path }, "folder create refused; what is inside moves up a level");
    const key = Journal.keyOf(entry);
    const dir = this.c.pendingDirs.get(key);
    this.c.pendingDirs.delete(key);
    await this.c.journal.done(entry);
    if (!dir?.parent) return;
    const up = this.c.placeOf(dir.parent);
    this.c.tree.removeDir(dir);
    this.c.unshadowDir(dir);
    await this.c.journal.rebind(key, up.folderId, up.parentKey);
  }
}

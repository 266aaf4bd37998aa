// An attachment's journal entry, to the service on its own, in journal order: a create (its
// Idempotency-Key: the create's key), new bytes (If-Match the version they build on), a rename or
// move, a delete (If-Match). A 412, 404 or 409 keeps both (attachmentClashes.ts). A refusal
// for good (a limit, a name the service holds for a note) leaves the file here, said in `txtfs
// status` and `sync`, as a refused note save is.
import { ApiError, madeBefore } from "../../client/api.ts";
import type { TxtAttachment } from "../../lib/apiTypes.ts";
import { isoNow } from "../clock.ts";
import type { VfsCore } from "../core.ts";
import { Journal, type JournalEntry } from "../delivery/journal.ts";
import { isTransient } from "../errors.ts";
import type { LocalNode } from "../tree.ts";
import type { AttachmentBytes } from "./attachmentBytes.ts";
import { AttachmentClashes } from "./attachmentClashes.ts";
import { type AttachmentPlaces, folderIdOf } from "./attachmentPlaces.ts";
import type { AttachmentQuota } from "./attachmentQuota.ts";
import type { AttachmentSaves } from "./attachmentSaves.ts";
import { boundTo } from "./binding.ts";

export type AttachmentDeliveryCore = Pick<
  VfsCore,
  | "client"
  | "clock"
  | "conflictCopies"
  | "handles"
  | "isPending"
  | "journal"
  | "localNodes"
  | "log"
  | "reports"
  | "tree"
>;

/** Done with: `true`; the service could not be reached (try again later): `false`. */
type Sent = boolean;

export class AttachmentDelivery {
  private readonly c: AttachmentDeliveryCore;
  private readonly places: AttachmentPlaces;
  private readonly saves: AttachmentSaves;
  private readonly quota: AttachmentQuota;
  private readonly clashes: AttachmentClashes;

  constructor(
    c: AttachmentDeliveryCore,
    places: AttachmentPlaces,
    bytes: AttachmentBytes,
    saves: AttachmentSaves,
    quota: AttachmentQuota,
  ) {
    this.c = c;
    this.places = places;
    this.saves = saves;
    this.quota = quota;
    this.clashes = new AttachmentClashes(c, places, bytes, saves, quota);
  }

  async send(entry: JournalEntry): Promise<Sent> {
    // Sent already, ahead of its turn (it freed a name an earlier entry takes: `freeName`).
    if (this.c.journal.get(Journal.keyOf(entry))?.seq !== entry.seq) return true;
    // Its folder, made here, goes first (its entry is earlier in line; then `rebind` fills in its id).
    if (entry.parentKey && this.c.journal.get(entry.parentKey)) return true;
    try {
      if (entry.delete) await this.sendDelete(entry);
      else {
        if (!(await this.freeName(entry))) return false;
        await this.sendSave(entry);
      }
      return true;
    } catch (err) {
      if (isTransient(err)) return false;
      await this.refused(entry, err as Error);
      return true;
    }
  }

  /**
   * A file renamed (or made and renamed) over another attachment: the move joins its file's entry,
   * which is earlier in line than the replaced file's delete. That delete goes first, or the
   * service refuses the name as taken.
   */
  private async freeName(entry: JournalEntry): Promise<Sent> {
    const key = Journal.keyOf(entry);
    for (const e of this.c.journal.pending())
      if (e.attachment && e.delete && e.path === entry.path && Journal.keyOf(e) !== key)
        if (!(await this.send(e))) return false;
    return true;
  }

  private async sendDelete(entry: JournalEntry): Promise<void> {
    const id = entry.fileId;
    if (id) {
      let gone = true;
      try {
        await this.c.client.attachments.delete(id, entry.baseEtag ?? undefined);
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        if (err.status === 412) {
          const record = await this.c.client.attachments.get(id);
          // Only moved or renamed elsewhere (its folder deleted there, say): the bytes removed
          // here are the ones it holds, so the delete stands.
          const onlyMoved = record && entry.baseHash && record.contentHash === entry.baseHash;
          gone = !!onlyMoved && (await this.deleteAt(id, record.etag));
          if (!gone) {
            // Changed elsewhere since it was read here: the delete is undone, the new version shows.
            this.c.log.warn(
              { path: entry.path },
              "an attachment removed here was changed elsewhere: it stays",
            );
            this.places.deleting.delete(id);
            if (record) this.places.apply(record);
          }
        } else if (err.status === 404)
          gone = false; // gone before: not ours to count
        else throw err;
      }
      this.places.deleting.delete(id);
      this.quota.deleted(id, gone);
    }
    await this.c.journal.done(entry);
  }

  /** Deletes `id` if it is still at version `etag` (true: gone now). */
  private async deleteAt(id: string, etag: string): Promise<boolean> {
    try {
      await this.c.client.attachments.delete(id, etag);
      return true;
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) return true;
      if (err instanceof ApiError && err.status === 412) return false;
      throw err;
    }
  }

  private async sendSave(entry: JournalEntry): Promise<void> {
    const node = this.places.nodeOf(entry);
    if (!node) return this.c.journal.done(entry); // unbound since: its delete is a newer entry
    // Its folder as it is now: one made here this round has its id (the entry read before has not).
    if (this.c.isPending(node.parent)) return;
    let record: TxtAttachment | undefined;
    let stale: TxtAttachment | undefined;
    // The version the bytes here are, when the service answers with another (below).
    let delivered: { id: string; etag: string; contentHash: string } | undefined;
    // What the service counted for it before (against the quota): nothing for a create.
    const before = entry.fileId ? node.attachment?.size : 0;
    if (!entry.fileId) {
      const b = node.attachment;
      const bytes = await this.saves.readSnapshot(entry.blob!);
      for (;;) {
        const folderId = this.folderOf(node);
        try {
          record = await this.c.client.attachments.create(entry.name, folderId, bytes, {
            idempotencyKey: entry.createKey,
          });
          break;
        } catch (err) {
          if (err instanceof ApiError && err.status === 409) return this.clashes.nameTaken(entry, node);
          const made = madeBefore<TxtAttachment>(err, "attachment");
          if (made) return this.clashes.madeBefore(entry, node, made);
          if (!this.folderRemoved(err, node, folderId)) throw err;
        }
      }
      // Unbound while its create went (removed, or renamed to a note's name: perl -i's temp file):
      // its delete is the newer entry, which `done` gives this id; the feed never shows it meanwhile.
      if (node.attachment === b) this.places.created(node, record);
      else this.places.deleting.add(record.id);
    } else {
      let sent: TxtAttachment | undefined;
      try {
        if (entry.blob)
          record = sent = await this.c.client.attachments.replace(
            entry.fileId,
            await this.saves.readSnapshot(entry.blob),
            {
              ifMatch: entry.baseEtag ?? undefined,
            },
          );
        if (entry.move) record = await this.moveTo(entry, node);
      } catch (err) {
        if (err instanceof ApiError && err.status === 412) return this.clashes.conflict(entry, node);
        if (err instanceof ApiError && err.status === 404) return this.clashes.createdAgain(entry, node);
        if (err instanceof ApiError && err.status === 409) return this.clashes.nameTaken(entry, node);
        throw err;
      }
      const b = node.attachment;
      if (record && b?.id === record.id) {
        const ours =
          sent ?? (b.hash !== null && b.etag !== null ? { etag: b.etag, contentHash: b.hash } : undefined);
        if (!ours || record.contentHash === ours.contentHash) boundTo(b, record);
        else {
          // A move answered with a version made elsewhere since the one the bytes here are (its
          // feed record came while the move waited, so it was not applied): the bytes here are
          // stale. A save of ours made since builds on our version (it meets the other one: a
          // conflict copy); with none, the other version shows (soak: seed 200).
          if (sent) boundTo(b, sent);
          delivered = { id: record.id, etag: ours.etag, contentHash: ours.contentHash };
          stale = record;
        }
      }
    }
    if (record) this.quota.delivered(node, before ?? record.size, record.size);
    await this.c.journal.done(entry, delivered ?? record);
    await this.saves.release(entry.blob);
    if (stale) this.places.apply(stale);
    this.c.localNodes.save();
  }

  /** A rename or move, sent where the file is now (its folder removed elsewhere: a level up). */
  private async moveTo(entry: JournalEntry, node: LocalNode): Promise<TxtAttachment> {
    for (;;) {
      const folderId = this.folderOf(node);
      try {
        return await this.c.client.attachments.update(entry.fileId!, { name: entry.name, folderId });
      } catch (err) {
        if (!this.folderRemoved(err, node, folderId)) throw err;
      }
    }
  }

  /**
   * Its folder was removed elsewhere (empty there: this mount had not heard yet) before our create
   * or move went: the service moved what the folder held up a level, and ours goes there too, as a
   * note does (Delivery.createNote), rather than be refused and kept on this machine only (soak:
   * seed 201). True: send it again, from where it is now.
   */
  private folderRemoved(err: unknown, node: LocalNode, folderId: string | null): boolean {
    const gone = err instanceof ApiError && err.status === 404 && /^folderId\b/.test(err.message);
    if (!gone || folderId === null) return false;
    if (this.folderOf(node) !== folderId) return true; // moved since (the feed brought the folder's delete)
    if (!this.c.tree.dirs.has(folderId)) return false;
    this.c.log.warn(
      { path: this.c.tree.pathOf(node) },
      "its folder was removed elsewhere; the attachment goes a level up, as what the folder held did",
    );
    this.c.tree.removeFolder(folderId);
    return true;
  }

  private folderOf(node: LocalNode): string | null {
    return folderIdOf(this.c.tree, node);
  }

  /** Refused for good: the file stays on this machine only, and that is said. */
  private async refused(entry: JournalEntry, err: Error): Promise<void> {
    const node = this.places.nodeOf(entry);
    if (node) {
      const b = node.attachment!;
      if (b.id) this.places.byId.delete(b.id);
      this.places.pendingCreates.delete(b.createKey);
      node.attachment = undefined;
    }
    const keptAs = node ? this.c.tree.pathOf(node) : undefined;
    this.c.log.error(
      { err, path: entry.path, keptAs },
      "the service refused an attachment; it stays on this machine",
    );
    this.c.reports.saveRefused({
      path: entry.path,
      reason: err.message,
      keptAs,
      at: isoNow(this.c.clock),
    });
    await this.c.journal.done(entry);
    await this.saves.release(entry.blob);
    this.c.localNodes.save();
    // Another device may have filled the quota: the next write here already knows.
    await this.quota.refresh();
  }
}

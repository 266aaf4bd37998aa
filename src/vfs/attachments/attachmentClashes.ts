// When the service answers an attachment's save with someone else's change: changed elsewhere
// since our version (412: ours becomes a conflict copy beside it), removed elsewhere (404: ours is
// made again), or its name taken elsewhere meanwhile (409: ours beside it as a conflict copy).
// Both sides are always kept; nothing of ours is dropped or kept on this machine only.
import { randomUUID } from "node:crypto";
import { madeBefore } from "../../client/api.ts";
import type { TxtAttachment } from "../../lib/apiTypes.ts";
import { conflictName } from "../conflicts.ts";
import type { VfsCore } from "../core.ts";
import { Journal, type JournalEntry } from "../delivery/journal.ts";
import type { LocalNode } from "../tree.ts";
import type { AttachmentBytes } from "./attachmentBytes.ts";
import { type AttachmentPlaces, folderIdOf } from "./attachmentPlaces.ts";
import type { AttachmentQuota } from "./attachmentQuota.ts";
import type { AttachmentSaves } from "./attachmentSaves.ts";
import { boundTo } from "./binding.ts";

export type AttachmentClashesCore = Pick<
  VfsCore,
  "client" | "clock" | "conflictCopies" | "handles" | "journal" | "localNodes" | "log" | "tree"
>;

export class AttachmentClashes {
  private readonly c: AttachmentClashesCore;
  private readonly places: AttachmentPlaces;
  private readonly bytes: AttachmentBytes;
  private readonly saves: AttachmentSaves;
  private readonly quota: AttachmentQuota;

  constructor(
    c: AttachmentClashesCore,
    places: AttachmentPlaces,
    bytes: AttachmentBytes,
    saves: AttachmentSaves,
    quota: AttachmentQuota,
  ) {
    this.c = c;
    this.places = places;
    this.bytes = bytes;
    this.saves = saves;
    this.quota = quota;
  }

  /**
   * Changed elsewhere since the version our bytes build on: ours goes up beside it as a conflict
   * copy (both kept), and the file shows the other version once nothing of ours waits for it.
   */
  async conflict(entry: JournalEntry, node: LocalNode): Promise<void> {
    const b = node.attachment;
    if (!b) return this.c.journal.done(entry); // unbound while it went: its delete is the newer entry
    if (entry.blob) {
      const copy = await this.createOnce(
        conflictName(entry.name, this.c.clock),
        folderIdOf(this.c.tree, node),
        await this.saves.readSnapshot(entry.blob),
        `${entry.fileId}-${entry.rev}-conflict`,
      );
      this.places.apply(copy);
      void this.quota.refresh(); // the copy counts too
      this.c.conflictCopies.push(this.c.tree.pathOf(node).replace(/[^/]*$/, copy.name));
      this.c.log.warn(
        { path: entry.path, keptAs: copy.name },
        "changed elsewhere too: ours is kept as a conflict copy",
      );
    }
    if (entry.move)
      await this.c.client.attachments.update(entry.fileId!, {
        name: entry.name,
        folderId: folderIdOf(this.c.tree, node),
      });
    await this.c.journal.done(entry);
    await this.saves.release(entry.blob);
    const writing = [...this.c.handles.values()].some((h) => h.kind === "local" && h.node === node);
    const remote = await this.c.client.attachments.get(b.id!);
    // A save made since, or one to come from a program still writing, builds on our version: it
    // meets the other one too (another copy), never overwrites it.
    if (!remote || writing || this.c.journal.get(entry.fileId!)) return;
    b.revision = 0;
    b.hash = null; // so the record is applied: the bytes here are ours, kept in the copy
    this.places.apply(remote);
  }

  /**
   * The name was taken on the service before ours came (another device made a file of that name
   * meanwhile): both are kept, ours under a conflict copy's name beside it (its bytes, when they
   * went just before, are on the service already), and theirs shows under the name.
   */
  async nameTaken(entry: JournalEntry, node: LocalNode): Promise<void> {
    const b = node.attachment;
    if (!b) return this.c.journal.done(entry); // unbound while it went: its delete is the newer entry
    // Made here and put beside it at the restart (Attachments.freeName), or renamed since: that name goes.
    const apart = !entry.fileId && node.name !== entry.name;
    const name = apart ? node.name : conflictName(entry.name, this.c.clock);
    const folderId = folderIdOf(this.c.tree, node);
    const before = entry.fileId ? b.size : 0;
    let record: TxtAttachment;
    if (entry.fileId) record = await this.c.client.attachments.update(entry.fileId, { name, folderId });
    else {
      record = await this.createOnce(
        name,
        folderId,
        await this.saves.readSnapshot(entry.blob!),
        `${entry.createKey}-apart`,
      );
      this.places.created(node, record);
    }
    if (node.attachment === b) boundTo(b, record);
    if (!apart && !node.parent.children.has(record.name)) {
      this.c.tree.move(node, node.parent, record.name);
      this.c.conflictCopies.push(this.c.tree.pathOf(node));
      this.c.log.warn(
        { path: entry.path, keptAs: record.name },
        "the name was taken elsewhere meanwhile: ours is kept beside it as a conflict copy",
      );
    }
    this.quota.delivered(node, before ?? record.size, record.size);
    await this.c.journal.done(entry, record);
    await this.saves.release(entry.blob);
    this.c.localNodes.save();
    this.places.nameFreed(node.parent, entry.name);
  }

  /**
   * A conflict copy made under `key`. Its name has the time in it: tried again after a lost answer,
   * the name differs and the service answers 422 naming the copy the first try made, which is it.
   */
  private async createOnce(
    name: string,
    folderId: string | null,
    bytes: Buffer,
    key: string,
  ): Promise<TxtAttachment> {
    try {
      return await this.c.client.attachments.create(name, folderId, bytes, { idempotencyKey: key });
    } catch (err) {
      const made = madeBefore<TxtAttachment>(err, "attachment");
      if (!made) throw err;
      return made;
    }
  }

  /**
   * Its create went before with other bytes under the same key (its answer lost and the file saved
   * again, or the journal taken back by a power cut): `made` is ours. The file binds to it, and the
   * bytes here go on top of that version (If-Match), with its place here if it moved since.
   */
  async madeBefore(entry: JournalEntry, node: LocalNode, made: TxtAttachment): Promise<void> {
    const b = node.attachment;
    if (!b) return this.c.journal.done(entry); // unbound while it went: its delete is the newer entry
    if (this.places.nodeOf({ fileId: made.id, createKey: "" })) {
      // Shown here already as another file (the restart named ours apart from it, as made
      // elsewhere): both stay, as the user was told; ours goes up as a file of its own.
      b.createKey = randomUUID();
      this.places.pendingCreates.set(b.createKey, node);
      await this.c.journal.put({ ...entry, createKey: b.createKey }, false);
      return this.c.journal.done(entry);
    }
    this.c.log.warn(
      { path: entry.path },
      "its create went before with other bytes (an answer lost, or the journal taken back): bound to what it made",
    );
    this.places.created(node, made);
    this.quota.delivered(node, 0, made.size);
    const folderId = folderIdOf(this.c.tree, node);
    const moved = made.name !== entry.name || made.folderId !== folderId;
    const changed = entry.blob !== made.contentHash;
    const current = this.c.journal.get(Journal.keyOf(entry));
    // Saved again since it was read (a newer entry): `done` puts that one on top of `made`.
    if (current === entry && (changed || moved))
      await this.c.journal.put(
        {
          ...entry,
          fileId: made.id,
          blob: changed ? entry.blob : undefined,
          move: moved ? true : undefined,
          baseEtag: made.etag,
          baseHash: made.contentHash,
        },
        false,
      );
    await this.c.journal.done(entry, made);
    if (current !== entry || !changed) await this.saves.release(entry.blob);
    this.c.localNodes.save();
  }

  /**
   * Removed elsewhere before our save went: our bytes create it again (a new id). A rename alone
   * of one whose bytes were never read here: the removal stands.
   */
  async createdAgain(entry: JournalEntry, node: LocalNode): Promise<void> {
    const b = node.attachment;
    if (!b) return this.c.journal.done(entry); // unbound while it went: its delete is the newer entry
    this.places.byId.delete(b.id!);
    if (b.remoteOnly) {
      this.c.log.info({ path: entry.path }, "renamed here and removed elsewhere: the removal stands");
      this.places.forget(node);
      return this.c.journal.done(entry);
    }
    this.c.log.warn({ path: entry.path }, "an attachment saved here was removed elsewhere: created again");
    b.id = null;
    b.etag = b.hash = null;
    b.createKey = randomUUID();
    this.places.pendingCreates.set(b.createKey, node);
    const blob = entry.blob ?? (await this.bytes.snapshot(node.blob)).hash;
    // The new line first, then the old one goes: the journal never lacks this save.
    await this.c.journal.put(
      {
        ...entry,
        blob,
        fileId: null,
        createKey: b.createKey,
        move: undefined,
        baseEtag: null,
        baseHash: null,
      },
      false,
    );
    await this.c.journal.done(entry);
  }
}

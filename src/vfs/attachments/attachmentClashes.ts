// When the service answers an attachment's save with someone else's change: changed elsewhere
// since our version (412: ours becomes a conflict copy beside it), removed elsewhere (404: ours is
// made again), or its name taken elsewhere meanwhile (409: ours beside it as a conflict copy).
// Both sides are always kept; nothing of ours is dropped or kept on this machine only.
import { randomUUID } from "node:crypto";
import type { TxtAttachment } from "../../lib/apiTypes.ts";
import { conflictName } from "../conflicts.ts";
import type { VfsCore } from "../core.ts";
import type { JournalEntry } from "../delivery/journal.ts";
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
      const copy = await this.c.client.attachments.create(
        conflictName(entry.name, this.c.clock),
        folderIdOf(this.c.tree, node),
        await this.saves.readSnapshot(entry.blob),
        { idempotencyKey: `${entry.fileId}-${entry.rev}-conflict` },
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
      record = await this.c.client.attachments.create(
        name,
        folderId,
        await this.saves.readSnapshot(entry.blob!),
        {
          idempotencyKey: `${entry.createKey}-apart`,
        },
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

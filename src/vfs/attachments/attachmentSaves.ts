// What a program does to an attachment, into the journal: a file it closed after writing (or made
// and closed empty) is saved — its bytes snapshotted, then an entry naming the snapshot put, then
// the program answered — a rename goes as a move, an unlink as a delete (If-Match). Delivered a
// moment later in journal order (attachmentDelivery.ts), so a kill -9 after `cp` returned finds
// the entry and its bytes, and sends them.
import { isUtf8 } from "node:buffer";
import { randomUUID } from "node:crypto";
import type { VfsCore } from "../core.ts";
import type { Delivery } from "../delivery/deliver.ts";
import type { JournalEntry } from "../delivery/journal.ts";
import { isNoteName, isUnsentName } from "../names.ts";
import type { LocalNode } from "../tree.ts";
import type { AttachmentBytes } from "./attachmentBytes.ts";
import { type AttachmentPlaces, attachmentKey } from "./attachmentPlaces.ts";
import type { AttachmentQuota } from "./attachmentQuota.ts";
import type { AttachmentBinding } from "./binding.ts";
import { FreshFiles } from "./freshFiles.ts";

export type AttachmentSavesCore = Pick<
  VfsCore,
  "excludes" | "handles" | "journal" | "local" | "localNodes" | "log" | "placeOf" | "tree" | "writeBehind"
>;

export class AttachmentSaves {
  private readonly c: AttachmentSavesCore;
  private readonly places: AttachmentPlaces;
  private readonly bytes: AttachmentBytes;
  private readonly delivery: Pick<Delivery, "deliverSoon">;
  private readonly quota: Pick<AttachmentQuota, "freeing">;
  /** Whether the service keeps attachments (an older one does not: every such file stays here). */
  supported = false;
  /** Each file's save running: the next waits for it, so saves reach the journal in the order made. */
  private readonly saving = new Map<LocalNode, Promise<void>>();
  /** Snapshots a delivery is reading now: never dropped under it. */
  readonly reading = new Set<string>();
  /** New files closed, their first save a moment later (a temp file renamed at once needs none). */
  readonly fresh: FreshFiles;

  constructor(
    c: AttachmentSavesCore,
    places: AttachmentPlaces,
    bytes: AttachmentBytes,
    delivery: Pick<Delivery, "deliverSoon">,
    quota: Pick<AttachmentQuota, "freeing">,
  ) {
    this.c = c;
    this.places = places;
    this.bytes = bytes;
    this.delivery = delivery;
    this.quota = quota;
    this.fresh = new FreshFiles(
      (node) => this.saved(node),
      (err, node) =>
        this.c.log.error(
          { err, path: this.c.tree.pathOf(node) },
          "could not save a new attachment; it is kept here and saved again at its next close or the next start",
        ),
    );
  }

  /**
   * Whether `node` goes to the service as an attachment: a plain file (not a link, fifo or
   * device), not excluded, in a folder the service has (or will have), and not a note left under
   * another name (a ghost of a note whose bytes are not UTF-8, a refused save's `.unsent` copy).
   * A note's name goes only for a file that never was a note (`keptNote`: bytes that are not UTF-8).
   */
  eligible(node: LocalNode): boolean {
    if (!this.supported || node.link !== undefined || node.special || node.ghostOf) return false;
    if (isNoteName(node.name) && !node.keptNote) return false;
    if (isUnsentName(node.name) || !this.c.tree.locals.has(node)) return false;
    const dir = node.parent;
    if (dir.localOnly) return false;
    if (dir !== this.c.tree.root && dir.id === null && dir.createKey === undefined) return false; // `Shared with me/`
    return this.c.excludes.match(this.c.tree.pathOf(node), false) === undefined;
  }

  /** Whether a save of `node` is being taken (its bytes read into a snapshot). */
  isSaving(node: LocalNode): boolean {
    return this.saving.has(node);
  }

  /**
   * A program closed `node` after writing it (or made it and closed it): its bytes go up; those
   * of a new file a moment later (FreshFiles), once it is recorded here.
   */
  closed(node: LocalNode): Promise<void> {
    if (node.attachment || !this.eligible(node)) return this.saved(node);
    this.c.localNodes.save();
    this.c.localNodes.flush(); // a kill -9 finds it, and the next start saves it
    this.fresh.closed(node);
    return Promise.resolve();
  }

  /** `node`'s bytes go up now (its close, fsync, a rename to an attachment's name). */
  saved(node: LocalNode): Promise<void> {
    this.fresh.forget(node);
    const before = this.saving.get(node) ?? Promise.resolve();
    const run = before.then(() => this.save(node));
    const tail = run.catch(() => {});
    this.saving.set(node, tail);
    void tail.then(() => {
      if (this.saving.get(node) === tail) this.saving.delete(node);
    });
    return run;
  }

  private async save(node: LocalNode): Promise<void> {
    if (!this.eligible(node) || node.attachment?.remoteOnly) return;
    // Under a note's name and text now: at its last close it becomes that note (Claims.adoptLocal).
    const textNow = async (read: () => Buffer | Promise<Buffer>) =>
      isNoteName(node.name) && isUtf8(await read());
    if (await textNow(() => this.c.local.read(node.blob))) return;
    if (!node.attachment) {
      node.attachment = newBinding();
      // Recorded before its entry: a kill -9 between the two finds a bound file with nothing in
      // the journal, which the next start saves again (never the reverse: an entry for no file).
      this.c.localNodes.save();
      this.c.localNodes.flush();
    }
    const b = node.attachment;
    if (!b.id) this.places.pendingCreates.set(b.createKey, node);
    const { hash } = await this.bytes.snapshot(node.blob);
    if (await textNow(() => this.bytes.read(hash))) {
      await this.release(hash);
      return;
    }
    // Renamed away, removed or unbound while the bytes were copied (note.ts: the rule for await).
    const key = attachmentKey(b);
    const pending = this.c.journal.get(key);
    if (
      node.attachment !== b ||
      !this.eligible(node) ||
      (!pending && b.hash === hash) ||
      pending?.blob === hash
    ) {
      await this.release(hash);
      return;
    }
    await this.c.journal.put(
      { ...this.entryOf(node, b), blob: hash, baseEtag: b.etag, baseHash: b.hash },
      !this.c.writeBehind,
    );
    if (pending?.blob) await this.release(pending.blob);
    this.c.localNodes.flush(); // its binding too: a kill -9 now finds the file and what it is
    this.delivery.deliverSoon();
  }

  /** Who a journal entry of `node` is for: its id (or create key), name, place and path. */
  private entryOf(node: LocalNode, b: AttachmentBinding) {
    return {
      fileId: b.id,
      createKey: b.createKey,
      name: node.name,
      ...this.c.placeOf(node.parent),
      path: this.c.tree.pathOf(node),
      attachment: true as const,
    };
  }

  /**
   * `node` was renamed or moved (already shown so): a move goes in the journal, or a delete when
   * it now stays here (an excluded name, a folder kept local); a file that now goes up is saved.
   */
  async renamed(node: LocalNode): Promise<void> {
    const b = node.attachment;
    // A new file's save still to come: under its new name then (a note's name now: none).
    if (this.fresh.has(node)) return this.eligible(node) ? undefined : this.fresh.forget(node);
    if (!b) {
      const writing = [...this.c.handles.values()].some((h) => h.kind === "local" && h.node === node);
      if (!writing && this.eligible(node)) await this.saved(node);
      return;
    }
    if (!this.eligible(node)) return this.unbind(node);
    await this.c.journal.put(
      { ...this.entryOf(node, b), move: true, baseEtag: b.etag, baseHash: b.hash },
      false,
    );
    this.c.localNodes.save();
    this.delivery.deliverSoon();
  }

  /** `node` was removed: its attachment is deleted on the service (If-Match its version). */
  async unlinked(node: LocalNode): Promise<void> {
    this.fresh.forget(node);
    if (node.attachment) await this.unbind(node);
  }

  /** `node` is no attachment any more (removed, or it stays here now): a delete goes in the journal. */
  private async unbind(node: LocalNode): Promise<void> {
    const b = node.attachment!;
    node.attachment = undefined;
    if (b.id) {
      this.places.byId.delete(b.id);
      this.places.deleting.add(b.id);
      this.quota.freeing(b.id, b.size);
    } else this.places.pendingCreates.delete(b.createKey);
    const pending = this.c.journal.get(attachmentKey(b));
    if (!b.id && !pending) return;
    await this.c.journal.put(
      {
        fileId: b.id,
        createKey: b.createKey,
        name: node.name,
        folderId: null,
        path: this.c.tree.pathOf(node),
        attachment: true,
        delete: "file",
        baseEtag: b.etag,
        baseHash: b.hash,
      },
      false,
    );
    if (pending?.blob) await this.release(pending.blob);
    this.c.localNodes.save();
    this.delivery.deliverSoon();
  }

  /** The bytes of a snapshot, read whole (held while read: a newer save never drops it under it). */
  async readSnapshot(hash: string): Promise<Buffer> {
    this.reading.add(hash);
    try {
      return await this.bytes.read(hash);
    } finally {
      this.reading.delete(hash);
    }
  }

  /** A snapshot goes once no entry names it and no delivery reads it. */
  async release(hash: string | undefined): Promise<void> {
    if (
      !hash ||
      this.reading.has(hash) ||
      this.c.journal.pending().some((e: JournalEntry) => e.blob === hash)
    )
      return;
    await this.bytes.drop(hash);
  }
}

/** The binding of a file made here: nothing on the service yet. */
function newBinding(): AttachmentBinding {
  return { id: null, createKey: randomUUID(), etag: null, hash: null, revision: 0 };
}

// Every file that is not a note, on the service as an attachment (docs/mount-internals.md,
// "Attachments"): its place in the tree from the listing and the feed (attachmentPlaces.ts), its
// bytes read at the first open and snapshotted at each save (attachmentBytes.ts), its saves,
// renames and removals journalled (attachmentSaves.ts) and delivered (attachmentDelivery.ts).
import { stat } from "node:fs/promises";
import { ApiError, type ChangeRecord } from "../../client/api.ts";
import type { TxtAttachment } from "../../lib/apiTypes.ts";
import type { VfsCore } from "../core.ts";
import type { Delivery } from "../delivery/deliver.ts";
import type { JournalEntry } from "../delivery/journal.ts";
import { fail } from "../errors.ts";
import type { ManifestEntry } from "../local/localFiles.ts";
import type { LocalNode } from "../tree.ts";
import { AttachmentBytes } from "./attachmentBytes.ts";
import { AttachmentDelivery } from "./attachmentDelivery.ts";
import { AttachmentPlaces, attachmentKey } from "./attachmentPlaces.ts";
import { AttachmentSaves } from "./attachmentSaves.ts";

export type AttachmentsCore = Pick<
  VfsCore,
  | "client"
  | "conflictCopies"
  | "excludes"
  | "handles"
  | "journal"
  | "local"
  | "localNodes"
  | "log"
  | "opts"
  | "pendingDirs"
  | "placeOf"
  | "reports"
  | "tree"
  | "writeBehind"
>;

export class Attachments {
  private readonly c: AttachmentsCore;
  readonly places: AttachmentPlaces;
  readonly bytes: AttachmentBytes;
  readonly saves: AttachmentSaves;
  readonly delivery: AttachmentDelivery;
  /** Reads of bytes from the service under way, one per file. */
  private readonly fetching = new Map<LocalNode, Promise<void>>();

  constructor(c: AttachmentsCore, delivery: Pick<Delivery, "deliverSoon">) {
    this.c = c;
    this.places = new AttachmentPlaces({
      tree: c.tree,
      local: c.local,
      localNodes: c.localNodes,
      journal: c.journal,
      openForWriting: (node) =>
        [...c.handles.values()].some((h) => h.kind === "local" && h.node === node && h.fh.writable),
      log: c.log,
    });
    this.bytes = new AttachmentBytes(c.opts.cacheDir);
    this.saves = new AttachmentSaves(c, this.places, this.bytes, delivery);
    this.delivery = new AttachmentDelivery(c, this.places, this.bytes, this.saves);
  }

  get supported(): boolean {
    return this.saves.supported;
  }

  /**
   * Every attachment visible, into the tree (mount time). A service without attachments (404):
   * every file that is not a note stays on this machine, as before.
   */
  async load(): Promise<void> {
    let records: TxtAttachment[];
    try {
      records = await this.c.client.attachments.all();
    } catch (err) {
      if (err instanceof ApiError && (err.status === 404 || err.status === 403)) {
        this.c.log.info("the service keeps no attachments: files that are not notes stay on this machine");
        return;
      }
      throw err;
    }
    this.saves.supported = true;
    this.places.relist(records);
  }

  /** A change feed record of an attachment. */
  change(change: ChangeRecord): void {
    if (change.deleted) this.places.removed(change.id);
    else if (change.attachment) this.places.apply(change.attachment as unknown as TxtAttachment);
  }

  /**
   * A local file kept from before a restart that is an attachment: bound to the listed one (its
   * bytes kept when they are that version, or a save of ours waits), or, made here and not
   * created yet, put back as it was. False: not an attachment (LocalNodes.restore puts it back).
   */
  restored(entry: ManifestEntry): boolean {
    const b = entry.attachment;
    if (!b) return false;
    const listed = b.id ? this.places.byId.get(b.id) : undefined;
    const waits = this.c.journal.get(attachmentKey(b)) !== undefined;
    if (listed) {
      const lb = listed.attachment!;
      if (waits || lb.hash === b.hash) {
        listed.blob = entry.blob;
        listed.attachment = {
          ...lb,
          etag: b.etag,
          hash: b.hash,
          revision: b.revision,
          remoteOnly: undefined,
        };
        listed.mode = entry.mode;
        listed.mtimeMs = entry.mtimeMs;
        listed.atimeMs = entry.atimeMs;
        void this.sizeFromBlob(listed);
      } else this.c.local.remove(entry.blob); // changed elsewhere meanwhile: the listed version shows
      return true;
    }
    if (b.id && !waits) {
      this.c.local.remove(entry.blob); // removed elsewhere meanwhile, nothing of ours waits
      return true;
    }
    return false; // made here (or removed elsewhere with a save waiting): back as a local file, bound
  }

  /** After LocalNodes.restore put a bound file back: indexed as its binding says. */
  restoredNode(node: LocalNode): void {
    const b = node.attachment;
    if (!b) return;
    if (b.id) this.places.byId.set(b.id, node);
    else this.places.pendingCreates.set(b.createKey, node);
  }

  private async sizeFromBlob(node: LocalNode): Promise<void> {
    try {
      node.size = (await stat(node.blob)).size;
      this.c.tree.onChange(node);
    } catch {
      // its blob is gone: read from the service at the next open
      node.attachment!.remoteOnly = true;
    }
  }

  /** After a restart: deletes of ours still on their way hide their attachments. */
  restoreJournal(entries: JournalEntry[]): void {
    for (const e of entries) {
      if (!e.attachment || !e.delete || !e.fileId) continue;
      this.places.deleting.add(e.fileId);
      const node = this.places.byId.get(e.fileId);
      if (node) this.places.forget(node);
    }
    void this.bytes.sweep(new Set(entries.flatMap((e) => (e.blob ? [e.blob] : []))));
  }

  /** Its bytes are here (read from the service at the first open of a file only listed so far). */
  async ensureBytes(node: LocalNode): Promise<void> {
    if (!node.attachment?.remoteOnly) return;
    let reading = this.fetching.get(node);
    if (!reading) {
      reading = this.fetch(node).finally(() => this.fetching.delete(node));
      this.fetching.set(node, reading);
    }
    await reading;
  }

  private async fetch(node: LocalNode): Promise<void> {
    const b = node.attachment!;
    const blob = node.blob;
    let got: Awaited<ReturnType<typeof this.c.client.attachments.read>>;
    try {
      got = await this.c.client.attachments.read(b.id!);
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) throw fail("ENOENT");
      throw fail("EIO", `could not read the attachment: ${(err as Error).message}`);
    }
    if (!got) throw fail("EIO");
    // A newer version came while it was read: that one is read (the next open, or a retry now).
    if (node.attachment !== b || node.blob !== blob || !b.remoteOnly) return this.ensureBytes(node);
    await this.bytes.fill(blob, got.bytes);
    b.remoteOnly = undefined;
    if (got.etag && got.etag !== b.etag) {
      b.etag = got.etag;
      b.hash = null;
    }
    node.size = got.bytes.length;
    this.c.tree.onChange(node);
    this.c.localNodes.save();
  }
}

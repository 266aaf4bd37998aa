// Every file that is not a note, on the service as an attachment (docs/mount-internals.md,
// "Attachments"): its place in the tree from the listing and the feed (attachmentPlaces.ts), its
// bytes read at the first open and snapshotted at each save (attachmentBytes.ts), its saves,
// renames and removals journalled (attachmentSaves.ts) and delivered (attachmentDelivery.ts).
import { stat } from "node:fs/promises";
import { ApiError, type ChangeRecord } from "../../client/api.ts";
import type { TxtAttachment } from "../../lib/apiTypes.ts";
import { conflictName } from "../conflicts.ts";
import type { VfsCore } from "../core.ts";
import type { Delivery } from "../delivery/deliver.ts";
import type { JournalEntry } from "../delivery/journal.ts";
import { fail } from "../errors.ts";
import type { ManifestEntry } from "../local/localFiles.ts";
import { parentAndName } from "../names.ts";
import type { LocalNode } from "../tree.ts";
import { AttachmentBytes } from "./attachmentBytes.ts";
import { AttachmentDelivery } from "./attachmentDelivery.ts";
import { AttachmentEviction } from "./attachmentEviction.ts";
import { AttachmentPlaces, attachmentKey } from "./attachmentPlaces.ts";
import { AttachmentQuota } from "./attachmentQuota.ts";
import { AttachmentSaves } from "./attachmentSaves.ts";

export type AttachmentsCore = Pick<
  VfsCore,
  | "client"
  | "clock"
  | "conflictCopies"
  | "excludes"
  | "handles"
  | "isPending"
  | "journal"
  | "local"
  | "localNodes"
  | "log"
  | "opts"
  | "pendingDirs"
  | "pins"
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
  /** The round of `keepPinned` running, and whether another was asked for meanwhile. */
  private keeping: Promise<void> | undefined;
  private keepAgain = false;
  /** Reads of bytes from the service under way, one per file. */
  private readonly fetching = new Map<LocalNode, Promise<void>>();
  /** The service's limits, met at the write (EFBIG, EDQUOT). */
  readonly quota: AttachmentQuota;
  /** Bytes read from the service, kept within the cache's size. */
  readonly eviction: AttachmentEviction;
  /** Resolved once the start has put every kept file back (`started`). */
  private readonly ready: Promise<void>;
  private startDone!: () => void;
  private isStarted = false;
  private readonly stopping: Promise<void>;
  private stopNow!: () => void;

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
    this.quota = new AttachmentQuota({
      read: () => c.client.attachments.limits(),
      shown: (node) => c.tree.locals.has(node),
      root: c.tree.root,
    });
    this.saves = new AttachmentSaves(c, this.places, this.bytes, delivery, this.quota);
    this.delivery = new AttachmentDelivery(c, this.places, this.bytes, this.saves, this.quota);
    this.eviction = new AttachmentEviction({
      budget: c.opts.cacheSize,
      busy: (node) =>
        this.fetching.has(node) ||
        this.saves.isSaving(node) ||
        c.journal.get(attachmentKey(node.attachment!)) !== undefined ||
        [...c.handles.values()].some((h) => h.kind === "local" && h.node === node),
      keptOffline: (node) => c.pins.stateOf(node.parent) !== "online-only",
      shown: (node) => c.tree.locals.has(node),
      evict: (node) => {
        c.local.remove(node.blob);
        node.blob = this.places.newBlob();
        node.attachment!.remoteOnly = true;
      },
    });
    this.ready = new Promise((resolve) => {
      this.startDone = resolve;
    });
    this.stopping = new Promise((resolve) => {
      this.stopNow = resolve;
    });
  }

  get supported(): boolean {
    return this.saves.supported;
  }

  /**
   * Every attachment visible, into the tree (mount time). A service without attachments (404):
   * every file that is not a note stays on this machine, as before.
   */
  async load(): Promise<void> {
    // Asked beside the listing, so the start waits for one round trip, not two.
    const limits = this.c.client.attachments.limits().catch((err) => {
      this.c.log.warn(
        { err },
        "the attachments' limits are not known: a file too large is refused at delivery",
      );
      return undefined;
    });
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
    this.quota.known(await limits);
    this.places.relist(records);
  }

  /**
   * Before a byte is written: EFBIG past the largest attachment the service takes, EDQUOT past the
   * account's quota (its save would be refused for good: a write is never accepted to be undone).
   */
  checkSize(node: LocalNode, size: number): void {
    if (this.saves.eligible(node)) this.quota.check(node, size);
  }

  /** The whole list again (SIGHUP, an expired feed cursor): what the feed may have missed. */
  async relist(): Promise<void> {
    void this.quota.refresh();
    this.places.relist(await this.c.client.attachments.all());
  }

  /**
   * An entry of the journal, to the service. Not before the start has put every kept file back:
   * an entry whose file is not in the tree yet would look like one whose file is gone.
   */
  async send(entry: JournalEntry): Promise<boolean> {
    await Promise.race([this.ready, this.stopping]);
    if (!this.isStarted) return false; // stopped before the start ended: the entry stays for the next
    const sent = await this.delivery.send(entry);
    if (sent) this.trim(); // delivered bytes are the service's version now: evictable
    return sent;
  }

  /**
   * Files under a folder pinned on this device are kept complete for offline use, as its notes
   * are: bytes not read yet (listed, made or changed elsewhere since) are read now, one at a time.
   * A failure waits for the next round (the service unreachable, the file gone meanwhile).
   */
  keepPinned(): Promise<void> {
    if (this.keeping) {
      this.keepAgain = true;
      return this.keeping;
    }
    this.keeping = this.readPinned().finally(() => {
      this.keeping = undefined;
      if (this.keepAgain) {
        this.keepAgain = false;
        void this.keepPinned();
      }
    });
    return this.keeping;
  }

  private async readPinned(): Promise<void> {
    for (const node of [...this.places.byId.values()]) {
      if (!node.attachment?.remoteOnly || !this.c.tree.locals.has(node)) continue;
      if (this.c.pins.stateOf(node.parent) !== "pinned") continue;
      try {
        await this.ensureBytes(node);
      } catch (err) {
        this.c.log.debug({ err, path: this.c.tree.pathOf(node) }, "a pinned attachment is not read yet");
        return;
      }
    }
  }

  /** Back within the cache's size (least recently used clean bytes go). */
  private trim(): void {
    const evicted = this.eviction.trim();
    if (evicted === 0) return;
    this.c.localNodes.save();
    this.c.log.debug(
      { evicted, kept: this.eviction.bytesOnDisk },
      "attachments' bytes evicted from the cache",
    );
  }

  /** The mount stops: a delivery waiting for the start gives up (its entries stay journalled). */
  stop(): void {
    this.stopNow();
  }

  /**
   * The start put back what the journal and the manifest keep: files that go up and have no save
   * on its way (made before the service kept attachments, or a kill -9 between a file's binding
   * and its entry) are saved now, and the journal's entries may go.
   */
  async started(): Promise<void> {
    try {
      if (!this.supported) return;
      // Bytes kept from before: counted against the cache's size, in no particular order.
      for (const node of this.places.byId.values())
        if (!node.attachment?.remoteOnly) this.eviction.used(node, node.size);
      for (const node of [...this.c.tree.locals]) {
        const b = node.attachment;
        const waits = b && this.c.journal.get(attachmentKey(b));
        if (!waits && !b?.id && this.saves.eligible(node)) await this.saves.saved(node);
      }
    } finally {
      this.isStarted = true;
      this.startDone();
    }
  }

  /**
   * A kept file made here (not bound, or its create not answered) whose name a listed attachment
   * took meanwhile (made elsewhere while this mount was down): it comes back beside it, under a
   * conflict copy's name, and goes up as such.
   */
  freeName(entry: ManifestEntry): ManifestEntry {
    if (entry.dir || entry.attachment?.id) return entry;
    const taken = this.c.tree.lookup(entry.path);
    if (taken?.kind !== "local" || !taken.attachment?.id) return entry;
    const { parent, name } = parentAndName(entry.path);
    const path = `${parent === "/" ? "" : parent}/${conflictName(name, this.c.clock)}`;
    this.c.log.warn({ path: entry.path, keptAs: path }, "made here and elsewhere while unmounted: both kept");
    this.c.conflictCopies.push(path);
    return { ...entry, path };
  }

  /** A program closed (or fsynced) `node` after writing it, or made it: its bytes go up. */
  async saved(node: LocalNode): Promise<void> {
    await this.saves.saved(node);
    if (node.attachment) this.eviction.used(node, node.size);
  }

  /** `node` was renamed or moved (shown so already). */
  renamed(node: LocalNode): Promise<void> {
    return this.saves.renamed(node);
  }

  /** `node` goes (removed, or it became a note or a sidecar's edit). */
  unlinked(node: LocalNode): Promise<void> {
    return this.saves.unlinked(node);
  }

  /** `node` was bound and may be no attachment any more (gone, or it became a note's file): unbound then. */
  left(node: LocalNode): Promise<void> {
    return node.attachment && !this.saves.eligible(node) ? this.saves.unlinked(node) : Promise.resolve();
  }

  /** A change feed record of an attachment. */
  change(change: ChangeRecord): void {
    if (change.deleted) this.places.removed(change.id);
    else if (change.attachment) {
      this.places.apply(change.attachment as unknown as TxtAttachment);
      // Made or changed elsewhere under a folder pinned here: read now (no walk for any other).
      const node = this.places.byId.get(change.id);
      if (node?.attachment?.remoteOnly && this.c.pins.stateOf(node.parent) === "pinned")
        void this.keepPinned();
    }
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
        listed.uid = entry.uid;
        listed.gid = entry.gid;
        if (waits) this.placeAt(listed, entry.path); // renamed here before the restart
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

  /** Shows `node` at `path`, where a rename of ours put it (its move is in the journal). */
  private placeAt(node: LocalNode, path: string): void {
    const { parent, name } = parentAndName(path);
    const dir = this.c.tree.lookup(parent);
    if (dir?.kind !== "dir" || (dir === node.parent && name === node.name) || dir.children.has(name)) return;
    this.c.tree.move(node, dir, name);
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

  /**
   * Its bytes are here (read from the service at the first open of a file only listed so far).
   * `emptied`: it is being truncated to nothing, so none are read.
   */
  async ensureBytes(node: LocalNode, emptied = false): Promise<void> {
    const b = node.attachment;
    if (!b?.remoteOnly) {
      if (b) this.eviction.used(node, node.size); // used again: the last to go
      return;
    }
    if (emptied && !this.fetching.has(node)) {
      await this.bytes.fill(node.blob, Buffer.alloc(0));
      if (node.attachment === b) b.remoteOnly = undefined;
      this.eviction.used(node, 0);
      return;
    }
    let reading = this.fetching.get(node);
    if (!reading) {
      reading = this.fetch(node).finally(() => this.fetching.delete(node));
      this.fetching.set(node, reading);
    }
    await reading;
    // Evicted again between its read and its reader (another file's read trimmed the cache).
    if (node.attachment?.remoteOnly) return this.ensureBytes(node, emptied);
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
    this.eviction.used(node, got.bytes.length);
    this.trim(); // (this one is busy until its read ends: never the one evicted)
    this.c.localNodes.save();
  }
}

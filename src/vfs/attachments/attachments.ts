// Every file that is not a note, on the service as an attachment (docs/mount-internals.md,
// "Attachments"): its place in the tree from the listing and the feed (attachmentPlaces.ts), its
// bytes snapshotted at each save (attachmentBytes.ts), its saves, renames and removals journalled
// (attachmentSaves.ts) and delivered (attachmentDelivery.ts), its bytes read from the service
// (attachmentDownloads.ts), a restart's files put back (attachmentRestart.ts). This class wires
// them and is what the rest of the vfs calls.
import { ApiError, type ChangeRecord } from "../../client/api.ts";
import type { TxtAttachment } from "../../lib/apiTypes.ts";
import type { VfsCore } from "../core.ts";
import type { Delivery } from "../delivery/deliver.ts";
import type { JournalEntry } from "../delivery/journal.ts";
import type { ManifestEntry } from "../local/localFiles.ts";
import type { LocalNode } from "../tree.ts";
import { AttachmentBytes } from "./attachmentBytes.ts";
import { AttachmentDelivery } from "./attachmentDelivery.ts";
import { AttachmentDownloads } from "./attachmentDownloads.ts";
import { AttachmentEviction } from "./attachmentEviction.ts";
import { AttachmentPlaces, attachmentKey } from "./attachmentPlaces.ts";
import { AttachmentQuota } from "./attachmentQuota.ts";
import { AttachmentRestart } from "./attachmentRestart.ts";
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
  private readonly downloads: AttachmentDownloads;
  private readonly restart: AttachmentRestart;
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
      goesUp: (node) => this.goesUp(node),
      root: c.tree.root,
    });
    this.saves = new AttachmentSaves(c, this.places, this.bytes, delivery, this.quota);
    this.delivery = new AttachmentDelivery(c, this.places, this.bytes, this.saves, this.quota);
    this.downloads = new AttachmentDownloads(c, this.places, this.bytes, () => this.eviction);
    this.eviction = new AttachmentEviction({
      budget: c.opts.cacheSize,
      busy: (node) =>
        this.downloads.isFetching(node) ||
        this.saves.isSaving(node) ||
        c.journal.get(attachmentKey(node.attachment!)) !== undefined ||
        [...c.handles.values()].some((h) => h.kind === "local" && h.node === node),
      keptOffline: (node) => c.pins.stateOf(node) !== "online-only",
      shown: (node) => c.tree.locals.has(node),
      evict: (node) => {
        c.local.remove(node.blob);
        node.blob = this.places.newBlob();
        node.attachment!.remoteOnly = true;
      },
    });
    this.restart = new AttachmentRestart(c, this.places, this.bytes, this.saves, this.eviction);
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
    if (sent) this.downloads.trim(); // delivered bytes are the service's version now: evictable
    return sent;
  }

  /** The mount stops: a delivery waiting for the start gives up (its entries stay journalled). */
  stop(): void {
    this.stopNow();
  }

  /** A program fsynced `node` (or truncated it): its bytes go up now. */
  async saved(node: LocalNode): Promise<void> {
    await this.saves.saved(node);
    if (node.attachment) this.eviction.used(node, node.size);
  }

  /** A program closed `node` after writing it, or made it: its bytes go up (a new file's a moment later). */
  async closed(node: LocalNode): Promise<void> {
    await this.saves.closed(node);
    if (node.attachment) this.eviction.used(node, node.size);
  }

  /** Before `node` is opened for writing, or a drain: the saves of closed new files still to come, now. */
  saveFresh(node?: LocalNode): Promise<void> {
    return node ? this.saves.fresh.now(node) : this.saves.fresh.all();
  }

  /** Whether `node` goes to the service: bound, or a new file whose first save is still to come. */
  goesUp(node: LocalNode): boolean {
    return node.attachment !== undefined || this.saves.fresh.has(node);
  }

  /** New files closed whose saves are still to come. */
  get freshWaiting(): number {
    return this.saves.fresh.size;
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

  /** A folder record of the feed was applied: attachments that came before their folder show now. */
  folderKnown(): void {
    this.places.folderKnown();
  }

  /** A change feed record of an attachment. */
  change(change: ChangeRecord): void {
    if (change.deleted) this.places.removed(change.id);
    else if (change.attachment) {
      this.places.apply(change.attachment as unknown as TxtAttachment);
      // Made or changed elsewhere under a folder pinned here: read now (no walk for any other).
      const node = this.places.byId.get(change.id);
      if (node?.attachment?.remoteOnly && this.c.pins.stateOf(node) === "pinned")
        void this.downloads.keepPinned();
    }
  }

  /**
   * The start put back what the journal and the manifest keep (AttachmentRestart.started); until
   * then no entry goes (`send`).
   */
  async started(): Promise<void> {
    try {
      if (this.supported) await this.restart.started();
    } finally {
      this.isStarted = true;
      this.startDone();
    }
  }

  freeName(entry: ManifestEntry): ManifestEntry {
    return this.restart.freeName(entry);
  }

  restored(entry: ManifestEntry): boolean {
    return this.restart.restored(entry);
  }

  restoredNode(node: LocalNode): void {
    this.restart.restoredNode(node);
  }

  restoreJournal(entries: JournalEntry[]): void {
    this.restart.restoreJournal(entries);
  }

  ensureBytes(node: LocalNode, emptied = false): Promise<void> {
    return this.downloads.ensureBytes(node, emptied);
  }

  keepPinned(): Promise<void> {
    return this.downloads.keepPinned();
  }
}

// The journal's delivery: when a round goes (saves gather, a burst starts at once, sync, fsync and
// unmount drain, an operation that needs a note on the service settles it), in order, and a note's
// save sent one by one with what its answer means (a conflict copy, a refusal, a re-create). Bulk
// requests are bulkDelivery.ts, deletes deletes.ts, what a restart finds restoreJournal.ts.
import { randomUUID } from "node:crypto";
import { ApiError, type ChangeRecord, withoutContent } from "../../client/api.ts";
import type { TxtFile, TxtFolder } from "../../lib/apiTypes.ts";
import type { AttachmentDelivery } from "../attachments/attachmentDelivery.ts";
import { type Base, baseOf } from "../base.ts";
import type { Conflicts } from "../conflicts.ts";
import type { VfsCore } from "../core.ts";
import { BULK_ITEMS, type Bulk } from "../delivery/bulk.ts";
import { Journal, type JournalEntry } from "../delivery/journal.ts";
import { fail, isTransient } from "../errors.ts";
import type { Claims } from "../local/claims.ts";
import type { Attributes } from "../meta/attributes.ts";
import { unsentName } from "../names.ts";
import type { Renames } from "../namespace/renames.ts";
import { revisionOf } from "../revisions.ts";
import type { FileNode, Node, PendingMeta } from "../tree.ts";
import { BulkDelivery } from "./bulkDelivery.ts";
import { Deletes } from "./deletes.ts";
import { dirKey, journalKey } from "./journalKeys.ts";
import { landedOnBase } from "./landedOnBase.ts";
import { restoreJournal } from "./restoreJournal.ts";
import { Unanswered, whileAnswering } from "./whileAnswering.ts";

const DELIVERY_QUIET_MS = 20;

const DELIVERY_MAX_WAIT_MS = 1000;

/**
 * Saves waiting that make a burst: a round starts at once (right after the one on its way), so a
 * long burst goes up while it goes on and an unmount or `txtfs sync` right after has at most about
 * this much left. A full bulk request: smaller rounds take the daemon's time from the burst's own
 * FUSE calls (docs/benchmarks.md).
 */
const BURST_ITEMS = BULK_ITEMS;

/**
 * A note's delete waits this long in the journal before a delivery takes it (`txtfs sync`, fsync
 * and unmount take it at once): a create of the same path before then calls it off and the note
 * continues (tar -x, git checkout: unlink, then create a moment later). Without it a delivery that
 * happened to start between the two would send the delete, and the note would come back as a new
 * one (new id, no tags, no history).
 */
const DELETE_GRACE_MS = 200;

/**
 * A new attachment's create waits this long (sync, fsync and unmount take it at once): the temp
 * files of rsync and sed, renamed to a note's name right after their close, never go up.
 */
const ATTACHMENT_CREATE_GRACE_MS = 1000;

/** The parts delivery calls: conflicts met, times and folders kept, tombstones, local placing. */
export interface DeliveryParts {
  attributes: Pick<Attributes, "keepFolderAttrs" | "rememberTimes" | "showRemoteVersion">;
  claims: Pick<Claims, "created" | "dropTombstone">;
  conflicts: Pick<Conflicts, "afterPreconditionFailed" | "ownSuccessor" | "replaced">;
  renames: Pick<Renames, "placeLocally">;
  /** Files that are not notes: their entries go on their own (attachments/attachmentDelivery.ts). */
  attachments: Pick<AttachmentDelivery, "send">;
}

/** What delivery uses of the mount's shared state. */
export type DeliveryCore = Pick<
  VfsCore,
  | "attrsChanged"
  | "cache"
  | "client"
  | "createsOnTheirWay"
  | "follower"
  | "freeName"
  | "isPending"
  | "journal"
  | "log"
  | "localNodes"
  | "nodeFor"
  | "notes"
  | "parentFor"
  | "pendingDirs"
  | "placeOf"
  | "reports"
  | "shadowedBy"
  | "shadowedDirs"
  | "stopped"
  | "times"
  | "tree"
  | "unshadowDir"
  | "writeBehind"
>;

export class Delivery {
  private readonly attributes: DeliveryParts["attributes"];
  private readonly claims: DeliveryParts["claims"];
  private readonly conflicts: DeliveryParts["conflicts"];
  private readonly renames: DeliveryParts["renames"];
  private readonly attachments: DeliveryParts["attachments"];
  readonly c: DeliveryCore;
  /** Deletes made here, delivered (deletes.ts). */
  private readonly deletes: Deletes;
  /** The journal delivered in bulk (bulkDelivery.ts). */
  private readonly bulk: BulkDelivery;

  constructor(c: DeliveryCore, parts: DeliveryParts) {
    this.c = c;
    this.attributes = parts.attributes;
    this.claims = parts.claims;
    this.conflicts = parts.conflicts;
    this.renames = parts.renames;
    this.attachments = parts.attachments;
    this.deletes = new Deletes(c, { claims: parts.claims, conflicts: parts.conflicts, delivery: this });
    this.bulk = new BulkDelivery(c, {
      attributes: parts.attributes,
      conflicts: parts.conflicts,
      deletes: this.deletes,
      delivery: this,
    });
  }

  /** Whether `txtfs sync`, fsync, unmount or settle waits for the journal (bulk requests then carry more). */
  get drainWaiting(): boolean {
    return this.draining > 0;
  }

  /** The daemon is stopping: no delivery is started any more. */
  stopTimers(): void {
    clearTimeout(this.replayTimer);
    clearImmediate(this.burstStart);
  }

  /** The journal's next delivery: saves gathering (deliverSoon), or a retry while unreachable. */
  replayTimer: NodeJS.Timeout | undefined;
  /** The next round of a burst, right after the operation that made it one (deliverSoon). */
  private burstStart: NodeJS.Immediate | undefined;
  /** When the first save still gathering for the next delivery was made. */
  gatheringSince: number | undefined;
  /** The running delivery of the journal (one at a time), and whether saves arrived while it ran. */
  replaying: Promise<void> | undefined;
  replayAgain = false;
  unreachable = false;
  /** Keys of the journal entries the running delivery round took: any of them may reach the service any moment. */
  private round: Set<string> | undefined;
  /** Feed deletes of notes and folders our creates made, come before their answers: applied once the round is over. */
  private deletedMeanwhile: ChangeRecord[] = [];
  /** When the deletes a round left for their grace (DELETE_GRACE_MS) may go. */
  private heldUntil: number | undefined;
  /** When the attachments' creates a round left for their grace (ATTACHMENT_CREATE_GRACE_MS) may go. */
  private createsHeldUntil: number | undefined;
  /** `txtfs sync`, fsync, unmount or settle is waiting: rounds take every entry, young deletes too. */
  private draining = 0;

  /**
   * Whether the journal entry `key` may be on its way to the service right now (then it is not ours
   * to change). An entry made after the running round started is not: the round never takes it.
   */
  onItsWay(key: string): boolean {
    return (
      this.round?.has(key) === true ||
      this.c.journal.inflightBulk<Bulk>()?.items.some((i) => i.key === key) === true
    );
  }

  /** Whether the running delivery round took the journal entry `key` (its answer may come any moment). */
  inRound(key: string): boolean {
    return this.round?.has(key) === true;
  }

  /**
   * What a delivery round takes: the journal in order, up to the first delete still in its grace
   * (the rest waits for it, so the service sees everything in the order it was done).
   */
  private takeRound(): JournalEntry[] {
    const pending = this.c.journal.pending();
    this.heldUntil = this.createsHeldUntil = undefined;
    if (this.draining) return pending;
    const now = Date.now();
    const young = pending.findIndex(
      (e) => e.delete === "file" && Date.parse(e.savedAt) + DELETE_GRACE_MS > now,
    );
    if (young >= 0) this.heldUntil = Date.parse(pending[young]!.savedAt) + DELETE_GRACE_MS;
    const taken = young < 0 ? pending : pending.slice(0, young);
    // A file that is not a note, made a moment ago, waits (without holding up the rest): a temp
    // file renamed to a note's name right after it is closed (rsync's `.name.XXXXXX`, sed's
    // `sedXXXXXX`) then never goes up as an attachment.
    return taken.filter((e) => {
      if (!e.attachment || e.fileId || e.delete) return true;
      const until = Date.parse(e.savedAt) + ATTACHMENT_CREATE_GRACE_MS;
      if (until <= now) return true;
      this.createsHeldUntil = Math.min(this.createsHeldUntil ?? until, until);
      return false;
    });
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
    this.deliverSoon();
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
    this.deliverSoon();
  }

  /**
   * One note's content to the service: a create (with its Idempotency-Key) or a PUT with If-Match.
   * A 412 keeps both versions; a note deleted remotely since its base is created again. Returns the
   * note's record and the body it now has.
   */
  async send(
    node: FileNode,
    content: string | undefined,
    given: Base,
    move = false,
    superseded?: string[],
  ): Promise<{ meta: TxtFile; body: string | undefined }> {
    let meta: TxtFile;
    let body = content;
    if (node.id && move && content === undefined) {
      // A rename or move alone: its new name and folder (a rename never conflicts).
      meta = withoutContent(await this.c.client.updateFile(node.id, this.placeOf(node)));
      // A version of ours only if it landed on the content it was based on (see landedOnBase).
      const base = this.conflicts.ownSuccessor(node.id, given);
      const ours = landedOnBase(meta, base);
      if (ours) this.conflicts.replaced(node.id, base, meta);
      this.c.tree.upsertFile(meta, ours); // else its content is an edit made elsewhere: shown as one
      this.c.notes.of(node).refreshSize();
      return { meta, body };
    }
    const base = node.id ? this.conflicts.ownSuccessor(node.id, given) : given;
    if (!node.id) {
      const sent = node.note?.pendingMeta;
      meta = await this.createNote(node, content, sent);
      node.note?.metaDelivered(sent); // it went with the create
      body = content ?? "";
    } else if (content === undefined) {
      throw new Error("unreachable: a journal entry with neither a body nor a move");
    } else {
      try {
        ({ meta, body } = await this.update(node, content, base, move, superseded));
      } catch (err) {
        // Deleted remotely (also while a conflict was being resolved): our save creates it again.
        if (!(err instanceof ApiError && err.status === 404)) throw err;
        this.c.log.warn({ path: this.c.tree.pathOf(node) }, "note was deleted remotely; saving it again");
        this.c.tree.removeFile(node.id);
        const createKey = randomUUID();
        node.id = null;
        node.createKey = createKey;
        // Beside the other note of its name, if one took that name when this one left the tree
        // (put in its place, that note would vanish from the listing).
        this.c.tree.addChild(node.parent, node, true);
        const sent = await this.send(node, content, null);
        // A save made during the send was keyed by this create: it builds on what it made.
        await this.c.journal.rekeyCreated(createKey, sent.meta);
        return sent;
      }
    }
    this.c.cache.set(meta.id, meta.etag, Buffer.from(body!, "utf8"));
    this.c.notes.of(node).refreshSize();
    return { meta, body };
  }

  /**
   * A note made here, to the service. Its folder removed elsewhere meanwhile (empty there; this
   * mount has not heard yet): the service moved what that folder held up a level, and the note goes
   * there too, as the feed's tombstone will move it here, rather than be refused and kept aside.
   */
  private async createNote(
    node: FileNode,
    content: string | undefined,
    sent: PendingMeta | undefined,
  ): Promise<TxtFile> {
    for (;;) {
      const folderId = node.parent.id;
      try {
        return await this.createOnItsWay("file", node.remoteName, folderId, async () => {
          const made = withoutContent(
            await this.c.client.createFile(
              // Metadata set before the first upload (cp -a copies xattrs onto the new file) goes along.
              {
                name: node.remoteName,
                content: content ?? "",
                folderId,
                ...sent,
              },
              node.createKey,
            ),
          );
          await this.created(node, made);
          return made;
        });
      } catch (err) {
        const folderGone = err instanceof ApiError && err.status === 404 && /^folderId\b/.test(err.message);
        if (!folderGone || folderId === null) throw err;
        // Moved since it went (the feed brought that folder's delete meanwhile): sent where it is
        // now. The folder it is in now is not the one the service said is gone.
        if (node.parent.id !== folderId) continue;
        if (!this.c.tree.dirs.has(folderId)) throw err;
        this.c.log.warn(
          { path: this.c.tree.pathOf(node) },
          "its folder was removed elsewhere; the note goes a level up, as what the folder held did",
        );
        this.c.tree.removeFolder(folderId);
      }
    }
  }

  /**
   * A note made here got its id. A note of its name it took the name from at a restart (see
   * VfsCore.shadowedBy) and is not what the create made shows again beside it; a note kept local
   * while the create was on its way is bound to it (Claims.created).
   */
  async created(node: FileNode, meta: TxtFile): Promise<void> {
    // An answer replayed for a create sent again (its Idempotency-Key, after a lost answer) is the
    // note as it was made: a newer version the listing or the feed brought meanwhile stands.
    const known = this.c.tree.files.get(meta.id)?.meta;
    const newer = known && revisionOf(known.etag) > revisionOf(meta.etag);
    this.c.tree.bindFile(node, newer ? { ...meta, ...known } : meta);
    // Deleted elsewhere since (the answer came again after a lost one, the feed's delete before it).
    this.noteDeletedMeanwhile(meta.id);
    const shadowed = this.c.shadowedBy.get(node);
    this.c.shadowedBy.delete(node);
    const parent = shadowed?.parent;
    if (shadowed?.id && shadowed.id !== meta.id && parent && this.c.tree.files.get(shadowed.id) === shadowed)
      if (![...parent.children.values()].includes(shadowed)) this.c.tree.addChild(parent, shadowed, true);
    await this.claims.created(node, meta);
  }

  private noteDeletedMeanwhile(id: string): void {
    const change = this.c.follower.takeDeleteOf(id);
    if (change) this.deletedMeanwhile.push(change);
  }

  /** The name and folder a note has here, to send when it was renamed or moved. */
  private placeOf(node: FileNode): { name: string; folderId: string | null } {
    return { name: node.remoteName, folderId: node.parent.id };
  }

  /**
   * One note's new content (If-Match its base), with its new name and folder when it moved: one
   * request (vim's save, which renames, waited in `fsync` for two). A 412 keeps both, or applies
   * ours on a metadata-only change; the move is applied first then (a rename never conflicts).
   * Sent apart before, the rename's new version stood for our base, so the body then overwrote an
   * edit made elsewhere since the base was read (a regression test has it).
   */
  private async update(
    node: FileNode,
    content: string,
    base: Base,
    move: boolean,
    superseded?: string[],
  ): Promise<{ meta: TxtFile; body: string }> {
    const sent = node.note?.pendingMeta;
    const place = move ? this.placeOf(node) : {};
    try {
      const meta = withoutContent(
        await this.c.client.updateFile(node.id!, { content, ...sent, ...place }, { ifMatch: base?.etag }),
      );
      node.note?.metaDelivered(sent);
      this.conflicts.replaced(node.id!, base, meta);
      this.c.tree.upsertFile(meta, true);
      return { meta, body: content };
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 412)) throw err;
      if (move) {
        const moved = withoutContent(await this.c.client.updateFile(node.id!, place));
        this.c.tree.upsertFile(moved, landedOnBase(moved, base));
      }
      return this.conflicts.afterPreconditionFailed(node, content, base, superseded);
    }
  }

  /**
   * Saves gather for a moment before they are delivered, so a burst (a shell loop, `cp -r`, a
   * build) goes up in a few bulk requests instead of one each, and `echo x > note` (truncate,
   * flush, write, flush) never sends its empty step. Delivery starts once no save came for
   * DELIVERY_QUIET_MS, at the latest DELIVERY_MAX_WAIT_MS after the first one waiting, or as soon
   * as BURST_ITEMS are waiting; fsync(2), `txtfs sync`, unmount and operations that need a note
   * on the service (settle) deliver at once.
   * While the service is unreachable, its retry timer does.
   */
  deliverSoon(): void {
    if (this.unreachable) return;
    const now = Date.now();
    // A round now would stop at the delete the last one left for its grace (rm -rf: each unlink
    // would start a round that takes nothing).
    const held = (this.heldUntil ?? 0) > now;
    // What the running round took stays in the journal until answered: it is not waiting.
    if (this.c.journal.size - (this.round?.size ?? 0) >= BURST_ITEMS && !held) {
      // A burst: the round starts once this operation is done, or right after the one on its
      // way. Not on a timer, which each save of the burst would put off again (saves less than a
      // millisecond apart: due timers run only between them, and never did in a fast loop).
      clearTimeout(this.replayTimer);
      this.replayTimer = undefined;
      this.gatheringSince = undefined;
      if (!this.burstStart)
        this.burstStart = setImmediate(() => {
          this.burstStart = undefined;
          void this.deliver();
        });
      return;
    }
    this.gatheringSince ??= now;
    const wait = Math.max(
      Math.min(DELIVERY_QUIET_MS, this.gatheringSince + DELIVERY_MAX_WAIT_MS - now),
      (this.heldUntil ?? 0) - now,
    );
    clearTimeout(this.replayTimer);
    this.replayTimer = setTimeout(
      () => {
        this.replayTimer = undefined;
        this.gatheringSince = undefined;
        void this.deliver();
      },
      Math.max(0, wait),
    );
    this.replayTimer.unref();
  }

  scheduleReplay(delayMs: number): void {
    if (this.replayTimer || this.c.stopped) return;
    this.replayTimer = setTimeout(() => {
      this.replayTimer = undefined;
      void this.deliver();
    }, delayMs);
    this.replayTimer.unref();
  }

  /**
   * Delivers the journal (one delivery at a time; saves arriving while it runs are taken along).
   * Resolves when it is empty or the service is unreachable (then it retries every 2 s).
   */
  deliver(): Promise<void> {
    if (this.replaying) {
      this.replayAgain = true;
      return this.replaying;
    }
    const run = async () => {
      do {
        this.replayAgain = false;
        let delivered: boolean;
        try {
          delivered = await this.replay();
          if (!delivered) this.c.reports.reachability(false);
        } catch (err) {
          // Not the service but this machine: the cache dir's disk full, or the dir removed. What
          // is pending stays in the journal (and in memory); the round is tried again as while the
          // service is unreachable, and the daemon goes on (a rejection nobody awaited ended it).
          this.c.log.error({ err: (err as Error).message }, "delivery failed here; trying again in 2 s");
          delivered = false;
        }
        this.unreachable = !delivered;
      } while (this.replayAgain && !this.unreachable);
      if (this.unreachable) this.scheduleReplay(2000);
      else if (this.heldUntil !== undefined || this.createsHeldUntil !== undefined) {
        const until = Math.min(
          this.heldUntil ?? Number.POSITIVE_INFINITY,
          this.createsHeldUntil ?? Number.POSITIVE_INFINITY,
        );
        this.scheduleReplay(Math.max(0, until - Date.now()));
      }
    };
    this.replaying = run().finally(() => {
      this.replaying = undefined;
    });
    return this.replaying;
  }

  /**
   * Waits until every save is on the service, or the service is found unreachable. Returns the
   * number of saves still journalled (`txtfs sync`, fsync, unmount).
   */
  async drain(): Promise<number> {
    this.draining++;
    try {
      while (this.replaying || this.c.journal.size > 0) {
        await (this.replaying ?? this.deliver());
        if (this.unreachable) break;
      }
    } finally {
      this.draining--;
    }
    return this.c.journal.size;
  }

  /**
   * Remote operations on a note (rename, delete, metadata) come after its journalled save, or a
   * note still being created would be renamed or deleted before it exists.
   */
  async settle(node: Node | undefined): Promise<void> {
    const key =
      node?.kind === "file"
        ? journalKey(node)
        : node?.kind === "dir" && node.createKey
          ? dirKey(node)
          : undefined;
    if (!key || !this.c.journal.get(key)) return;
    // Into a black-holed link the round waits a write's deadline (a minute): a program is told
    // EIO once the service was silent for a read deadline, and the save goes on in the journal.
    const drained = this.drain();
    try {
      await whileAnswering(drained, this.c.client);
    } catch (err) {
      if (!(err instanceof Unanswered)) throw err;
      void drained.catch(() => {}); // its outcome is the journal's (delivered, or tried again)
      throw fail("EIO", `${err.message} and this item's change is still on its way`);
    }
    if (this.c.journal.get(key))
      throw fail("EIO", "the service is unreachable and this item's change is still on its way");
  }

  async reloadNote(id: string): Promise<void> {
    const remote = await this.c.client.readFile(id).catch(() => undefined);
    if (remote) this.c.tree.upsertFile(withoutContent(remote));
  }

  /** Every write-behind save is delivered through the journal: only a catch-up is worth an info line. */
  logDelivered(path: string, msg: string): void {
    if (this.unreachable) this.c.log.info({ path }, msg);
    else this.c.log.debug({ path }, msg);
  }

  /** Sends journalled writes in order. False when it stopped because the service is unreachable. */
  async replay(): Promise<boolean> {
    const atStart = new Set(this.c.journal.pending());
    const taken = this.takeRound();
    this.round = new Set(taken.map((e) => Journal.keyOf(e)));
    try {
      return await this.replayRound(new Set(taken), atStart);
    } finally {
      this.round = undefined;
      // Nothing of theirs is on its way now: a note is removed, or its newer save creates it again.
      for (const change of this.deletedMeanwhile.splice(0)) this.c.follower.apply(change);
    }
  }

  private async replayRound(before: Set<JournalEntry>, atStart: Set<JournalEntry>): Promise<boolean> {
    if (!(await this.bulk.replayInBulk(before))) return false;
    for (const entry of this.c.journal.pending()) {
      if (!before.has(entry)) {
        // Saved while the round went: the next round takes it (in bulk, with others). Left for
        // its grace (or behind one): the timer set when the delivery ends does.
        if (!atStart.has(entry)) this.replayAgain = true;
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
          await this.sendFolder(entry);
        } catch (err) {
          if (isTransient(err)) return false;
          await this.folderRefused(entry, err);
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
        const { meta, body } = await this.send(node, entry.content, base, entry.move, entry.superseded);
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
        this.logDelivered(entry.path, "journalled write delivered");
      } catch (err) {
        if (isTransient(err)) return false;
        if (entry.move && entry.content === undefined && err instanceof ApiError && err.status === 404)
          await this.renamedButDeleted(entry, node);
        else await this.refused(entry, node, err as Error);
      }
    }
    return true;
  }

  /**
   * A rename alone (no body waiting) of a note deleted elsewhere before it went: the delete
   * stands, as for a note with nothing waiting (lifecycle.ts); kept as a refused save, the note
   * would stay listed under its new name for good and every open of it fail with ENOENT. A save
   * made since is a newer entry: it keeps the note in view and creates it again when delivered.
   */
  private async renamedButDeleted(entry: JournalEntry, node: FileNode): Promise<void> {
    this.c.log.info(
      { path: entry.path },
      "renamed here and deleted elsewhere before the rename went: the delete stands",
    );
    await this.c.journal.done(entry);
    if (node.id) this.c.tree.remoteDelete(node.id);
  }

  /**
   * The service refused a save for good (e.g. a limit): its bytes are kept as a local file,
   * visibly, and it is said in the log, `txtfs sync` (which then fails) and `txtfs status`.
   */
  async refused(entry: JournalEntry, node: FileNode, err: Error): Promise<void> {
    const reason = err.message;
    let keptAs: string | undefined;
    if (entry.content !== undefined) {
      const kept = this.c.localNodes.make(
        node.parent,
        this.c.freeName(node.parent, unsentName(node.name)),
        0o644,
        Buffer.from(entry.content, "utf8"),
      );
      keptAs = this.c.tree.pathOf(kept);
    }
    this.c.log.error(
      { err, path: entry.path, keptAs },
      "the service refused a save; its bytes are kept as a local file",
    );
    this.c.reports.saveRefused({ path: entry.path, reason, keptAs, at: new Date().toISOString() });
    await this.c.journal.done(entry);
    this.c.notes.of(node).refused();
    if (!node.id) this.c.tree.detach(node); // never created: its bytes are in the kept file
    // A refused rename: show the note where the service has it.
    if (entry.move && node.id) await this.reloadNote(node.id);
  }

  /** A folder made here, to the service on its own (its Idempotency-Key: the create's key). */
  async sendFolder(entry: JournalEntry): Promise<void> {
    const dir = this.c.pendingDirs.get(Journal.keyOf(entry));
    if (!dir?.parent) return this.c.journal.done(entry); // removed here since it was journalled
    if (this.c.isPending(dir.parent)) return; // its own folder first
    const parentFolderId = dir.parent.id;
    await this.createOnItsWay("folder", entry.name, parentFolderId, async () =>
      this.folderMade(
        entry,
        await this.c.client.createFolder({ name: entry.name, parentFolderId }, entry.createKey),
      ),
    );
  }

  /**
   * A create sent on its own, with what binds its answer to the note or folder shown here: the
   * feed's records of what it made wait until then (createsOnTheirWay.ts).
   */
  private async createOnItsWay<T>(
    kind: "file" | "folder",
    name: string,
    parent: string | null,
    create: () => Promise<T>,
  ): Promise<T> {
    const answered = this.c.createsOnTheirWay.single(kind, name, parent);
    try {
      return await create();
    } finally {
      answered();
      this.c.follower.releaseHeld();
    }
  }

  async folderMade(entry: JournalEntry, folder: TxtFolder): Promise<void> {
    const key = Journal.keyOf(entry);
    const dir = this.c.pendingDirs.get(key);
    this.c.pendingDirs.delete(key);
    if (dir) {
      this.c.tree.bindFolder(dir, folder);
      this.noteDeletedMeanwhile(folder.id);
      this.attributes.keepFolderAttrs(dir); // its mode and times, kept by id from now on
      this.c.unshadowDir(dir, folder.id); // as a note does (created)
    }
    await this.c.journal.rebind(key, folder.id);
    await this.c.journal.done(entry);
    this.replayAgain = true; // what waited for it goes next
    this.logDelivered(entry.path, "folder created");
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

  /** After a restart: show journalled writes in the tree right away (restoreJournal.ts), then deliver them. */
  restoreJournal(entries: JournalEntry[]): void {
    restoreJournal(this.c, this.renames, entries);
    if (entries.length) this.deliverSoon();
  }
}

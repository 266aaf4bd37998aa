// The journal delivered in bulk (POST /api/v1/sync, delivery/bulk.ts): bursts of creates, edits,
// renames, deletes and appends as requests kept on disk until answered, and each answer applied to
// the note it is for. What a bulk refused as a whole goes one by one (journalReplay.ts).
import { randomUUID } from "node:crypto";
import type { FolderRef } from "../../client/api.ts";
import type { TxtFile } from "../../lib/apiTypes.ts";
import { contentHash } from "../../lib/contentHash.ts";
import { baseOf } from "../base.ts";
import type { Conflicts } from "../conflicts.ts";
import type { VfsCore } from "../core.ts";
import { isTransient } from "../errors.ts";
import type { Attributes } from "../meta/attributes.ts";
import { carries } from "../meta/xattrs.ts";
import { revisionOf } from "../revisions.ts";
import type { DirNode } from "../tree.ts";
import {
  BULK_ITEMS,
  type Bulk,
  type BulkItem,
  type BulkResult,
  bulksOf,
  DRAIN_BULK_ITEMS,
  pushBulk,
} from "./bulk.ts";
import type { Deletes } from "./deletes.ts";
import type { DeliveryRounds } from "./deliveryRounds.ts";
import type { FolderDelivery } from "./folderDelivery.ts";
import { Journal, type JournalEntry } from "./journal.ts";
import { dirKey, journalKey } from "./journalKeys.ts";
import type { JournalSaves } from "./journalSaves.ts";
import { landedOnBase } from "./landedOnBase.ts";
import type { NoteSend } from "./noteSend.ts";

export interface BulkDeliveryParts {
  attributes: Pick<Attributes, "rememberTimes" | "showRemoteVersion">;
  conflicts: Pick<Conflicts, "ownSuccessor" | "replaced">;
  deletes: Pick<Deletes, "base" | "delivered" | "undone">;
  folderDelivery: Pick<FolderDelivery, "folderMade">;
  journalSaves: Pick<JournalSaves, "journalSave">;
  noteSend: Pick<NoteSend, "created" | "refused">;
  rounds: Pick<DeliveryRounds, "drainWaiting" | "logDelivered">;
}

export type BulkDeliveryCore = Pick<
  VfsCore,
  | "cache"
  | "client"
  | "createsOnTheirWay"
  | "follower"
  | "isPending"
  | "journal"
  | "log"
  | "nodeFor"
  | "notes"
  | "pendingDirs"
  | "tree"
>;

export class BulkDelivery {
  private readonly c: BulkDeliveryCore;
  private readonly attributes: BulkDeliveryParts["attributes"];
  private readonly conflicts: BulkDeliveryParts["conflicts"];
  private readonly deletes: BulkDeliveryParts["deletes"];
  private readonly folderDelivery: BulkDeliveryParts["folderDelivery"];
  private readonly journalSaves: BulkDeliveryParts["journalSaves"];
  private readonly noteSend: BulkDeliveryParts["noteSend"];
  private readonly rounds: BulkDeliveryParts["rounds"];

  constructor(c: BulkDeliveryCore, parts: BulkDeliveryParts) {
    this.c = c;
    this.attributes = parts.attributes;
    this.conflicts = parts.conflicts;
    this.deletes = parts.deletes;
    this.folderDelivery = parts.folderDelivery;
    this.journalSaves = parts.journalSaves;
    this.noteSend = parts.noteSend;
    this.rounds = parts.rounds;
  }

  /**
   * An append left after the bulk round (its bulk was refused as a whole): alone, still as a bulk
   * request kept on disk until answered. False when the service is unreachable.
   */
  async appendAlone(entry: JournalEntry): Promise<boolean> {
    const node = this.c.nodeFor(entry);
    const item: BulkItem = {
      key: Journal.keyOf(entry),
      rev: entry.rev,
      op: "file.append",
      target: entry.fileId!,
      body: { content: entry.content ?? "" },
    };
    const bulk: Bulk = { idempotencyKey: randomUUID(), items: [item] };
    this.c.journal.setInflightBulk(bulk);
    let r: BulkResult | undefined;
    try {
      r = (await pushBulk(this.c.client, bulk)).find((x) => x.item.key === item.key);
    } catch (err) {
      if (isTransient(err)) return false;
      this.c.journal.setInflightBulk(undefined);
      await this.noteSend.refused(entry, node, err as Error);
      return true;
    }
    this.c.journal.setInflightBulk(undefined);
    if (r?.meta) await this.appendDelivered(entry, r.item, r.meta);
    else if (r?.gone) await this.appendToDeleted(entry);
    else
      await this.noteSend.refused(
        entry,
        node,
        new Error(`the service refused the append (${r?.status ?? "no answer"})`),
      );
    return true;
  }

  /**
   * The bulk request about to go (kept on disk until answered), or none once its answer is applied:
   * the feed's records of what it creates wait until then (createsOnTheirWay.ts).
   */
  private bulkOnItsWay(bulk: Bulk | undefined): void {
    this.c.journal.setInflightBulk(bulk);
    this.c.createsOnTheirWay.setBulk(bulk);
    if (!bulk) this.c.follower.releaseHeld();
  }

  /**
   * Bursts of saves go up in bulk (journalSync.ts): new notes and edits of existing ones. False
   * when the service is unreachable (the bulk on its way is then sent again, unchanged).
   */
  async replayInBulk(taken: Iterable<JournalEntry>): Promise<boolean> {
    const waiting = this.c.journal.inflightBulk<Bulk>();
    for (const bulk of waiting ? [waiting] : this.nextBulks(taken)) {
      let results: BulkResult[];
      this.bulkOnItsWay(bulk);
      try {
        results = await pushBulk(this.c.client, bulk);
      } catch (err) {
        if (isTransient(err)) return false;
        // Refused as a whole (nothing was applied): the saves go one by one.
        this.c.log.debug({ err }, "bulk delivery refused; delivering one by one");
        this.bulkOnItsWay(undefined);
        return true;
      }
      for (const r of results) {
        // Not the entry of a line done since the request was made (a bulk sent again after a
        // restart: its answer is about saves already delivered, not about those made after).
        const entry = this.c.journal.ofItem(r.item.key, r.item.rev);
        if (entry?.delete) {
          if (r.status < 300 || r.gone) await this.deletes.delivered(entry);
          else if (r.conflict) await this.deletes.undone(entry, "it changed remotely since it was read");
        } else if (entry?.folder) {
          if (r.folder) await this.folderDelivery.folderMade(entry, r.folder);
        } else if (entry && r.item.op === "file.append") {
          // (The entry may be a whole body by now, written over the appends while they went.)
          if (r.meta) await this.appendDelivered(entry, r.item, r.meta);
          else if (r.gone) await this.appendToDeleted(entry);
        } else if (entry && r.meta) await this.applyBulkItem(entry, r.item, r.meta);
      }
      this.bulkOnItsWay(undefined);
    }
    return true;
  }

  /** The journal's new notes, edits, renames and deletes, as bulk requests (none for fewer than two). */
  nextBulks(taken: Iterable<JournalEntry>): Bulk[] {
    const items: BulkItem[] = [];
    let attachmentsBefore = false;
    const attachmentPaths = new Set<string>();
    for (const e of taken) {
      if (e.attachment) {
        attachmentsBefore = true; // bytes, each in a request of its own (attachmentDelivery.ts)
        attachmentPaths.add(e.path);
        continue;
      }
      // A note taking a name an attachment's entry before it frees (a file that is text again)
      // goes after it, one by one, in order: sent first, it would meet the name taken.
      if (attachmentPaths.has(e.path)) break;
      // A folder's delete goes after the attachments' entries before it (one by one, in order):
      // sent first, it would move what is in it up a level, and their deletes would meet a 412.
      if (e.delete === "folder" && attachmentsBefore) break;
      if (e.delete) {
        const base = e.delete === "file" ? this.deletes.base(e) : undefined;
        items.push({
          key: Journal.keyOf(e),
          rev: e.rev,
          op: `${e.delete}.delete`,
          target: e.fileId!,
          baseEtag: base,
        });
        continue;
      }
      if (e.folder) {
        const dir = this.c.pendingDirs.get(Journal.keyOf(e));
        const parentFolderId = dir?.parent && this.refTo(dir.parent);
        if (dir)
          items.push({
            key: Journal.keyOf(e),
            rev: e.rev,
            op: "folder.create",
            body: { name: e.name, parentFolderId },
          });
        continue;
      }
      if (!e.fileId) {
        if (e.content === undefined) continue;
        const node = this.c.nodeFor(e);
        const body = { name: node.remoteName, content: e.content, folderId: this.refTo(node.parent) };
        items.push({
          key: journalKey(node),
          rev: e.rev,
          op: "file.create",
          body: { ...body, ...node.note?.pendingMeta },
        });
        continue;
      }
      if (e.append) {
        // Renamed since: the rename settles the appends first (namespace/renames.ts), so not here.
        if (!e.move && e.content)
          items.push({
            key: Journal.keyOf(e),
            rev: e.rev,
            op: "file.append",
            target: e.fileId,
            body: { content: e.content },
          });
        continue;
      }
      if (!e.baseEtag) continue;
      const base = this.conflicts.ownSuccessor(e.fileId, { etag: e.baseEtag, hash: e.baseHash ?? "" })!;
      const update = {
        key: Journal.keyOf(e),
        rev: e.rev,
        op: "file.update" as const,
        target: e.fileId,
        baseEtag: base.etag,
      };
      // A rename alone never conflicts; with an edit it carries the edit's base (on a conflict the
      // one-by-one path renames, then keeps both versions).
      const place = e.move ? { name: e.name, folderId: this.refTo(this.c.nodeFor(e).parent) } : {};
      const move = e.move && e.content === undefined;
      items.push({
        ...update,
        move,
        body: { ...place, content: e.content, ...this.c.nodeFor(e).note?.pendingMeta },
      });
    }
    // Appends always go in bulk: the request is kept on disk until answered, so an append whose
    // answer was lost is sent again as the same request and never applied twice.
    if (items.length < 2 && !items.some((i) => i.op === "file.append")) return [];
    return bulksOf(items, this.rounds.drainWaiting ? DRAIN_BULK_ITEMS : BULK_ITEMS);
  }

  /** A folder in a bulk request: its id, or a reference to the item of the same request creating it. */
  refTo(dir: DirNode): FolderRef {
    return this.c.isPending(dir) ? { ref: dirKey(dir) } : dir.id;
  }

  /** Bytes appended in bulk are on the service: the note is `meta` now; appends made since stay in line. */
  async appendDelivered(entry: JournalEntry, item: BulkItem, meta: TxtFile): Promise<void> {
    const node = this.c.nodeFor(entry);
    // The version it went onto is the one this mount showed when nothing else came between (the
    // revision moved by exactly one): a save opened on that version since builds on ours, it is
    // no conflict (`> note` right after `>> note`). Otherwise someone else's change came between,
    // and such a save must not silently replace it.
    const before = node.meta;
    const next = !!before && revisionOf(meta.etag) === revisionOf(before.etag) + 1;
    if (next) this.conflicts.replaced(meta.id, baseOf(before), meta);
    // The version it went onto is cached: the one it made is that plus these bytes, unless someone
    // else's change came between (then its hash differs, and the note is fetched when read).
    const onto = before && this.c.cache.fresh(meta.id, before.etag);
    if (onto && item.body?.content !== undefined) {
      const made = Buffer.concat([onto, Buffer.from(item.body.content, "utf8")]);
      if (contentHash(made) === meta.contentHash) this.c.cache.set(meta.id, meta.etag, made);
    }
    this.c.tree.upsertFile(meta, true);
    await this.c.journal.done(entry.rev === item.rev ? entry : { ...entry }, meta, item.body?.content);
    this.c.notes.of(node).refreshSize();
    // They went onto a version this mount had not shown: the kernel may hold a size short of it.
    if (!next && !this.c.notes.appendsOnTheirWay(node)) this.attributes.showRemoteVersion(node);
    this.attributes.rememberTimes(node);
    this.rounds.logDelivered(entry.path, "journalled append delivered (bulk)");
  }

  /**
   * The note appended to was deleted remotely: the appended bytes are all this mount has of it, so
   * they become the note again (as a save to a deleted note does: nothing written here is lost).
   */
  async appendToDeleted(entry: JournalEntry): Promise<void> {
    const node = this.c.nodeFor(entry);
    this.c.log.warn(
      { path: entry.path },
      "note appended to was deleted remotely; saving the appended text as it",
    );
    await this.c.journal.done(entry);
    if (node.id) this.c.tree.removeFile(node.id);
    node.id = null;
    node.meta = null;
    node.createKey = randomUUID();
    this.c.tree.addChild(node.parent, node, true); // beside another of its name (see NoteSend.send)
    await this.journalSaves.journalSave(node, Buffer.from(entry.content ?? "", "utf8"), null);
  }

  /** A save the service took in bulk: the note now has `meta`; a newer save of it stays in line. */
  async applyBulkItem(entry: JournalEntry, item: BulkItem, meta: TxtFile): Promise<void> {
    const body = item.body ?? {};
    const node = this.c.nodeFor(entry);
    // A rename alone (sent without a base) is a version to build on only if it landed on the
    // content it was based on (landedOnBase), as in replayRound.
    const base = entry.baseHash ? { etag: entry.baseEtag ?? "", hash: entry.baseHash } : null;
    const ours = body.content !== undefined || landedOnBase(meta, base);
    if (item.op === "file.create") await this.noteSend.created(node, meta);
    else {
      if (ours) this.conflicts.replaced(meta.id, { etag: item.baseEtag!, hash: "" }, meta);
      this.c.tree.upsertFile(meta, ours);
    }
    if (body.content !== undefined) this.c.cache.set(meta.id, meta.etag, Buffer.from(body.content, "utf8"));
    const pending = node.note?.pendingMeta;
    if (pending && carries(body, pending)) node.note?.metaDelivered(pending);
    // Saved again (or renamed) since the bulk left: that newer save is rebased on `meta` (a copy
    // of the entry tells `done` so), otherwise the entry is delivered.
    await this.c.journal.done(entry.rev === item.rev ? entry : { ...entry }, ours ? meta : undefined);
    const open = node.note?.open;
    const rebase = open && (body.content !== undefined || landedOnBase(meta, open.base));
    this.c.notes.of(node).delivered({
      newerWaits: this.c.journal.get(journalKey(node)) !== undefined,
      landed: rebase ? baseOf(meta) : undefined,
    });
    this.attributes.rememberTimes(node);
    this.rounds.logDelivered(entry.path, "journalled write delivered (bulk)");
  }
}

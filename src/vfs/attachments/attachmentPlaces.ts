// The service's attachments in the tree: the listing's and the change feed's records become local
// nodes bound to them (binding.ts), indexed by id. A record is applied to a file only while
// nothing of ours waits for it (no save in the journal, not open for writing): otherwise the
// delivery's If-Match decides (a conflict keeps both), as for a note.
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import type { TxtAttachment } from "../../lib/apiTypes.ts";
import { journalKeyOf } from "../../lib/journalFiles.ts";
import type { Logger } from "../../lib/logger.ts";
import type { Journal } from "../delivery/journal.ts";
import type { LocalFiles } from "../local/localFiles.ts";
import type { LocalNodes } from "../local/localNodes.ts";
import { isNoteName } from "../names.ts";
import type { DirNode, LocalNode, Tree } from "../tree.ts";
import { type AttachmentBinding, boundTo, remoteBinding } from "./binding.ts";

export interface AttachmentPlacesDeps {
  tree: Tree;
  local: Pick<LocalFiles, "dir" | "remove">;
  localNodes: Pick<LocalNodes, "flush" | "save">;
  journal: Pick<Journal, "get">;
  /** Whether a program has `node` open for writing now (its bytes may change under a record). */
  openForWriting(node: LocalNode): boolean;
  log: Logger;
}

/** The journal key of an attachment's entries: its id, or its create's key before it has one. */
export const attachmentKey = (b: AttachmentBinding): string =>
  journalKeyOf({ fileId: b.id, createKey: b.createKey });

/** The folder id an attachment is in on the service (null: the top of the account). */
export const folderIdOf = (tree: Pick<Tree, "root">, node: LocalNode): string | null =>
  node.parent === tree.root ? null : node.parent.id;

export class AttachmentPlaces {
  private readonly d: AttachmentPlacesDeps;
  /** Every bound attachment node, by its id. */
  readonly byId = new Map<string, LocalNode>();
  /** Files made here whose create has not been answered, by its key. */
  readonly pendingCreates = new Map<string, LocalNode>();
  /** Ids deleted here whose delete is on its way: neither the listing nor the feed shows them. */
  readonly deleting = new Set<string>();
  /**
   * Records for a name where a create of ours waits for its answer: it may be what that create
   * made (the feed is often faster than the answer). Applied once the answer says it is not.
   */
  private readonly held = new Map<string, TxtAttachment>();
  /** Records whose folder this mount has not heard of yet, by id (`folderKnown` applies them). */
  private readonly awaitingFolder = new Map<string, TxtAttachment>();

  constructor(deps: AttachmentPlacesDeps) {
    this.d = deps;
  }

  /** A new blob's path (not made yet: a remote-only attachment's bytes go there at its first open). */
  newBlob(): string {
    return join(this.d.local.dir, randomUUID());
  }

  /** Something of ours waits for `node`: its record is not applied over it. */
  private waits(node: LocalNode, b: AttachmentBinding): boolean {
    return this.d.journal.get(attachmentKey(b)) !== undefined || this.d.openForWriting(node);
  }

  private parentOf(record: TxtAttachment): DirNode | undefined {
    if (record.folderId === null) return this.d.tree.root;
    return this.d.tree.dirs.get(record.folderId);
  }

  /** The node a journal entry of an attachment is for (none: removed or unbound since). */
  nodeOf(e: { fileId: string | null; createKey: string }): LocalNode | undefined {
    const node = e.fileId ? this.byId.get(e.fileId) : this.pendingCreates.get(e.createKey);
    return node?.attachment && this.d.tree.locals.has(node) ? node : undefined;
  }

  /** A record from the listing or the feed. */
  apply(record: TxtAttachment): void {
    if (this.deleting.has(record.id)) return;
    // In a folder this mount has not heard of yet (made elsewhere; the feed can bring a file before
    // its folder, one renamed right after it was made): applied once the folder is here.
    if (!this.parentOf(record)) {
      this.awaitingFolder.set(record.id, record);
      return;
    }
    this.awaitingFolder.delete(record.id);
    const node = this.byId.get(record.id);
    if (!node) {
      this.add(record);
      return;
    }
    const b = node.attachment!;
    if (record.revision <= b.revision || this.waits(node, b)) return;
    const tree = this.d.tree;
    const parent = this.parentOf(record);
    if (record.contentHash !== b.hash) {
      // Changed elsewhere: the bytes here are stale; the next open reads the new ones.
      if (!b.remoteOnly) this.d.local.remove(node.blob);
      node.blob = this.newBlob();
      b.remoteOnly = true;
    }
    boundTo(b, record);
    if (isNoteName(record.name)) node.keptNote = true;
    node.size = record.size;
    node.mtimeMs = node.ctimeMs = Date.parse(record.updatedAt);
    node.atimeMs = undefined;
    if (parent && (parent !== node.parent || record.name !== node.name)) {
      if (!parent.children.has(record.name)) tree.move(node, parent, record.name);
    }
    tree.onChange(node);
    tree.onRemoteChange(node);
    this.d.localNodes.save();
  }

  /** A folder is in the tree now: the records that waited for it are applied. */
  folderKnown(): void {
    for (const record of [...this.awaitingFolder.values()]) if (this.parentOf(record)) this.apply(record);
  }

  private add(record: TxtAttachment): void {
    const parent = this.parentOf(record);
    if (!parent || parent.localOnly) return; // a folder this mount keeps local (its files are its own)
    const taken = parent.children.get(record.name);
    if (taken) {
      // Ours waits to go there (a create, or a move the service may refuse as taken): held, shown
      // once that answer says whose the name is.
      if (
        taken.kind === "local" &&
        taken.attachment &&
        (taken.attachment.id === null || this.waits(taken, taken.attachment))
      )
        this.held.set(record.id, record);
      else
        this.d.log.warn(
          { name: record.name },
          "an attachment's name is taken here: not shown until it is free",
        );
      return;
    }
    const node: LocalNode = {
      kind: "local",
      name: record.name,
      parent,
      blob: this.newBlob(),
      mode: 0o644,
      size: record.size,
      mtimeMs: Date.parse(record.updatedAt),
      attachment: remoteBinding(record),
      // A note's name: bytes that are not UTF-8, made as a note elsewhere; text again, it is one.
      ...(isNoteName(record.name) ? { keptNote: true as const } : {}),
    };
    this.byId.set(record.id, node);
    this.d.tree.addChild(parent, node);
    this.d.tree.onRemoteChange(node);
  }

  /** Our create was answered with `record`: the node is that attachment (held records of it drop). */
  created(node: LocalNode, record: TxtAttachment): void {
    const other = this.byId.get(record.id);
    if (other && other !== node) this.forget(other);
    this.pendingCreates.delete(node.attachment!.createKey);
    boundTo(node.attachment!, record);
    this.byId.set(record.id, node);
    this.held.delete(record.id);
    // Records held for that name were someone else's: shown now (named apart if they collide).
    const parent = this.parentOf(record);
    if (parent) this.nameFreed(parent, record.name);
    // Recorded before its create's entry goes: a kill -9 in between would find a file made here
    // and never created, and name it apart from the listed one it is.
    this.d.localNodes.save();
    this.d.localNodes.flush();
  }

  /** Ours is settled away from (or at) `name` in `dir`: records held for that name show now. */
  nameFreed(dir: DirNode, name: string): void {
    for (const [id, held] of [...this.held])
      if (held.name === name && this.parentOf(held) === dir) {
        this.held.delete(id);
        this.apply(held);
      }
  }

  /** The feed says attachment `id` is gone. A save of ours waiting for it keeps it (the save creates it again). */
  removed(id: string): void {
    this.held.delete(id);
    this.awaitingFolder.delete(id);
    const node = this.byId.get(id);
    if (!node || this.deleting.has(id)) return;
    if (this.waits(node, node.attachment!)) return;
    this.forget(node);
    this.d.tree.onRemoteChange(node);
  }

  /** Drops a bound node from the tree and its bytes from the cache dir. */
  forget(node: LocalNode): void {
    const b = node.attachment!;
    if (b.id && this.byId.get(b.id) === node) this.byId.delete(b.id);
    if (!b.remoteOnly) this.d.local.remove(node.blob);
    this.d.tree.detach(node);
    this.d.localNodes.save();
  }

  /** The whole list again (mount time, SIGHUP, an expired cursor): what is gone and clean goes. */
  relist(records: TxtAttachment[]): void {
    const seen = new Set(records.map((r) => r.id));
    for (const r of records) this.apply(r);
    for (const [id, node] of [...this.byId])
      if (!seen.has(id) && !this.deleting.has(id) && !this.waits(node, node.attachment!)) this.forget(node);
  }
}

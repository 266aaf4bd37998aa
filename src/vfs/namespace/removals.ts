// Removing notes and folders: unlink(2) and rmdir(2). Deletes of what the user owns are
// write-behind (journalled, a tombstone left for the name); what never left is simply forgotten.

import { ApiError } from "../../client/api.ts";
import type { Attachments } from "../attachments/attachments.ts";
import { baseOf } from "../base.ts";
import type { Conflicts } from "../conflicts.ts";
import type { VfsCore } from "../core.ts";
import type { Delivery } from "../delivery/deliver.ts";
import { dirKey, journalKey } from "../delivery/journalKeys.ts";
import { fail, toVfsError, VfsError } from "../errors.ts";
import type { Claims } from "../local/claims.ts";
import type { Attributes } from "../meta/attributes.ts";
import type { DirNode, FileNode } from "../tree.ts";

/** The parts removals call. */
export interface RemovalsParts {
  attachments: Pick<Attachments, "unlinked">;
  attributes: Pick<Attributes, "sidecar">;
  claims: Pick<Claims, "leaveTombstone">;
  conflicts: Pick<Conflicts, "ownSuccessor">;
  delivery: Pick<Delivery, "deliverSoon" | "onItsWay" | "settle">;
}

/** What removals use of the mount's shared state. */
export type RemovalsCore = Pick<
  VfsCore,
  | "access"
  | "cache"
  | "checkWritable"
  | "client"
  | "find"
  | "findDir"
  | "isPending"
  | "journal"
  | "local"
  | "localNodes"
  | "notes"
  | "pendingDirs"
  | "tree"
  | "unshadowDir"
  | "unshadowNote"
  | "writeBehind"
>;

export class Removals {
  private readonly attachments: RemovalsParts["attachments"];
  private readonly attributes: RemovalsParts["attributes"];
  private readonly claims: RemovalsParts["claims"];
  private readonly conflicts: RemovalsParts["conflicts"];
  private readonly delivery: RemovalsParts["delivery"];
  private readonly c: RemovalsCore;

  constructor(c: RemovalsCore, parts: RemovalsParts) {
    this.c = c;
    this.attachments = parts.attachments;
    this.attributes = parts.attributes;
    this.claims = parts.claims;
    this.conflicts = parts.conflicts;
    this.delivery = parts.delivery;
  }

  async rmdir(path: string): Promise<void> {
    const dir = this.c.findDir(path);
    if (dir === this.c.tree.root) throw fail("EPERM");
    this.c.checkWritable(dir);
    if (dir.children.size > 0) throw fail("ENOTEMPTY"); // POSIX: only an empty directory
    if (!dir.localOnly) this.c.access.checkFolders();
    if (dir.localOnly) {
      this.c.tree.detach(dir);
      this.c.localNodes.save();
      return;
    }
    if (this.c.isPending(dir) && (await this.dropUnsentDir(dir))) return;
    await this.delivery.settle(dir);
    await this.endRenamedAside(dir);
    if (this.deletesLater(dir)) {
      await this.deleteLater("folder", dir.id!, null, path);
      this.c.tree.removeFolder(dir.id!);
      return;
    }
    try {
      await this.c.client.deleteFolder(dir.id!);
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 404)) throw toVfsError(err);
    }
    this.c.tree.removeFolder(dir.id!);
  }

  /**
   * Notes renamed aside from `dir` (`mv d/a.md old.md~`) are still in it on the service, shown here
   * only as the files standing for them. The folder going, so do they: those files keep their
   * bytes as plain local files. (Else the service would move them up a level, beside notes of
   * their names there.)
   */
  private async endRenamedAside(dir: DirNode): Promise<void> {
    if (!dir.id || !this.c.tree.withheld.anyGhost) return;
    for (const local of [...this.c.tree.locals]) {
      const note = local.ghostOf;
      if (note?.meta?.folderId !== dir.id) continue;
      local.ghostOf = undefined;
      this.c.localNodes.save();
      if (this.c.writeBehind) await this.deleteLater("file", note.id, note.etag, this.c.tree.pathOf(local));
      else await this.deleteRemote(note.id, note.etag);
    }
  }

  async unlink(path: string): Promise<void> {
    if (!this.c.tree.lookup(path) && this.attributes.sidecar(path))
      throw fail("EPERM", "a sidecar goes away with its note");
    const node = this.c.find(path);
    if (node.kind === "dir") throw fail("EISDIR");
    this.c.checkWritable(node);
    // What an unlink does to a note depends on where it stands (lifecycle.ts): one that never left
    // is forgotten; one whose create may be on its way is deleted once it is there; otherwise the
    // delete goes in the journal (If-Match), leaving a tombstone its name can be claimed from.
    if (node.kind === "file" && this.c.notes.of(node).unlink() === "forget") {
      if (await this.dropUnsent(node)) return this.c.unshadowNote(node);
    }
    await this.delivery.settle(node);
    if (node.kind === "local") {
      await this.attachments.unlinked(node); // an attachment: deleted on the service (If-Match)
      this.c.tree.detach(node);
      // A renamed-away note (`note~`, `.fuse_hidden*` at the last close of a removed open note).
      if (node.ghostOf && this.c.writeBehind) {
        await this.deleteLater("file", node.ghostOf.id, node.ghostOf.etag, path);
        this.claims.leaveTombstone(node.parent, node.ghostOf.shownAs, {
          ...node.ghostOf,
          pendingMeta: node.pendingMeta,
        });
      } else if (node.ghostOf) await this.deleteRemote(node.ghostOf.id, node.ghostOf.etag);
      this.c.local.remove(node.blob);
      this.c.localNodes.save();
      return;
    }
    if (node.id && this.deletesLater(node)) {
      await this.deleteLater("file", node.id, node.meta?.etag ?? null, path);
      this.claims.leaveTombstone(node.parent, node.name, {
        id: node.id,
        etag: this.conflicts.ownSuccessor(node.id, baseOf(node.meta))?.etag ?? node.meta?.etag ?? "",
        hash: node.meta?.contentHash,
        name: node.remoteName,
        shownAs: node.name,
        meta: node.meta ?? undefined,
      });
    } else if (node.id) await this.deleteRemote(node.id, node.meta?.etag);
    if (node.id) this.c.tree.removeFile(node.id);
    else {
      this.c.tree.detach(node);
      this.c.unshadowNote(node);
    }
  }

  /**
   * Deletes are write-behind too (rm -rf returns at once; a burst goes up in bulk), for what the
   * user owns: deleting someone else's shared item is refused by the service, and that answer
   * must reach the program that asked.
   */
  deletesLater(node: FileNode | DirNode): boolean {
    return this.c.writeBehind && (node.meta?.role ?? "owner") === "owner";
  }

  async deleteLater(kind: "file" | "folder", id: string, etag: string | null, path: string) {
    this.c.tree.withheld.deleteStarted(id);
    const entry = { fileId: id, createKey: "", name: "", folderId: null, baseEtag: etag, path, delete: kind };
    await this.c.journal.put(entry, false);
    this.delivery.deliverSoon();
  }

  /**
   * A note whose create has not left yet is deleted by forgetting it: `echo x > tmp.md; rm tmp.md`
   * costs no request. True if that was the case.
   */
  async dropUnsent(node: FileNode): Promise<boolean> {
    const key = journalKey(node);
    const entry = this.c.journal.get(key);
    if (node.id || !entry || this.delivery.onItsWay(key) || node.note?.open) return false;
    await this.c.journal.done(entry);
    node.note?.forgotten();
    this.c.tree.detach(node);
    return true;
  }

  /** A folder whose create has not left yet is removed by forgetting it (mkdir -p, then rm -rf). */
  async dropUnsentDir(dir: DirNode): Promise<boolean> {
    const key = dirKey(dir);
    const entry = this.c.journal.get(key);
    if (!entry || this.delivery.onItsWay(key)) return false;
    await this.c.journal.done(entry);
    this.c.pendingDirs.delete(key);
    this.c.tree.removeDir(dir);
    this.c.unshadowDir(dir);
    return true;
  }

  async deleteRemote(id: string, etag: string | undefined): Promise<void> {
    try {
      // If-Match: deleting a note that changed remotely since we saw it would lose that change.
      await this.c.client.deleteFile(id, etag);
      this.c.cache.delete(id);
      this.c.tree.withheld.ghostGone(id);
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) return;
      throw toVfsError(err);
    }
  }

  /** deleteRemote, but false (nothing deleted) when the note changed since `etag` (412). */
  async deleteRemoteUnlessChanged(id: string, etag: string | undefined): Promise<boolean> {
    try {
      await this.deleteRemote(id, etag);
      return true;
    } catch (err) {
      if (err instanceof VfsError && err.cause instanceof ApiError && err.cause.status === 412) return false;
      throw err;
    }
  }
}

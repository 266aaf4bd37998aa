import { randomUUID } from "node:crypto";
import { constants as fsc } from "node:fs";
import { ApiError, withoutContent } from "../client/api.ts";
import { baseOf } from "./base.ts";
import type { Bodies } from "./bodies.ts";
import type { Conflicts } from "./conflicts.ts";
import type { VfsCore } from "./core.ts";
import type { Delivery } from "./delivery/deliver.ts";
import { dirKey, journalKey } from "./delivery/journalKeys.ts";
import { fail, toVfsError, VfsError } from "./errors.ts";
import type { Claims } from "./local/claims.ts";
import { localDirKind } from "./local/localDirs.ts";
import { LocalHandle } from "./local/localFiles.ts";
import { isSpecial } from "./local/specialFiles.ts";
import type { Attributes } from "./meta/attributes.ts";
import { sidecarAt } from "./meta/sidecars.ts";
import { checkName, isNoteName, parentAndName } from "./names.ts";
import type { OpenFiles } from "./open/openFiles.ts";
import type { Reads } from "./open/reads.ts";
import type { Saves } from "./open/saves.ts";
import type { Writes } from "./open/writes.ts";
import type { OpenFile } from "./openFile.ts";
import { provisionalFolder } from "./provisionalFolder.ts";
import type { Claim, DirNode, FileNode, LocalNode, Node } from "./tree.ts";

/** The parts namespace operations call. */
export interface NamespaceParts {
  attributes: Pick<Attributes, "applySidecar" | "attrsFrom" | "continued" | "paging" | "sidecar">;
  bodies: Pick<Bodies, "body">;
  claims: Pick<Claims, "adoptLocal" | "claimName" | "follow" | "leaveTombstone" | "nameTaken">;
  conflicts: Pick<Conflicts, "ownSuccessor">;
  delivery: Pick<Delivery, "deliverSoon" | "onItsWay" | "reloadNote" | "settle">;
  openFiles: Pick<
    OpenFiles,
    "addHandle" | "handle" | "open" | "openCreated" | "openNote" | "openReplaced" | "letGo"
  >;
  reads: Pick<Reads, "materialize">;
  saves: Pick<Saves, "upload">;
  writes: Pick<Writes, "truncateOpen">;
}

/** What namespace operations uses of the mount's shared state. */
export type NamespaceCore = Pick<
  VfsCore,
  | "access"
  | "alwaysLocal"
  | "attrsChanged"
  | "cache"
  | "checkWritable"
  | "client"
  | "find"
  | "findDir"
  | "localNodes"
  | "handles"
  | "isPending"
  | "journal"
  | "keptLocal"
  | "local"
  | "localDirKindOf"
  | "log"
  | "notes"
  | "pendingDirs"
  | "placeOf"
  | "tree"
  | "unshadowDir"
  | "writeBehind"
>;

export class Namespace {
  private readonly attributes: NamespaceParts["attributes"];
  private readonly bodies: NamespaceParts["bodies"];
  private readonly claims: NamespaceParts["claims"];
  private readonly conflicts: NamespaceParts["conflicts"];
  private readonly delivery: NamespaceParts["delivery"];
  private readonly openFiles: NamespaceParts["openFiles"];
  private readonly reads: NamespaceParts["reads"];
  private readonly saves: NamespaceParts["saves"];
  private readonly writes: NamespaceParts["writes"];
  readonly c: NamespaceCore;

  constructor(c: NamespaceCore, parts: NamespaceParts) {
    this.c = c;
    this.attributes = parts.attributes;
    this.bodies = parts.bodies;
    this.claims = parts.claims;
    this.conflicts = parts.conflicts;
    this.delivery = parts.delivery;
    this.openFiles = parts.openFiles;
    this.reads = parts.reads;
    this.saves = parts.saves;
    this.writes = parts.writes;
  }

  async create(path: string, mode: number): Promise<number> {
    const { parent, name } = parentAndName(path);
    const dir = this.c.findDir(parent);
    this.c.checkWritable(dir);
    checkName(name);
    const existing = dir.children.get(name);
    // A sidecar is created when the kernel still remembers its name as absent (a lookup before
    // the note existed): `> note.md.meta.json` then rewrites the sidecar, never makes a file.
    if (existing || sidecarAt(dir, name)) {
      if (existing?.kind === "dir") throw fail("EISDIR");
      const fd = await this.openFiles.open(path, fsc.O_RDWR);
      await this.writes.truncateOpen(this.openFiles.handle(fd), 0);
      return fd;
    }
    if (this.c.keptLocal(dir, name) || dir.localOnly === "always") {
      const node = this.c.localNodes.make(dir, name, mode & 0o7777);
      this.attributes.paging(path, node);
      return this.openFiles.addHandle({
        kind: "local",
        node,
        fh: LocalHandle.open(node.blob, true),
        append: false,
      });
    }
    await this.materialize(dir);
    // A note renamed away or deleted under this name a moment ago is continued, not replaced
    // (vim's backupcopy=no, git checkout, tar -x, unzip -o): its id, tags and history stay.
    const claim = await this.claims.claimName(dir, name);
    const node = this.newNote(dir, name, claim);
    // A new note is uploaded by the first flush after a write, or at release if nothing was written
    // (touch): one request per new note, not an empty create followed by a PUT.
    const open = this.openFiles.openCreated(node, claim && { etag: claim.etag, hash: claim.hash ?? "" });
    // Its size is 0 now, not the claimed note's: the kernel appends (`>>`) at the size it is told.
    this.c.notes.of(node).refreshSize();
    this.attributes.paging(path, node);
    return this.openFiles.addHandle({ kind: "note", open, append: false, writable: true });
  }

  /** A note made here under `name` in `dir`: a new one, or the continuation of `claim`. */
  newNote(dir: DirNode, name: string, claim: Claim | undefined, timesOf?: LocalNode): FileNode {
    const node: FileNode = {
      kind: "file",
      name,
      parent: dir,
      id: claim?.id ?? null,
      meta: claim?.meta ? { ...claim.meta, name, folderId: dir.id } : null,
      remoteName: claim ? claim.name : name,
      createKey: randomUUID(),
    };
    this.c.notes.of(node).made(timesOf ?? { mtimeMs: Date.now() }, claim?.pendingMeta);
    this.c.tree.addChild(dir, node);
    if (claim) {
      this.c.notes.of(node).continuesClaim();
      this.c.tree.ghosted.delete(claim.id);
      this.c.tree.files.set(claim.id, node);
    }
    if (timesOf) this.attributes.attrsFrom(timesOf, node); // a local file going up keeps its mode and owner
    return node;
  }

  /** Shows a note under a new name and folder before the service has them. */
  placeLocally(node: FileNode, dir: DirNode, name: string): void {
    node.remoteName = name;
    // The service carries the type along with a .md/.txt name: so does the local view.
    const type = /\.md$/i.test(name) ? "md" : /\.txt$/i.test(name) ? "txt" : node.meta?.type;
    if (node.meta) node.meta = { ...node.meta, name, folderId: dir.id, type: type ?? node.meta.type };
    this.c.tree.move(node, dir, name);
  }

  async mkdir(path: string): Promise<void> {
    const { parent, name } = parentAndName(path);
    const dir = this.c.findDir(parent);
    this.c.checkWritable(dir);
    checkName(name);
    if (dir.children.has(name)) throw fail("EEXIST");
    const local = this.c.localDirKindOf(dir, name);
    if (!local) this.c.access.checkFolders(); // what stays on this machine needs no scope (materialize)
    if (local) {
      // Kept on this machine (see localDirs.ts): git init, .obsidian, node_modules.
      const made: DirNode = {
        kind: "dir",
        name,
        parent: dir,
        id: null,
        meta: provisionalFolder(name, dir),
        children: new Map(),
        localOnly: local,
      };
      this.c.tree.addChild(dir, made);
      this.c.localNodes.save();
      return;
    }
    await this.materialize(dir);
    if (this.c.writeBehind && (dir === this.c.tree.root || dir.createKey || dir.meta?.role === "owner")) {
      // Shown at once, created on the service in order with what goes into it.
      const made: DirNode = {
        kind: "dir",
        name,
        parent: dir,
        id: null,
        meta: provisionalFolder(name, dir),
        children: new Map(),
        createKey: randomUUID(),
      };
      this.c.tree.addChild(dir, made);
      this.c.pendingDirs.set(dirKey(made), made);
      const entry = {
        fileId: null,
        createKey: made.createKey!,
        name,
        baseEtag: null,
        path,
        folder: true as const,
      };
      await this.c.journal.put({ ...entry, ...this.c.placeOf(dir) }, false);
      this.delivery.deliverSoon();
      return;
    }
    try {
      const folder = await this.c.client.createFolder({ name, parentFolderId: dir.id });
      this.c.tree.upsertFolder(folder);
    } catch (err) {
      throw toVfsError(err);
    }
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
    if (!dir.id || this.c.tree.ghosted.size === 0) return;
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
      if (await this.dropUnsent(node)) return;
    }
    await this.delivery.settle(node);
    if (node.kind === "local") {
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
    else this.c.tree.detach(node);
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
    this.c.tree.deleting.add(id);
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
      this.c.tree.ghosted.delete(id);
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

  async rename(from: string, to: string): Promise<void> {
    const src = this.c.find(from);
    const { parent, name } = parentAndName(to);
    const destDir = this.c.findDir(parent);
    checkName(name);
    const sidecar = destDir.children.has(name) ? undefined : sidecarAt(destDir, name);
    if (sidecar) {
      // `jq ... > tmp && mv tmp NAME.meta.json`: the renamed file's JSON is applied.
      if (src.kind !== "local" || isSpecial(src))
        throw fail("EINVAL", "only a plain file can replace a sidecar");
      this.c.checkWritable(sidecar.target);
      await this.attributes.applySidecar(sidecar, this.c.local.read(src.blob).toString("utf8"));
      this.c.tree.detach(src);
      this.c.local.remove(src.blob);
      this.c.localNodes.save();
      return;
    }
    this.c.checkWritable(src);
    this.c.checkWritable(destDir);
    const target = destDir.children.get(name);
    if (target === src) return;
    if (src.kind === "dir") {
      if (!src.localOnly || !localDirKind(name, destDir.localOnly, this.c.alwaysLocal))
        this.c.access.checkFolders();
      return this.renameDir(src, destDir, name, target);
    }
    if (target?.kind === "dir") throw fail("EISDIR");
    if (src.kind === "local" && isSpecial(src)) return this.renameSpecial(src, destDir, name, target);
    // Appends made without the note's body go first: a rename is sent on its own after them.
    if (src.kind === "file" && this.c.journal.get(journalKey(src))?.append) await this.delivery.settle(src);
    if (target?.kind === "file" && this.c.journal.get(journalKey(target))?.append)
      await this.delivery.settle(target);
    try {
      if (target?.kind === "file" && isNoteName(name)) {
        await this.delivery.settle(src); // its remote copy is deleted once its content moved over
        return await this.replaceNote(src, target);
      }
      // A local file over a local file (rsync over a note kept local as bytes that are not UTF-8):
      // the metadata set on the name's file stays with the name, as a note's does (replaceNote).
      if (src.kind === "local" && target?.kind === "local" && target.pendingMeta)
        src.pendingMeta = { ...target.pendingMeta, ...src.pendingMeta };
      if (target) await this.unlink(to);
      if (src.kind === "local") return await this.renameLocal(src, destDir, name);
      if (isNoteName(name) && destDir.localOnly !== "always") {
        // A note moved onto a name held open: libfuse hid the note there as `.fuse_hidden*` just
        // before this rename, which is a rename over it (the note of that name keeps its identity).
        // So is a rename over a note kept local (bytes that are not UTF-8; unlinked just now).
        const overKeptNote = target?.kind === "local" && target.ghostOf !== undefined;
        const claim = await this.claims.claimName(destDir, name, !overKeptNote);
        if (claim) {
          await this.delivery.settle(src);
          return await this.replaceNote(src, this.newNote(destDir, name, claim));
        }
      }
      return await this.renameNote(src, destDir, name);
    } catch (err) {
      throw toVfsError(err);
    }
  }

  /**
   * Rename over an existing note is how editors and tools save (sed -i, python's os.replace, rsync,
   * vim): the existing note gets the new content, keeping its id, metadata and history.
   */
  async replaceNote(src: FileNode | LocalNode, target: FileNode): Promise<void> {
    const content = src.kind === "local" ? this.c.local.read(src.blob) : await this.bodies.body(src);
    // A temp file's context and tags go to the note (rsync -X sets them on it); a note moved over
    // another keeps none of its own, also when it is kept local for now (bytes that are not UTF-8),
    // whether the service had it (ghostOf) or not yet (keptNote).
    if (
      src.kind === "local" &&
      src.pendingMeta &&
      !src.keptNote &&
      (!src.ghostOf || src.ghostOf.id === target.id)
    )
      this.c.notes.of(target).metaSet(src.pendingMeta);
    // Its whole content is replaced: the old body is not needed (nor fetched).
    const open = this.openFiles.openReplaced(target, content);
    try {
      await this.saves.upload(open);
    } finally {
      this.openFiles.letGo(open);
    }
    this.attributes.attrsFrom(src, target);
    if (src.kind === "local") {
      this.c.tree.detach(src);
      this.c.local.remove(src.blob);
      this.c.localNodes.save();
      if (src.ghostOf && src.ghostOf.id !== target.id) await this.deleteRemote(src.ghostOf.id, undefined);
    } else if (src.id) {
      // Its note goes as an unlink's does, after its target was written: an edit made elsewhere
      // since it was read wins over that delete (the note shows again with it), and the rename
      // stands whole. Failing it now would leave the target holding what was moved while the
      // program sees its rename fail: a save of the target lost.
      const path = this.c.tree.pathOf(src);
      let changedElsewhere = false;
      if (this.deletesLater(src)) await this.deleteLater("file", src.id, src.meta?.etag ?? null, path);
      else changedElsewhere = !(await this.deleteRemoteUnlessChanged(src.id, src.meta?.etag));
      this.c.tree.removeFile(src.id);
      if (changedElsewhere) {
        this.c.log.warn(
          { path },
          "the note moved over another changed elsewhere in between: it stays, with that change",
        );
        await this.delivery.reloadNote(src.id);
      }
    } else {
      this.c.tree.detach(src);
    }
  }

  /**
   * A link, fifo or socket stays one under any name (a note's too: it never goes up); what it
   * replaces goes as an unlink would, and a later create of the name is a new note (the name was
   * taken since).
   */
  private async renameSpecial(src: LocalNode, destDir: DirNode, name: string, target: Node | undefined) {
    if (target) await this.unlink(this.c.tree.pathOf(target));
    this.claims.nameTaken(destDir, name);
    this.c.tree.move(src, destDir, name);
    this.c.localNodes.save();
  }

  async renameLocal(src: LocalNode, destDir: DirNode, name: string): Promise<void> {
    if (this.c.keptLocal(destDir, name) || destDir.localOnly === "always") {
      this.c.tree.move(src, destDir, name);
      this.c.localNodes.save();
      return;
    }
    await this.materialize(destDir);
    // A local file becomes a note (rsync's and sed's temp files, a ghost renamed back): it continues
    // the note it stands for, or the one left under this name, or it is a new note.
    const claim = src.ghostOf ?? (await this.claims.claimName(destDir, name));
    // A note kept local that goes on as another note (renamed over one held open: libfuse hid
    // that one first) brings none of its tags, as a rename over it would not (replaceNote).
    if (src.keptNote && claim && !src.ghostOf) src.pendingMeta = undefined;
    src.ghostOf = undefined;
    this.c.tree.move(src, destDir, name);
    const openOn = [...this.c.handles].filter(([, h]) => h.kind === "local" && h.node === src);
    const content = openOn.length ? this.c.local.read(src.blob) : undefined;
    await this.claims.adoptLocal(src, claim);
    if (this.c.tree.locals.has(src))
      await this.claims.follow(src); // kept local: not UTF-8
    else if (content) this.followIntoNote(openOn, destDir.children.get(name), content);
  }

  /**
   * Descriptors open on a local file that went up as a note go on reading and writing that note
   * (POSIX: a descriptor follows its file), starting from what the file held.
   */
  private followIntoNote(openOn: [number, OpenFile][], node: Node | undefined, content: Buffer): void {
    if (node?.kind !== "file") return;
    for (const [fd, h] of openOn) {
      if (h.kind !== "local") continue;
      h.fh.close();
      const open = this.openFiles.openNote(node, false, content);
      this.c.handles.set(fd, { kind: "note", open, append: h.append, writable: h.fh.writable });
    }
    this.c.notes.of(node).refreshSize();
  }

  async renameNote(src: FileNode, destDir: DirNode, name: string): Promise<void> {
    // Into a folder whose content stays local: mv copies it there and deletes the note (EXDEV).
    if (destDir.localOnly === "always") throw fail("EXDEV");
    await this.materialize(destDir);
    this.claims.nameTaken(destDir, name);
    if (!this.c.keptLocal(destDir, name) && (this.c.writeBehind || !src.id)) {
      // Shown at once; the journal sends the new name and folder in order with the note's saves
      // (a note not created yet is simply created under its new name).
      this.placeLocally(src, destDir, name);
      const pending = this.c.journal.get(journalKey(src));
      if (src.id || pending) {
        const note = this.c.notes.of(src);
        note.rename();
        const recorded = this.c.journal.put(
          {
            fileId: src.id,
            createKey: src.createKey,
            name,
            ...this.c.placeOf(destDir),
            baseEtag: src.meta?.etag ?? null,
            baseHash: src.meta?.contentHash ?? null,
            path: this.c.tree.pathOf(src),
            // Also for a note being created: its create may already be on its way under the old name.
            move: true,
          },
          !this.c.writeBehind,
        );
        try {
          await recorded;
        } finally {
          note.renameJournalled();
        }
        this.delivery.deliverSoon();
      }
      return;
    }
    if (this.c.keptLocal(destDir, name)) return this.renameAside(src, destDir, name);
    await this.delivery.settle(src);
    if (!src.id) {
      // Not uploaded yet (nothing was written): it will be created under its new name.
      src.remoteName = name;
      this.c.tree.move(src, destDir, name);
      return;
    }
    const meta = withoutContent(await this.c.client.updateFile(src.id, { name, folderId: destDir.id }));
    // Our answer, unless the rename landed on an edit made elsewhere: that is shown as one.
    this.c.tree.upsertFile(meta, meta.contentHash === src.meta?.contentHash);
  }

  /**
   * Renamed to a non-note name (vim's `note~`, `sed -i.bak`, `.fuse_hidden*` when it is removed
   * while open): the note stays remote, shown here as a local file still bound to it, until it is
   * re-created, renamed back or unlinked. A note the service does not have yet becomes a plain
   * local file. Either way the file holds what the note holds here now, written but not yet saved
   * through a descriptor still open included, and every descriptor open on the note goes on
   * reading and writing that file (POSIX: the descriptor follows the file; `unlink/14.t` 6).
   */
  private async renameAside(src: FileNode, destDir: DirNode, name: string): Promise<void> {
    const open = src.note?.open;
    if (open?.tail) await this.reads.materialize(open);
    // Saves made before go first: the note bound to the file is the last one saved.
    await this.delivery.settle(src);
    const body = Buffer.from(open?.content ?? (await this.bodies.body(src)));
    const local = this.c.localNodes.make(destDir, name, src.mode ?? 0o644, body);
    const times = this.c.notes.timesOf(src);
    local.mtimeMs = times?.mtimeMs ?? local.mtimeMs;
    local.atimeMs = times?.atimeMs;
    local.ctimeMs = Date.now();
    if (src.id) {
      // As unlink's tombstone: the version our own saves made, when one came after the record's.
      const base = this.conflicts.ownSuccessor(src.id, baseOf(src.meta));
      local.ghostOf = {
        id: src.id,
        etag: base?.etag ?? "",
        hash: base?.hash ?? src.meta?.contentHash,
        name: src.remoteName,
        shownAs: src.name,
        meta: src.meta ?? undefined,
      };
      local.pendingMeta = src.note?.pendingMeta;
      this.c.tree.ghosted.add(src.id);
      this.c.tree.removeFile(src.id);
    } else {
      // Never sent (made by an open that has not saved it): nothing of it is on the service.
      local.pendingMeta = src.note?.pendingMeta;
      src.note?.forgotten();
      this.c.tree.detach(src);
    }
    local.uid = src.uid;
    local.gid = src.gid;
    this.attributes.continued(src, local);
    if (open) {
      for (const [fd, h] of this.c.handles) {
        if (h.kind !== "note" || h.open !== open) continue;
        const fh = LocalHandle.open(local.blob, h.writable);
        this.c.handles.set(fd, { kind: "local", node: local, fh, append: h.append, written: open.dirty });
      }
      this.c.notes.of(src).handedAway(open, true);
    }
    this.c.localNodes.save();
    // What was written through a descriptor is on record as the file's before the rename returns.
    if (open) this.c.localNodes.flush();
  }

  async renameDir(src: DirNode, destDir: DirNode, name: string, target: Node | undefined): Promise<void> {
    // POSIX rename(2): a destination inside the source is EINVAL, whatever is at the destination.
    for (let d: DirNode | null = destDir; d; d = d.parent) if (d === src) throw fail("EINVAL");
    if (target) {
      if (target.kind !== "dir") throw fail("ENOTDIR");
      if (target.children.size > 0) throw fail("ENOTEMPTY");
    }
    if (src.localOnly) return this.renameLocalDir(src, destDir, name, target);
    if (destDir.localOnly === "always") throw fail("EXDEV");
    await this.materialize(destDir);
    // A folder made here moves, or takes a folder in, once the service has it.
    await this.delivery.settle(src);
    await this.delivery.settle(destDir);
    try {
      if (target?.kind === "dir") await this.rmdir(this.c.tree.pathOf(target));
      const folder = await this.c.client.updateFolder(src.id!, { name, parentFolderId: destDir.id });
      this.c.tree.upsertFolder(folder);
    } catch (err) {
      throw toVfsError(err);
    }
  }

  /** A local folder moves here; under a name that is not local (no dot), it becomes an ordinary folder. */
  async renameLocalDir(src: DirNode, destDir: DirNode, name: string, target: Node | undefined) {
    if (target?.kind === "dir") await this.rmdir(this.c.tree.pathOf(target));
    src.meta = provisionalFolder(name, destDir); // a folder is shown under its record's name
    this.c.tree.move(src, destDir, name);
    const kind = this.c.localDirKindOf(destDir, name);
    if (kind) src.localOnly = kind;
    else {
      await this.materialize(destDir);
      await this.promote(src);
    }
    this.c.localNodes.save();
  }

  /** A local "until-note" folder is about to hold a note: it (and its local parents) go to the service. */
  async materialize(dir: DirNode): Promise<void> {
    if (dir.localOnly !== "until-note") return;
    this.c.access.checkFolders(); // the folders go to the service now
    const chain: DirNode[] = [];
    for (let d: DirNode | null = dir; d?.localOnly === "until-note"; d = d.parent) chain.unshift(d);
    for (const d of chain) await this.promote(d, false);
  }

  /**
   * A local folder becomes an ordinary one: created on the service in order with what goes into it
   * (as mkdir does). `deep`: folders inside that are local only because it was follow.
   */
  async promote(dir: DirNode, deep = true): Promise<void> {
    dir.localOnly = undefined;
    this.c.tree.localDirs.delete(dir);
    dir.createKey = randomUUID();
    this.c.pendingDirs.set(dirKey(dir), dir);
    const path = this.c.tree.pathOf(dir);
    await this.c.journal.put(
      {
        fileId: null,
        createKey: dir.createKey,
        name: dir.name,
        baseEtag: null,
        path,
        folder: true,
        ...this.c.placeOf(dir.parent!),
      },
      false,
    );
    this.c.attrsChanged(dir);
    this.c.localNodes.save();
    this.delivery.deliverSoon();
    if (!deep) return;
    for (const child of dir.children.values()) {
      if (child.kind !== "dir" || !child.localOnly) continue;
      const kind = localDirKind(child.name, undefined, this.c.alwaysLocal);
      if (kind) child.localOnly = kind;
      else await this.promote(child);
    }
  }
}

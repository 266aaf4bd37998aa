// rename(2): which kind of rename it is and each kind, a note's (shown at once, journalled), a
// local file's (it may become a note), a special file's, a folder's, and a note renamed aside to a
// name that is not a note's. A rename over an existing note is a save of it (replacements.ts).

import { withoutContent } from "../../client/api.ts";
import type { Attachments } from "../attachments/attachments.ts";
import { baseOf } from "../base.ts";
import type { Bodies } from "../bodies.ts";
import type { Conflicts } from "../conflicts.ts";
import type { VfsCore } from "../core.ts";
import type { Delivery } from "../delivery/deliver.ts";
import { journalKey } from "../delivery/journalKeys.ts";
import { fail, toVfsError } from "../errors.ts";
import type { Claims } from "../local/claims.ts";
import { localDirKind } from "../local/localDirs.ts";
import { LocalHandle } from "../local/localFiles.ts";
import { isSpecial } from "../local/specialFiles.ts";
import type { Attributes } from "../meta/attributes.ts";
import { sidecarAt } from "../meta/sidecars.ts";
import { checkName, isNoteName, parentAndName } from "../names.ts";
import type { OpenFiles } from "../open/openFiles.ts";
import type { Reads } from "../open/reads.ts";
import type { OpenFile } from "../openFile.ts";
import { provisionalFolder } from "../provisionalFolder.ts";
import type { DirNode, FileNode, LocalNode, Node } from "../tree.ts";
import type { Creates } from "./creates.ts";
import type { Removals } from "./removals.ts";
import type { Replacements } from "./replacements.ts";

/** The parts renames call. */
export interface RenamesParts {
  attachments: Pick<Attachments, "ensureBytes" | "left" | "renamed">;
  attributes: Pick<Attributes, "applySidecar" | "continued">;
  bodies: Pick<Bodies, "body">;
  claims: Pick<Claims, "adoptLocal" | "claimName" | "follow" | "nameTaken">;
  conflicts: Pick<Conflicts, "ownSuccessor">;
  creates: Pick<Creates, "materialize" | "newNote" | "promote">;
  delivery: Pick<Delivery, "deliverSoon" | "settle">;
  openFiles: Pick<OpenFiles, "openNote">;
  reads: Pick<Reads, "materialize">;
  removals: Pick<Removals, "rmdir" | "unlink">;
  replacements: Pick<Replacements, "replaceNote">;
}

/** What renames use of the mount's shared state. */
export type RenamesCore = Pick<
  VfsCore,
  | "access"
  | "alwaysLocal"
  | "checkWritable"
  | "client"
  | "clock"
  | "find"
  | "findDir"
  | "handles"
  | "journal"
  | "keptLocal"
  | "local"
  | "localDirKindOf"
  | "localNodes"
  | "notes"
  | "placeOf"
  | "tree"
  | "unshadowNote"
  | "writeBehind"
>;

export class Renames {
  private readonly attachments: RenamesParts["attachments"];
  private readonly attributes: RenamesParts["attributes"];
  private readonly bodies: RenamesParts["bodies"];
  private readonly claims: RenamesParts["claims"];
  private readonly conflicts: RenamesParts["conflicts"];
  private readonly creates: RenamesParts["creates"];
  private readonly delivery: RenamesParts["delivery"];
  private readonly openFiles: RenamesParts["openFiles"];
  private readonly reads: RenamesParts["reads"];
  private readonly removals: RenamesParts["removals"];
  private readonly replacements: RenamesParts["replacements"];
  private readonly c: RenamesCore;

  constructor(c: RenamesCore, parts: RenamesParts) {
    this.c = c;
    this.attachments = parts.attachments;
    this.attributes = parts.attributes;
    this.bodies = parts.bodies;
    this.claims = parts.claims;
    this.conflicts = parts.conflicts;
    this.creates = parts.creates;
    this.delivery = parts.delivery;
    this.openFiles = parts.openFiles;
    this.reads = parts.reads;
    this.removals = parts.removals;
    this.replacements = parts.replacements;
  }

  async rename(from: string, to: string): Promise<void> {
    const src = this.c.find(from);
    const bound = src.kind === "local" && src.attachment ? src : undefined;
    // An attachment that becomes a note or a sidecar's edit: its bytes are read first, and it is
    // deleted on the service once it has become that.
    const becomes = parentAndName(to).name;
    if (bound && (isNoteName(becomes) || becomes.endsWith(".meta.json")))
      await this.attachments.ensureBytes(bound);
    await this.move(src, to);
    // Gone (a note now, a sidecar's edit) or no attachment any more (kept local under a note's
    // name: bytes that are not UTF-8): deleted on the service, never listed back under its old name.
    if (bound) await this.attachments.left(bound);
  }

  private async move(src: Node, to: string): Promise<void> {
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
        return await this.replacements.replaceNote(src, target);
      }
      // A local file over a local file (rsync over a note kept local as bytes that are not UTF-8):
      // the metadata set on the name's file stays with the name, as a note's does (replaceNote).
      if (src.kind === "local" && target?.kind === "local" && target.pendingMeta)
        src.pendingMeta = { ...target.pendingMeta, ...src.pendingMeta };
      if (target) await this.removals.unlink(to);
      if (src.kind === "local") return await this.renameLocal(src, destDir, name);
      if (isNoteName(name) && destDir.localOnly !== "always") {
        // A note moved onto a name held open: libfuse hid the note there as `.fuse_hidden*` just
        // before this rename, which is a rename over it (the note of that name keeps its identity).
        // So is a rename over a note kept local (bytes that are not UTF-8; unlinked just now).
        const overKeptNote = target?.kind === "local" && target.ghostOf !== undefined;
        const claim = await this.claims.claimName(destDir, name, !overKeptNote);
        if (claim) {
          await this.delivery.settle(src);
          return await this.replacements.replaceNote(src, this.creates.newNote(destDir, name, claim));
        }
      }
      return await this.renameNote(src, destDir, name);
    } catch (err) {
      throw toVfsError(err);
    }
  }

  /** Shows a note under a new name and folder before the service has them. */
  placeLocally(node: FileNode, dir: DirNode, name: string): void {
    node.remoteName = name;
    // The service carries the type along with a .md/.txt name: so does the local view.
    const type = /\.md$/i.test(name) ? "md" : /\.txt$/i.test(name) ? "txt" : node.meta?.type;
    if (node.meta) node.meta = { ...node.meta, name, folderId: dir.id, type: type ?? node.meta.type };
    this.c.tree.move(node, dir, name);
    if (!node.id) this.c.unshadowNote(node); // the listed note it stood over at a restart shows again
  }

  /**
   * A link, fifo or socket stays one under any name (a note's too: it never goes up); what it
   * replaces goes as an unlink would, and a later create of the name is a new note (the name was
   * taken since).
   */
  private async renameSpecial(src: LocalNode, destDir: DirNode, name: string, target: Node | undefined) {
    if (target) await this.removals.unlink(this.c.tree.pathOf(target));
    this.claims.nameTaken(destDir, name);
    this.c.tree.move(src, destDir, name);
    this.c.localNodes.save();
  }

  async renameLocal(src: LocalNode, destDir: DirNode, name: string): Promise<void> {
    if (this.c.keptLocal(destDir, name) || destDir.localOnly === "always") {
      this.c.tree.move(src, destDir, name);
      this.c.localNodes.save();
      await this.attachments.renamed(src); // an attachment's move (or its delete, now kept here)
      return;
    }
    await this.creates.materialize(destDir);
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
    if (this.c.tree.locals.has(src)) {
      await this.claims.follow(src); // kept local: not UTF-8
      await this.attachments.renamed(src); // or up as an attachment of that name (never a note)
    } else if (content) this.followIntoNote(openOn, destDir.children.get(name), content);
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
    await this.creates.materialize(destDir);
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
    local.ctimeMs = this.c.clock.now();
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
      this.c.tree.withheld.ghostMade(src.id);
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
    await this.creates.materialize(destDir);
    // A folder made here moves, or takes a folder in, once the service has it.
    await this.delivery.settle(src);
    await this.delivery.settle(destDir);
    try {
      if (target?.kind === "dir") await this.removals.rmdir(this.c.tree.pathOf(target));
      const folder = await this.c.client.updateFolder(src.id!, { name, parentFolderId: destDir.id });
      this.c.tree.upsertFolder(folder);
    } catch (err) {
      throw toVfsError(err);
    }
  }

  /** A local folder moves here; under a name that is not local (no dot), it becomes an ordinary folder. */
  async renameLocalDir(src: DirNode, destDir: DirNode, name: string, target: Node | undefined) {
    if (target?.kind === "dir") await this.removals.rmdir(this.c.tree.pathOf(target));
    src.meta = provisionalFolder(name, destDir, this.c.clock.now()); // a folder is shown under its record's name
    this.c.tree.move(src, destDir, name);
    const kind = this.c.localDirKindOf(destDir, name);
    if (kind) src.localOnly = kind;
    else {
      await this.creates.materialize(destDir);
      await this.creates.promote(src);
    }
    this.c.localNodes.save();
  }
}

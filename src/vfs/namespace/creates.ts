// Making notes and folders: create(2) (a new note, or the continuation of one a name still
// claims), mkdir(2), and the local folders that go to the service once they hold a note.
import { randomUUID } from "node:crypto";
import { constants as fsc } from "node:fs";
import type { VfsCore } from "../core.ts";
import type { Delivery } from "../delivery/deliver.ts";
import { dirKey } from "../delivery/journalKeys.ts";
import { fail, toVfsError } from "../errors.ts";
import type { Claims } from "../local/claims.ts";
import { localDirKind } from "../local/localDirs.ts";
import { LocalHandle } from "../local/localFiles.ts";
import type { Attributes } from "../meta/attributes.ts";
import { sidecarAt } from "../meta/sidecars.ts";
import { checkName, parentAndName } from "../names.ts";
import type { OpenFiles } from "../open/openFiles.ts";
import type { Writes } from "../open/writes.ts";
import { provisionalFolder } from "../provisionalFolder.ts";
import type { Claim, DirNode, FileNode, LocalNode } from "../tree.ts";

/** The parts creates call. */
export interface CreatesParts {
  attributes: Pick<Attributes, "attrsFrom" | "paging">;
  claims: Pick<Claims, "claimName">;
  delivery: Pick<Delivery, "deliverSoon">;
  openFiles: Pick<OpenFiles, "addHandle" | "handle" | "open" | "openCreated">;
  writes: Pick<Writes, "truncateOpen">;
}

/** What creates use of the mount's shared state. */
export type CreatesCore = Pick<
  VfsCore,
  | "access"
  | "alwaysLocal"
  | "attrsChanged"
  | "checkWritable"
  | "client"
  | "clock"
  | "findDir"
  | "journal"
  | "keptLocal"
  | "localDirKindOf"
  | "localNodes"
  | "notes"
  | "pendingDirs"
  | "placeOf"
  | "tree"
  | "writeBehind"
>;

export class Creates {
  private readonly attributes: CreatesParts["attributes"];
  private readonly claims: CreatesParts["claims"];
  private readonly delivery: CreatesParts["delivery"];
  private readonly openFiles: CreatesParts["openFiles"];
  private readonly writes: CreatesParts["writes"];
  private readonly c: CreatesCore;

  constructor(c: CreatesCore, parts: CreatesParts) {
    this.c = c;
    this.attributes = parts.attributes;
    this.claims = parts.claims;
    this.delivery = parts.delivery;
    this.openFiles = parts.openFiles;
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
        made: true,
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
    this.c.notes.of(node).made(timesOf ?? { mtimeMs: this.c.clock.now() }, claim?.pendingMeta);
    this.c.tree.addChild(dir, node);
    if (claim) {
      this.c.notes.of(node).continuesClaim();
      this.c.tree.withheld.ghostGone(claim.id);
      this.c.tree.files.set(claim.id, node);
    }
    if (timesOf) this.attributes.attrsFrom(timesOf, node); // a local file going up keeps its mode and owner
    return node;
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
        meta: provisionalFolder(name, dir, this.c.clock.now()),
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
        meta: provisionalFolder(name, dir, this.c.clock.now()),
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

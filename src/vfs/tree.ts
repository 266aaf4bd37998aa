// The in-memory namespace: every folder and note of the account (from one listing, kept current by
// the change feed) plus local-only files. getattr, lookup and readdir are answered from here only.
import type { TxtFile, TxtFolder } from "../lib/apiTypes.ts";
import { BoundedMap } from "./boundedMap.ts";
import type { Action } from "./lifecycle.ts";
import { disambiguated, displayName, splitPath } from "./names.ts";
import type { Note } from "./note.ts";

/** What the mount keeps of a note's record: all but its URLs (`endpoint`, `raw`), never read here. */
export type NoteMeta = Omit<TxtFile, "endpoint" | "raw">;

/** Context and tags set here that the service has not received yet. */
export interface PendingMeta {
  context?: string;
  tags?: string[];
}

export interface FileNode {
  kind: "file";
  name: string;
  parent: DirNode;
  /** Remote id; null until a newly created note is first uploaded. */
  id: string | null;
  meta: NoteMeta | null;
  /** The name to store remotely (what the user typed, or the remote name). */
  remoteName: string;
  /** Idempotency key of the create, so a retried upload never makes two notes. */
  createKey: string;
  /** Permission bits set here (chmod, the create's mode): this device's (meta/deviceAttrs.ts); else 0644. */
  mode?: number;
  /** Its owner on this device, when not the mount's (made by another user, chown). */
  uid?: number;
  gid?: number;
  /** Its local state (note.ts: times shown, tags waiting, what is open or journalled): made on first need, by Notes.of only. */
  note?: Note;
}

export interface LocalNode {
  kind: "local";
  name: string;
  parent: DirNode;
  /** Where the bytes live in the cache dir ("" for a symbolic link: it has only its target). */
  blob: string;
  /** A symbolic link's target (local/specialFiles.ts). */
  link?: string;
  /** A fifo, socket or device node (local/specialFiles.ts). */
  special?: "fifo" | "socket" | "device";
  /** A device node's type bits (character or block) and number. */
  rdev?: { type: number; dev: number };
  mode: number;
  /** Its owner, when not the mount's (a program of another user made it, or chown). */
  uid?: number;
  gid?: number;
  size: number;
  mtimeMs: number;
  atimeMs?: number;
  ctimeMs?: number;
  /** Context and tags set on the file (`rsync -X`, `cp --preserve=all` set them on a temp file): they go with it when it becomes a note. */
  pendingMeta?: PendingMeta;
  /** A note renamed to a non-note name (vim's `note~`, `.fuse_hidden*`): still bound to its remote id. */
  ghostOf?: Claim;
  /**
   * A note made here and kept local before the service had it (its bytes stopped being UTF-8):
   * a note, not a temp file, so renamed over another note it brings none of its tags (namespace.ts
   * replaceNote), as one the service had would not.
   */
  keptNote?: true;
}

/**
 * A note's identity left behind under a name: by a rename to a non-note name (a ghost: vim's
 * `note~`, `sed -i.bak`'s backup, libfuse's `.fuse_hidden*` for a note held open), by content that
 * cannot be a note (not UTF-8), or by a delete still in the journal. Whatever next takes the name
 * `shownAs` in that folder (a create, a rename onto it) continues the note: same id, tags, history.
 */
export interface Claim {
  id: string;
  /** The version the note's next save is based on (If-Match). */
  etag: string;
  hash?: string;
  /** Its name on the service, and the name it had here (what a create or rename must take). */
  name: string;
  shownAs: string;
  /** Its record, so a pending claimant shows its attributes (tags, context) at once. */
  meta?: NoteMeta;
  /** Tags or context set here that the note has not received yet (set while it was a local file). */
  pendingMeta?: PendingMeta;
}

export interface DirNode {
  kind: "dir";
  name: string;
  parent: DirNode | null;
  /** null: the root, a folder of the mount only (`Shared with me/`), or one not created remotely yet. */
  id: string | null;
  meta: TxtFolder | null;
  children: Map<string, Node>;
  /** Set while a folder made here (mkdir) is on its way to the service: its create's key. */
  createKey?: string;
  /**
   * A folder kept on this machine only (see localDirs.ts): "until-note" while it holds no note (a
   * dot-folder: it is created on the service with the first note put inside), "always" for the
   * folders tools keep their own state in (.git, node_modules: what is inside stays local).
   */
  localOnly?: "until-note" | "always";
  /** Names two or more children want: all but one show it with a suffix (see layout). */
  namedApart?: Set<string>;
  /** Permission bits set here (chmod, mkdir's mode): this device's (meta/deviceAttrs.ts); else 0755. */
  mode?: number;
  /** Its owner on this device, when not the mount's (made by another user, chown). */
  uid?: number;
  gid?: number;
  /**
   * Times shown instead of the record's: set by a program (`touch -d`, `rsync -a`), kept on this
   * device; or moved by a change made inside since the mount started (a create, a removal, a rename).
   */
  localMtimeMs?: number;
  localAtimeMs?: number;
  localCtimeMs?: number;
  /** Its times were set by a program: kept on this device (also as they move on). */
  timesKept?: true;
}

export type Node = FileNode | LocalNode | DirNode;

/** The top-level folder holding what others shared with you, one folder per owner inside. */
export const SHARED_DIR = "Shared with me";

/** The tags of every note without tags (most of them): one array, never changed in place. */
const NO_TAGS: string[] = Object.freeze([]) as unknown as string[];

/** A folder of the mount only (no remote id): read-only, so nothing can be created in it. */
function syntheticDir(name: string, parent: DirNode): DirNode {
  const epoch = new Date(0).toISOString();
  const meta: TxtFolder = {
    id: "",
    name,
    context: "",
    tags: [],
    parentFolderId: null,
    fileCount: 0,
    createdAt: epoch,
    updatedAt: epoch,
    endpoint: "",
    access: "shared",
    role: "reader",
  };
  return { kind: "dir", name: `\0${name}`, parent, id: null, meta, children: new Map() };
}

/** What a remote change or a remote delete does to a note, by where it stands (lifecycle.ts). */
export interface RemoteEvents {
  /**
   * The feed brings `next`, made elsewhere: `apply-remote` (shown: the note's times follow it) or
   * `keep-local` (a save of ours waits: the delivery decides). Called before `node.meta` is `next`.
   */
  remoteChange(node: FileNode, next: NoteMeta): Action;
  /** The service answered a change of ours (a save, a rename, tags): the time shown stays. */
  ownAnswer(node: FileNode): void;
  /** `remove`, or `keep-and-recreate` (a save of ours waits and creates it again). */
  remoteDelete(node: FileNode): Action;
}

/** A tree with no notes written through it (a listing only): every remote event applies. */
const NOTHING_WAITS: RemoteEvents = {
  remoteChange: () => "apply-remote",
  ownAnswer: () => {},
  remoteDelete: () => "remove",
};

export class Tree {
  readonly root: DirNode = { kind: "dir", name: "", parent: null, id: null, meta: null, children: new Map() };
  /** The account's newest change seen (ms): the root's mtime (it has no record of its own). */
  newestChangeMs = 0;

  /** A change at `iso` (an updatedAt, a feed record's changedAt) moves the newest change on. */
  sawChange(iso: string | undefined): void {
    const ms = iso ? Date.parse(iso) : Number.NaN;
    if (ms > this.newestChangeMs) this.newestChangeMs = ms;
  }
  readonly files = new Map<string, FileNode>();
  readonly dirs = new Map<string, DirNode>();
  /** Ids hidden because a ghost holds them (their note was renamed away locally). */
  readonly ghosted = new Set<string>();
  /** Notes and folders deleted here whose delete is still on its way: the feed must not bring them back. */
  readonly deleting = new Set<string>();
  /**
   * Notes whose delete from here was delivered, until the feed brings that delete: the feed's
   * records of their earlier versions (the echo of our own last save) still come, and must not
   * bring them back under the name a new note has taken since (the service never undeletes).
   */
  readonly deletedHere = new BoundedMap<string, true>(10_000);
  /** Every local-only file in the tree (for the manifest, without walking every folder). */
  readonly locals = new Set<LocalNode>();
  /** Every local-only folder (see DirNode.localOnly). */
  readonly localDirs = new Set<DirNode>();
  /**
   * Called on every change of the tree, synchronously, so caches of attributes kept outside
   * JavaScript (the FUSE adapter's) can be dropped before anyone reads the new state. `changed`:
   * only that node and the folder holding it changed; none: anything may have.
   */
  onChange: (changed?: Node) => void = () => {};
  /**
   * Called after a change no program here made: a note shows bytes it did not write (a remote
   * edit), or a path shows another note than before (created, renamed or moved elsewhere).
   * `changed`: that note's path; none: any path may show something else.
   */
  onRemoteChange: (changed?: Node) => void = () => {};
  /**
   * Where a record is to be shown: its own place, or, with `parent`, where a rename made here put
   * the note and the service has not received yet (so neither the change feed nor the answer to an
   * earlier save moves a renamed note back before then; `parent` may be a folder made here and not
   * on the service yet, which no folder id names).
   */
  placement: (meta: TxtFile, node: FileNode | undefined) => { meta: TxtFile; parent?: DirNode } = (meta) => ({
    meta,
  });
  /** What a remote change or delete does to a note, by where it stands (note.ts Notes). */
  private readonly remote: RemoteEvents;

  constructor(remote: RemoteEvents = NOTHING_WAITS) {
    this.remote = remote;
  }
  /** One copy of the strings many records repeat (owner ids, availability): see keep(). */
  private readonly repeated = new Map<string, string>();
  /** Keys an item waits under until relayout names it (its name was taken): addChild, adoptFrom. */
  private placeholders = 0;

  /**
   * What is kept of a note's record, for each of the (maybe 100,000) notes for the life of the
   * mount: the fields the mount reads, always in one order (one hidden class), with one copy of the
   * strings records repeat (its folder's id is that folder's own; owner ids, availability), one
   * shared array for "no tags", and without the URLs it never reads.
   */
  keep(m: NoteMeta): NoteMeta {
    const kept: NoteMeta = {
      id: m.id,
      name: m.name,
      context: m.context,
      tags: m.tags?.length === 0 ? NO_TAGS : m.tags,
      type: m.type,
      availability: this.once(m.availability) as NoteMeta["availability"],
      size: m.size,
      folderId: m.folderId === null ? null : (this.dirs.get(m.folderId)?.id ?? m.folderId),
      createdAt: m.createdAt,
      updatedAt: m.updatedAt,
      access: m.access,
      role: m.role,
      etag: m.etag,
      contentHash: m.contentHash,
    };
    if (m.ownerId !== undefined) kept.ownerId = this.once(m.ownerId);
    return kept;
  }

  /** The copy of `s` kept before (a bounded few: owners are few, and so are availabilities). */
  private once(s: string): string {
    const known = this.repeated.get(s);
    if (known !== undefined) return known;
    if (this.repeated.size < 1000) this.repeated.set(s, s);
    return s;
  }

  /** Owner account id -> the name of their folder under `Shared with me/` (their email). */
  private readonly owners = new Map<string, string>();
  private sharedRoot: DirNode | null = null;
  private readonly ownerDirs = new Map<string, DirNode>();

  /** Learns (or renames) the folder of an owner who shares with us. */
  setOwner(ownerId: string, label: string): void {
    this.owners.set(ownerId, label);
    const dir = this.ownerDirs.get(ownerId);
    if (dir?.meta && dir.meta.name !== label && this.sharedRoot) {
      dir.meta.name = label;
      this.relayout(this.sharedRoot);
    }
  }

  /**
   * Where an item goes whose folder is not visible to us: our own at the top (until its folder
   * arrives), shared ones under `Shared with me/OWNER/` (a shared folder's top, a file shared alone).
   */
  private orphanParent(meta: NoteMeta | TxtFolder): DirNode {
    if (meta.access !== "shared" || !meta.ownerId) return this.root;
    let dir = this.ownerDirs.get(meta.ownerId);
    if (dir) return dir;
    this.onChange();
    if (!this.sharedRoot) {
      this.sharedRoot = syntheticDir(SHARED_DIR, this.root);
      this.place(this.root, this.sharedRoot);
    }
    dir = syntheticDir(this.owners.get(meta.ownerId) ?? meta.ownerId, this.sharedRoot);
    this.ownerDirs.set(meta.ownerId, dir);
    this.place(this.sharedRoot, dir);
    return dir;
  }

  /** Drops an owner's folder once nothing shared by them is left (and `Shared with me` with the last). */
  private pruneShared(dir: DirNode | null): void {
    if (!dir || dir.children.size > 0) return;
    for (const [owner, d] of this.ownerDirs) {
      if (d !== dir) continue;
      this.ownerDirs.delete(owner);
      this.detach(dir);
      if (this.sharedRoot && this.sharedRoot.children.size === 0) {
        this.detach(this.sharedRoot);
        this.sharedRoot = null;
      }
    }
  }

  lookup(path: string): Node | undefined {
    let node: Node = this.root;
    for (const part of splitPath(path)) {
      if (node.kind !== "dir") return undefined;
      const next: Node | undefined = node.children.get(part);
      if (!next) return undefined;
      node = next;
    }
    return node;
  }

  pathOf(node: Node): string {
    const parts: string[] = [];
    for (let n: Node | null = node; n && n !== this.root; n = n.parent) parts.unshift(n.name);
    return `/${parts.join("/")}`;
  }

  /**
   * Loads a whole listing at once (mount time): two passes so parents may come after children.
   * `files`: the records as kept (keep()), read before their folders were known.
   */
  load(folders: TxtFolder[], files: NoteMeta[]): void {
    this.onChange();
    this.onRemoteChange();
    for (const f of folders) this.sawChange(f.updatedAt);
    for (const f of files) this.sawChange(f.updatedAt);
    for (const f of folders) {
      this.dirs.set(f.id, {
        kind: "dir",
        name: f.name,
        parent: this.root,
        id: f.id,
        meta: f,
        children: new Map(),
      });
    }
    // Each folder's children, named once all are known (placeAll).
    const kids = new Map<DirNode, (FileNode | DirNode)[]>();
    const add = (parent: DirNode, node: FileNode | DirNode) => {
      const list = kids.get(parent);
      if (list) list.push(node);
      else kids.set(parent, [node]);
    };
    for (const dir of this.dirs.values()) {
      dir.parent = this.dirs.get(dir.meta!.parentFolderId ?? "") ?? this.orphanParent(dir.meta!);
      add(dir.parent, dir);
    }
    for (const f of files) {
      if (this.ghosted.has(f.id)) continue;
      const parent = this.dirs.get(f.folderId ?? "") ?? this.orphanParent(f);
      if (parent.id === f.folderId) f.folderId = parent.id; // one copy of the folder's id
      const node: FileNode = {
        kind: "file",
        name: "",
        parent,
        id: f.id,
        meta: f,
        remoteName: f.name,
        createKey: "",
      };
      this.files.set(f.id, node);
      add(parent, node);
    }
    for (const [dir, list] of kids) this.placeAll(dir, list);
  }

  /**
   * Puts a folder's children in at once (mount time: 100,000 notes): each under the name it wants
   * when no two want the same and nothing else is there yet, otherwise as relayout names them.
   */
  private placeAll(dir: DirNode, nodes: (FileNode | DirNode)[]): void {
    if (dir.children.size === 0) {
      const names = nodes.map(wantedName);
      if (new Set(names).size === names.length) {
        for (let i = 0; i < nodes.length; i++) {
          nodes[i]!.name = names[i]!;
          dir.children.set(names[i]!, nodes[i]!);
        }
        return;
      }
    }
    for (const node of nodes) dir.children.set(`\0${node.id}`, node); // placeholder keys; relayout names them
    this.relayout(dir);
  }

  /** `own`: the record our own save produced (its times stay as this mount set them). */
  upsertFile(remote: TxtFile, own = false): FileNode | undefined {
    this.sawChange(remote.updatedAt);
    let node = this.files.get(remote.id);
    const placed = this.placement(remote, node);
    const meta = this.keep(placed.meta);
    if (this.ghosted.has(meta.id) || this.deleting.has(meta.id) || this.deletedHere.has(meta.id))
      return undefined;
    const parent = placed.parent ?? this.dirs.get(meta.folderId ?? "") ?? this.orphanParent(meta);
    if (!node) {
      node = {
        kind: "file",
        name: `\0${meta.id}`,
        parent,
        id: meta.id,
        meta,
        remoteName: meta.name,
        createKey: "",
      };
      this.files.set(meta.id, node);
      this.place(parent, node);
      this.onChange(node);
      if (!own) this.onRemoteChange(node);
      return node;
    }
    // A feed page read before our own write landed may arrive after it: never step back.
    if (node.meta && isOlder(meta, node.meta)) return node;
    const moved = node.parent !== parent;
    const renamed = node.meta?.name !== meta.name || node.meta?.type !== meta.type;
    const contentChanged = node.meta?.contentHash !== meta.contentHash;
    let applied = false;
    if (!own && node.meta) applied = this.remote.remoteChange(node, meta) === "apply-remote";
    // The answer to our own change keeps the time shown (vim, having read a note made elsewhere,
    // refuses to write it when an `mv` onto it is delivered in between: "changed since reading it").
    else if (own && node.meta) this.remote.ownAnswer(node);
    // The answer to our own save may carry a rename or move made elsewhere (a metadata-only change
    // is merged, not a conflict): the kernel knows the names as they were, as for a remote change.
    const foreign = !own || meta.name !== node.remoteName || moved;
    node.meta = meta;
    node.remoteName = meta.name;
    const from = node.parent;
    if (moved) this.move(node, parent);
    else if (renamed && node.name !== wantedName(node)) this.relayout(parent);
    else this.onChange(node); // in place: only its own attributes changed
    if (moved) this.pruneShared(from);
    if (foreign && (moved || renamed)) this.onRemoteChange();
    // A note showing a local body (a save on its way: dirtySize) still shows it: the kernel's view
    // did not change (the feed's echo of that very save often comes before the save's answer; a
    // real change makes it a conflict copy, and showRemoteVersion reports the switch then).
    else if (!own && contentChanged && (applied || node.note?.dirtySize === undefined))
      this.onRemoteChange(node);
    return node;
  }

  /** Binds a newly uploaded note to its remote record. */
  bindFile(node: FileNode, meta: TxtFile): void {
    const existing = this.files.get(meta.id);
    if (existing && existing !== node) this.detach(existing); // the feed got there first
    node.id = meta.id;
    this.files.set(meta.id, node);
    this.upsertFile(meta, true);
  }

  /**
   * The change feed says note `id` was deleted elsewhere. A note with a local save still on its way
   * stays (lifecycle.ts): that save creates it again when delivered, nothing written here is lost.
   */
  remoteDelete(id: string): void {
    const node = this.files.get(id);
    if (node && this.remote.remoteDelete(node) === "keep-and-recreate") return;
    this.removeFile(id);
  }

  removeFile(id: string): FileNode | undefined {
    const node = this.files.get(id);
    if (!node) return undefined;
    this.onChange(node); // its path (and its folder's listing), reported while it still has one
    this.files.delete(id);
    this.detach(node);
    this.nameFreed(node.parent, node);
    this.pruneShared(node.parent);
    return node;
  }

  upsertFolder(meta: TxtFolder): DirNode | undefined {
    this.sawChange(meta.updatedAt);
    if (this.deleting.has(meta.id)) return undefined;
    const parent = this.dirs.get(meta.parentFolderId ?? "") ?? this.orphanParent(meta);
    let dir = this.dirs.get(meta.id);
    if (!dir) {
      this.onChange();
      dir = { kind: "dir", name: `\0${meta.id}`, parent, id: meta.id, meta, children: new Map() };
      this.dirs.set(meta.id, dir);
      this.place(parent, dir);
      this.adoptOrphans(dir);
      return dir;
    }
    if (dir.meta && meta.updatedAt < dir.meta.updatedAt) return dir;
    const renamed = dir.meta?.name !== meta.name;
    dir.meta = meta;
    const from = dir.parent;
    if (dir.parent !== parent) {
      this.move(dir, parent);
      this.pruneShared(from);
    } else if (renamed) this.relayout(parent);
    else this.onChange(dir); // in place: only its own attributes changed
    if (dir.parent !== from || renamed) this.onRemoteChange(); // every path below it changed
    return dir;
  }

  /** A folder made here now exists on the service as `meta`. */
  bindFolder(dir: DirNode, meta: TxtFolder): void {
    const existing = this.dirs.get(meta.id);
    if (existing && existing !== dir) {
      this.onChange();
      // The feed got there first: what it put inside moves over.
      for (const child of [...existing.children.values()]) this.move(child, dir);
      this.detach(existing);
    }
    dir.id = meta.id;
    dir.meta = meta;
    dir.createKey = undefined;
    this.dirs.set(meta.id, dir);
    // Named as made here: only its own attributes changed (and it is no longer a pending folder).
    if (dir.parent && dir.name !== wantedName(dir)) this.relayout(dir.parent);
    else this.onChange(dir);
  }

  /** Removes a folder; anything still inside moves up to its parent (the service's rule). */
  removeFolder(id: string): void {
    const dir = this.dirs.get(id);
    if (dir) this.removeDir(dir);
  }

  removeDir(dir: DirNode): void {
    // An empty folder: its own path; one with items inside moves them up, changing their paths.
    if (dir.children.size === 0 && dir.parent) this.onChange(dir);
    else this.onChange();
    if (dir.id) this.dirs.delete(dir.id);
    const parent = dir.parent ?? this.root;
    for (const child of [...dir.children.values()]) this.move(child, parent);
    this.detach(dir);
    this.nameFreed(parent, dir);
    this.pruneShared(parent);
  }

  /**
   * Adds a local-only file or a not-yet-uploaded note under `name` in `parent`, in place of an item
   * of that name listed there (a restart puts what it kept over what the listing had). `beside`:
   * never in place of another item; both stay, relayout names them apart.
   */
  addChild(parent: DirNode, node: FileNode | LocalNode | DirNode, beside = false): void {
    node.parent = parent;
    this.onChange(node);
    this.changedInside(parent);
    if (node.kind === "local") this.locals.add(node);
    if (node.kind === "dir" && node.localOnly) this.localDirs.add(node);
    // A free name that is already the node's own needs no relayout: creating many notes in one
    // folder stays linear.
    const taken = parent.children.get(node.name);
    parent.children.set(beside && taken && taken !== node ? `\0${++this.placeholders}` : node.name, node);
    if (taken || node.name !== wantedName(node)) this.relayout(parent);
  }

  detach(node: Node): void {
    this.onChange(node);
    if (node.kind === "local") this.locals.delete(node);
    if (node.kind === "dir") this.localDirs.delete(node);
    const parent = node.parent;
    if (!parent) return;
    this.changedInside(parent);
    if (parent.children.get(node.name) === node) {
      parent.children.delete(node.name);
      return;
    }
    for (const [key, child] of parent.children) {
      if (child === node) {
        parent.children.delete(key);
        break;
      }
    }
  }

  move(node: Node, to: DirNode, newName?: string): void {
    // A folder takes every path below it along: what was kept of them is dropped. A note reports
    // its old path (detach) and its new one (below), so the rest of what is cached natively stays
    // (`mv *.md dir/`: each next name is then found absent in C, not in JavaScript).
    if (node.kind === "dir") this.onChange();
    const from = node.parent;
    this.detach(node);
    if (newName !== undefined) node.name = newName;
    node.parent = to;
    // Never over another item of that name: it would vanish from the listing while still indexed
    // (the feed's copy of a note moved into the folder made here, beside the note it copies, before
    // the create's answer binds them). Both stay; relayout names them apart.
    const taken = to.children.get(node.name);
    const key = taken && taken !== node && node.kind !== "local" ? `\0${node.id ?? node.name}` : node.name;
    to.children.set(key, node);
    if (to !== from) this.changedInside(to);
    if (node.kind === "local") this.locals.add(node);
    if (node.kind === "dir" && node.localOnly) this.localDirs.add(node);
    this.relayout(to);
    if (from && from !== to) this.relayout(from);
    if (node.kind !== "dir") this.onChange(node);
  }

  /**
   * Whether folders' times move with the changes inside them: from the end of the mount's start
   * on (what it restores then is no change; the times shown are the record's or the kept ones).
   */
  followsFolderTimes = false;
  /** A folder's kept times moved on (a change inside it): they are to be kept so. */
  onFolderTimes: (dir: DirNode) => void = () => {};

  /** An item was added to, removed from or renamed in `dir`: its mtime and ctime move, as on a disk. */
  private changedInside(dir: DirNode): void {
    if (!this.followsFolderTimes) return;
    dir.localMtimeMs = dir.localCtimeMs = Date.now();
    if (dir.timesKept) this.onFolderTimes(dir);
  }

  /** Adds a new remote child under its display name; only a name clash needs the full relayout. */
  private place(dir: DirNode, node: FileNode | DirNode): void {
    const want = node.kind === "dir" ? node.meta!.name : displayName(node.meta!.name, node.meta!.type);
    node.parent = dir;
    if (dir.children.has(want)) {
      dir.children.set(`\0${node.id}`, node);
      this.relayout(dir);
    } else {
      node.name = want;
      dir.children.set(want, node);
    }
  }

  /** Folders and files whose parent arrived after them sit at the root until then. */
  private adoptOrphans(dir: DirNode): void {
    for (const holder of [this.root, ...this.ownerDirs.values()]) this.adoptFrom(holder, dir);
  }

  private adoptFrom(holder: DirNode, dir: DirNode): void {
    let adopted = false;
    for (const child of [...holder.children.values()]) {
      const wants =
        child.kind === "file"
          ? child.meta?.folderId
          : child.kind === "dir"
            ? child.meta?.parentFolderId
            : undefined;
      if (wants === dir.id) {
        holder.children.delete(child.name);
        child.parent = dir;
        // Orphans of two holders may share a name: neither is written over (relayout below).
        dir.children.set(dir.children.has(child.name) ? `\0${++this.placeholders}` : child.name, child);
        adopted = true;
      }
    }
    if (adopted) {
      this.onChange(); // moved without a report of their own
      this.relayout(dir);
      this.relayout(holder);
      if (holder !== this.root) this.pruneShared(holder);
    }
  }

  /**
   * An item left `dir`: one shown with a suffix beside it (two wanted its name) takes the plain name
   * again (`d1 (y8dvte)` must not stay so once the other d1 is deleted). Only when the
   * item that left wanted such a name: `rm -rf` of a big folder with one pair stays linear.
   */
  private nameFreed(dir: DirNode | null, gone: Node): void {
    if (dir?.namedApart?.has(wantedName(gone))) this.relayout(dir);
  }

  /**
   * Names children uniquely: local files keep theirs; remote items get their display name, and
   * duplicates get a stable suffix from their id (the oldest id keeps the plain name).
   */
  relayout(dir: DirNode): void {
    // Any child named anew changes every path at and below it: then everything is reported. When
    // none is, the change that called this reports its own node (a note added, moved or removed).
    const before = new Map<Node, string>();
    for (const child of dir.children.values()) before.set(child, child.name);
    this.layout(dir);
    for (const [child, name] of before) {
      if (child.name !== name) {
        this.onChange();
        return;
      }
    }
  }

  private layout(dir: DirNode): void {
    const locals: LocalNode[] = [];
    const groups = new Map<string, (FileNode | DirNode)[]>();
    for (const child of dir.children.values()) {
      if (child.kind === "local") {
        locals.push(child);
        continue;
      }
      const want = wantedName(child);
      const group = groups.get(want) ?? [];
      group.push(child);
      groups.set(want, group);
    }
    dir.children.clear();
    dir.namedApart = undefined;
    for (const l of locals) dir.children.set(l.name, l);
    for (const [want, group] of groups) {
      // Not-yet-uploaded notes first (the user just created that name), then by id.
      group.sort((a, b) => (a.id === null ? -1 : b.id === null ? 1 : a.id < b.id ? -1 : 1));
      for (const [i, node] of group.entries()) {
        const plain = i === 0 && !dir.children.has(want);
        if (!plain) {
          dir.namedApart ??= new Set();
          dir.namedApart.add(want);
        }
        const name = plain ? want : disambiguated(want, node.id ?? "pending");
        node.name = name;
        dir.children.set(name, node);
      }
    }
  }
}

/** The revision an ETag names (`"12-9f..."`): every change of a note moves it by one. */
export const revisionOf = (etag: string) => Number(/^"?(\d+)-/.exec(etag)?.[1] ?? Number.NaN);

/**
 * Whether record `a` is an older version of the note than `b`, by revision: two versions may share
 * a millisecond of updatedAt (our save and the next one), and the feed's record of the first,
 * applied after the answer to the second, would show the older body again.
 */
function isOlder(a: NoteMeta, b: NoteMeta): boolean {
  // A note deleted remotely and created again by our save is a new note (new id, revision 1).
  if (a.id !== b.id) return false;
  const ra = revisionOf(a.etag);
  const rb = revisionOf(b.etag);
  return Number.isFinite(ra) && Number.isFinite(rb) ? ra < rb : a.updatedAt < b.updatedAt;
}

/** The name a child would have with no duplicate beside it (local files keep theirs). */
function wantedName(node: Node): string {
  if (node.kind === "local") return node.name;
  if (node.kind === "dir") return node.meta?.name ?? node.name;
  return node.meta ? displayName(node.meta.name, node.meta.type) : node.remoteName;
}

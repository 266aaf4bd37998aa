// The in-memory namespace: every folder and note of the account (from one listing, kept current by
// the change feed) plus local-only files. getattr, lookup and readdir are answered from here only.
// The nodes are in treeNodes.ts, how they sit in folders in nodeTree.ts; this puts in the listing
// and the feed's records, indexed by remote id.
import type { TxtFile, TxtFolder } from "../lib/apiTypes.ts";
import { wantedName } from "./folderLayout.ts";
import { KeptRecords } from "./keptRecords.ts";
import type { Action } from "./lifecycle.ts";
import { NodeTree } from "./nodeTree.ts";
import { isOlder } from "./revisions.ts";
import { SharedFolders } from "./sharedFolders.ts";
import type { DirNode, FileNode, Node, NoteMeta } from "./treeNodes.ts";
import { Withheld } from "./withheld.ts";

export type { Claim, DirNode, FileNode, LocalNode, Node, NoteMeta, PendingMeta } from "./treeNodes.ts";

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

export class Tree extends NodeTree {
  /** The account's newest change seen (ms): the root's mtime (it has no record of its own). */
  newestChangeMs = 0;
  readonly files = new Map<string, FileNode>();
  readonly dirs = new Map<string, DirNode>();
  /** The ids the listing and the feed must not show (ghosts, deletes of ours on their way or just delivered). */
  readonly withheld = new Withheld();
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
  /** What is kept of each note's record, read once per record (vfs.ts start, upsertFile). */
  readonly records = new KeptRecords(this.dirs);
  private readonly shared = new SharedFolders({
    root: this.root,
    changed: () => this.onChange(),
    place: (dir, node) => this.place(dir, node),
    detach: (node) => this.detach(node),
    relayout: (dir) => this.relayout(dir),
  });

  constructor(remote: RemoteEvents = NOTHING_WAITS) {
    super();
    this.remote = remote;
  }

  /** A change at `iso` (an updatedAt, a feed record's changedAt) moves the newest change on. */
  sawChange(iso: string | undefined): void {
    const ms = iso ? Date.parse(iso) : Number.NaN;
    if (ms > this.newestChangeMs) this.newestChangeMs = ms;
  }

  /** Learns (or renames) the folder of an owner who shares with us. */
  setOwner(ownerId: string, label: string): void {
    this.shared.setOwner(ownerId, label);
  }

  /**
   * Loads a whole listing at once (mount time): two passes so parents may come after children.
   * `files`: the records as kept (records.keep()), read before their folders were known.
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
      dir.parent = this.dirs.get(dir.meta!.parentFolderId ?? "") ?? this.shared.orphanParent(dir.meta!);
      add(dir.parent, dir);
    }
    for (const f of files) {
      if (this.withheld.isGhost(f.id)) continue;
      const parent = this.dirs.get(f.folderId ?? "") ?? this.shared.orphanParent(f);
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
    const meta = this.records.keep(placed.meta);
    if (this.withheld.hides(meta.id)) return undefined;
    const parent = placed.parent ?? this.dirs.get(meta.folderId ?? "") ?? this.shared.orphanParent(meta);
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
    if (moved) this.shared.prune(from);
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
    this.shared.prune(node.parent);
    return node;
  }

  upsertFolder(meta: TxtFolder): DirNode | undefined {
    this.sawChange(meta.updatedAt);
    if (this.withheld.isDeleting(meta.id)) return undefined;
    const parent = this.dirs.get(meta.parentFolderId ?? "") ?? this.shared.orphanParent(meta);
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
      this.shared.prune(from);
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
    this.shared.prune(parent);
  }

  /** Folders and files whose parent arrived after them sit at the root until then. */
  private adoptOrphans(dir: DirNode): void {
    for (const holder of [this.root, ...this.shared.ownerFolders()]) this.adoptFrom(holder, dir);
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
        dir.children.set(dir.children.has(child.name) ? this.placeholder() : child.name, child);
        adopted = true;
      }
    }
    if (adopted) {
      this.onChange(); // moved without a report of their own
      this.relayout(dir);
      this.relayout(holder);
      if (holder !== this.root) this.shared.prune(holder);
    }
  }
}

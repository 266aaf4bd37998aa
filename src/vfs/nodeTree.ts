// Folders of nodes in memory: adding, moving and removing an item keeps each folder's names unique
// (folderLayout.ts) and reports what changed at once, so caches kept outside JavaScript stay right.
// The account's tree (tree.ts) puts the listing and the change feed in through these.
import { type Clock, systemClock } from "./clock.ts";
import { layOut, wantedName } from "./folderLayout.ts";
import { displayName, splitPath } from "./names.ts";
import type { DirNode, FileNode, LocalNode, Node } from "./treeNodes.ts";

export class NodeTree {
  readonly root: DirNode = { kind: "dir", name: "", parent: null, id: null, meta: null, children: new Map() };
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
   * Whether folders' times move with the changes inside them: from the end of the mount's start
   * on (what it restores then is no change; the times shown are the record's or the kept ones).
   */
  followsFolderTimes = false;
  /** The mount's wall clock (clock.ts): folders' times move by it. */
  clock: Clock = systemClock;
  /** A folder's kept times moved on (a change inside it): they are to be kept so. */
  onFolderTimes: (dir: DirNode) => void = () => {};
  /** Placeholder keys given so far (placeholder()). */
  private placeholders = 0;

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
    parent.children.set(beside && taken && taken !== node ? this.placeholder() : node.name, node);
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

  /** An item was added to, removed from or renamed in `dir`: its mtime and ctime move, as on a disk. */
  private changedInside(dir: DirNode): void {
    if (!this.followsFolderTimes) return;
    dir.localMtimeMs = dir.localCtimeMs = this.clock.now();
    if (dir.timesKept) this.onFolderTimes(dir);
  }

  /** Adds a new remote child under its display name; only a name clash needs the full relayout. */
  protected place(dir: DirNode, node: FileNode | DirNode): void {
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

  /** A key no child has: an item waits under it until relayout names it. */
  protected placeholder(): string {
    return `\0${++this.placeholders}`;
  }

  /**
   * An item left `dir`: one shown with a suffix beside it (two wanted its name) takes the plain name
   * again (`d1 (y8dvte)` must not stay so once the other d1 is deleted). Only when the
   * item that left wanted such a name: `rm -rf` of a big folder with one pair stays linear.
   */
  protected nameFreed(dir: DirNode | null, gone: Node): void {
    if (dir?.namedApart?.has(wantedName(gone))) this.relayout(dir);
  }

  /** Names `dir`'s children uniquely (folderLayout.ts). */
  relayout(dir: DirNode): void {
    // Any child named anew changes every path at and below it: then everything is reported. When
    // none is, the change that called this reports its own node (a note added, moved or removed).
    if (layOut(dir)) this.onChange();
  }
}

// The kernel's nodes, as libfuse3's low-level API hands them to us: a node id for every name the
// kernel looked up, kept until it forgets it (lookup counts, FORGET). The vfs is path-based, so each
// node knows its folder and name and its path is found by walking up: a folder renamed moves every
// node below it at once. A node id never changes while the kernel holds the node: vim compares
// `st_ino` around its save, and takes a changed one for another file.

export const ROOT = 1;

/** Absent names the kernel may keep at once (each costs a check when its folder changes). */
const ABSENT_MAX = 50_000;

export interface KernelNode {
  readonly ino: number;
  /** Its folder's node and its name there; detached (removed, or replaced by a rename): parent 0. */
  parent: number;
  name: string;
  dir: boolean;
  /** Lookups the kernel counts (each entry answered, each listed name): FORGET takes them back. */
  lookups: number;
  /** Open handles (libfuse's high-level API's `open_count`): a removed open note is hidden instead. */
  opens: number;
  /** Its name is one we gave it to keep it while open after it was removed (`.fuse_hidden…`). */
  hidden: boolean;
  /** Long kernel timeouts were given for it: the kernel keeps it until told otherwise (reconcile.ts). */
  kept: boolean;
  /** The attributes the kernel was last given (fingerprint.ts), undefined when it must ask again anyway. */
  told: number | undefined;
  /** A folder: its names as the kernel was last given them (fingerprint.ts). */
  toldList: number | undefined;
  /** Open handles that may change it (written through, or opened with O_TRUNC). */
  writers: number;
}

export class NodeTable {
  private readonly byIno = new Map<number, KernelNode>();
  /** Each folder's named children (keys are the nodes' own name strings). */
  private readonly children = new Map<number, Map<string, KernelNode>>();
  private next = ROOT + 1;
  private hiddenCount = 0;
  /** Told of every node dropped (the binding keeps things by node id too). */
  private readonly dropped: (ino: number) => void;

  constructor(dropped: (ino: number) => void = () => {}) {
    this.dropped = dropped;
    const root: KernelNode = {
      ino: ROOT,
      parent: 0,
      name: "",
      dir: true,
      lookups: 1,
      opens: 0,
      writers: 0,
      hidden: false,
      kept: true,
      told: undefined,
      toldList: undefined,
    };
    this.byIno.set(ROOT, root);
  }

  get(ino: number): KernelNode | undefined {
    return this.byIno.get(ino);
  }

  child(parent: number, name: string): KernelNode | undefined {
    return this.children.get(parent)?.get(name);
  }

  private giveName(parent: number, name: string, node: KernelNode): void {
    let kids = this.children.get(parent);
    if (!kids) {
      kids = new Map();
      this.children.set(parent, kids);
    }
    kids.set(name, node);
  }

  /** Takes `node`'s name from its folder, if it still holds it. */
  private unnamed(node: KernelNode): void {
    const kids = this.children.get(node.parent);
    if (kids?.get(node.name) !== node) return;
    kids.delete(node.name);
    if (kids.size === 0) this.children.delete(node.parent);
  }

  /** The node's path, or undefined when it has none (removed, or below a removed folder). */
  pathOf(ino: number): string | undefined {
    if (ino === ROOT) return "/";
    const parts: string[] = [];
    let node = this.byIno.get(ino);
    while (node && node.ino !== ROOT) {
      if (node.parent === 0) return undefined;
      parts.push(node.name);
      node = this.byIno.get(node.parent);
    }
    if (!node) return undefined;
    return `/${parts.reverse().join("/")}`;
  }

  childPath(parent: number, name: string): string | undefined {
    const dir = this.pathOf(parent);
    if (dir === undefined) return undefined;
    return dir === "/" ? `/${name}` : `${dir}/${name}`;
  }

  /** The node at `path`, when the kernel has every node on the way. */
  byPath(path: string): KernelNode | undefined {
    let node = this.byIno.get(ROOT);
    for (const part of path.split("/")) {
      if (!part || !node) continue;
      node = this.child(node.ino, part);
    }
    return node;
  }

  /**
   * The node for `name` in `parent` (made when new, without a lookup counted: `counted` does).
   * A name that became a folder where a file was (or the reverse) gets a new node.
   */
  ensure(parent: number, name: string, dir: boolean): KernelNode {
    const known = this.child(parent, name);
    if (known && known.dir === dir) return known;
    if (known) this.detach(known);
    // Every field from the start: one added later moves the object's fields out of line (more
    // memory per node, and the kernel may hold a hundred thousand).
    const node: KernelNode = {
      ino: this.next++,
      parent,
      name,
      dir,
      lookups: 0,
      opens: 0,
      writers: 0,
      hidden: false,
      kept: false,
      told: undefined,
      toldList: undefined,
    };
    this.byIno.set(node.ino, node);
    this.giveName(parent, name, node);
    return node;
  }

  /** The kernel now counts `n` more lookups of `node`. */
  counted(node: KernelNode, n = 1): void {
    node.lookups += n;
  }

  /** A node `ensure` made that no answer carried (it did not fit a listing): dropped again. */
  unused(node: KernelNode): void {
    if (node.lookups === 0 && node.opens === 0) this.drop(node);
  }

  /** FORGET: the kernel drops `n` lookups; at none it will never name the node again. */
  forget(ino: number, n: number): void {
    const node = this.byIno.get(ino);
    if (!node || ino === ROOT) return;
    node.lookups = Math.max(0, node.lookups - n);
    if (node.lookups === 0 && node.opens === 0) this.drop(node);
  }

  /** The name is gone (removed here or elsewhere): the node stays while the kernel holds it. */
  detach(node: KernelNode): void {
    this.unnamed(node);
    node.parent = 0;
    node.kept = false;
    if (node.lookups === 0 && node.opens === 0) this.drop(node);
  }

  /** `node` is now `name` in `parent`; what had that name is detached. */
  move(node: KernelNode, parent: number, name: string): void {
    const there = this.child(parent, name);
    if (there && there !== node) this.detach(there);
    this.unnamed(node);
    node.parent = parent;
    node.name = name;
    this.giveName(parent, name, node);
  }

  /** The name a removed open note keeps until its last close, in its folder (libfuse's own scheme). */
  hiddenName(node: KernelNode): string {
    this.hiddenCount++;
    return `.fuse_hidden${node.ino.toString(16).padStart(8, "0")}${this.hiddenCount.toString(16).padStart(8, "0")}`;
  }

  /** Every node with a name, the root first (reconcile.ts walks them). */
  named(): KernelNode[] {
    return [...this.byIno.values()].filter((n) => n.ino === ROOT || n.parent !== 0);
  }

  /**
   * Names the kernel was told are absent, and keeps so (a lookup answered "no such name" for an
   * hour): each must be told when it appears (reconcile.ts). Bounded: past ABSENT_MAX, absences
   * are answered without the kernel keeping them.
   */
  private readonly absent = new Map<number, Set<string>>();
  private absentCount = 0;

  /** Whether the kernel may keep `name` absent from `parent` (it is then remembered here). */
  keepAbsent(parent: number, name: string): boolean {
    const names = this.absent.get(parent) ?? new Set<string>();
    if (names.has(name)) return true;
    if (this.absentCount >= ABSENT_MAX) return false;
    this.absent.set(parent, names);
    names.add(name);
    this.absentCount++;
    return true;
  }

  /** The names kept absent from `parent`. */
  absentFrom(parent: number): ReadonlySet<string> | undefined {
    return this.absent.get(parent);
  }

  /** Every folder with names kept absent. */
  foldersWithAbsent(): number[] {
    return [...this.absent.keys()];
  }

  /** The kernel no longer keeps `name` absent from `parent` (told, or the folder forgotten). */
  absentGone(parent: number, name?: string): void {
    const names = this.absent.get(parent);
    if (!names) return;
    if (name === undefined) {
      this.absentCount -= names.size;
      this.absent.delete(parent);
    } else if (names.delete(name)) {
      this.absentCount--;
      if (names.size === 0) this.absent.delete(parent);
    }
  }

  get size(): number {
    return this.byIno.size;
  }

  private drop(node: KernelNode): void {
    this.byIno.delete(node.ino);
    this.absentGone(node.ino); // a folder the kernel forgot keeps no names absent
    this.unnamed(node);
    this.dropped(node.ino);
  }
}

// Tells the kernel what changed without it. The kernel keeps the tree's names, attributes and
// listings for an hour (timeouts.ts), so every change it did not make itself must reach it: the
// vfs reports them (the change feed, deliveries' answers, conflicts; a path, or "anything"), and
// each report is checked against what the kernel was last given, node by node:
// - a name the vfs no longer has (removed or renamed elsewhere, or now of the other kind): the
//   kernel forgets the name (notify_inval_entry);
// - attributes not the ones given: the kernel drops them and the note's pages (notify_inval_inode);
// - a folder whose names are not the ones listed: the kernel drops its kept listing.
// Checking against what was given, not trusting each report's detail, also covers a change whose
// report names only its folder or nothing. Reports are gathered for one turn of the event loop.
import { constants as fs } from "node:fs";
import type { KernelView } from "../../vfs/kernelView.ts";
import type { Vfs } from "../../vfs/vfs.ts";
import type { Fuse3Binding } from "../binding.ts";
import { attrKey, listKey } from "./fingerprint.ts";
import type { FolderNames } from "./folderNames.ts";
import type { NativeOpens } from "./nativeOpens.ts";
import type { KernelNode, NodeTable } from "./nodes.ts";

type Native = Pick<Fuse3Binding, "notifyInode" | "notifyEntry">;

/** The shortest time between two walks of every node the kernel holds. */
const SWEEP_EVERY_MS = 50;

export class KernelReconciler {
  private readonly paths = new Set<string>();
  private everything = false;
  private scheduled = false;

  private readonly vfs: Pick<Vfs, "readdir">;
  private readonly kernel: Pick<KernelView, "nativeStat">;
  private readonly nodes: NodeTable;
  private readonly native: Native;
  private readonly opens: NativeOpens;
  private readonly names: FolderNames;

  constructor(
    vfs: Pick<Vfs, "readdir">,
    kernel: Pick<KernelView, "nativeStat">,
    nodes: NodeTable,
    native: Native,
    opens: NativeOpens,
    names: FolderNames,
  ) {
    this.vfs = vfs;
    this.kernel = kernel;
    this.nodes = nodes;
    this.native = native;
    this.opens = opens;
    this.names = names;
  }

  /** What `path` (and its folder's listing) shows may have changed; no path: anything may have. */
  changed(path?: string): void {
    // Read-only opens of what changed go to JavaScript from now on (the report comes with the
    // change itself): none answered in C reads a version older than its open.
    if (path === undefined) this.opens.withdrawAll();
    else this.opens.withdraw(this.nodes.byPath(path));
    this.names.changed(path); // and a name that appeared is found in C's sets
    if (path === undefined) this.everything = true;
    else this.paths.add(path);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.run());
  }

  /**
   * When the last walk of every node the kernel holds ended, and how long it took. The vfs reports
   * "anything" for many of its own changes (a folder removed or moved, names laid out again): at
   * most one walk per SWEEP_EVERY_MS, or ten times its own length, whichever is longer, so a burst
   * of them costs a few walks (100,000 nodes: ~0.2 s each).
   */
  private sweptAt = Number.NEGATIVE_INFINITY;
  private sweepMs = 0;
  private sweepTimer: NodeJS.Timeout | undefined;

  /** Checks now what was reported (tests, and the turn after a report). */
  run(): void {
    this.scheduled = false;
    const paths = [...this.paths];
    this.paths.clear();
    if (this.everything) this.sweepWhenDue();
    for (const path of paths) {
      const node = this.nodes.byPath(path);
      if (node) this.check(node);
      const folder = this.nodes.byPath(path.slice(0, path.lastIndexOf("/")) || "/");
      if (folder && folder !== node) this.check(folder);
      if (folder) this.appeared(folder.ino, path.slice(path.lastIndexOf("/") + 1));
    }
  }

  private sweepWhenDue(): void {
    const wait = this.sweptAt + Math.max(SWEEP_EVERY_MS, 10 * this.sweepMs) - performance.now();
    if (wait > 0) {
      this.sweepTimer ??= setTimeout(() => {
        this.sweepTimer = undefined;
        this.sweepWhenDue();
      }, wait).unref();
      return;
    }
    this.everything = false;
    const started = performance.now();
    for (const node of this.nodes.named()) this.check(node);
    for (const folder of this.nodes.foldersWithAbsent()) this.appearedIn(folder);
    this.sweptAt = performance.now();
    this.sweepMs = this.sweptAt - started;
  }

  private check(node: KernelNode): void {
    if (!node.kept) return; // kept a second at most: nothing to tell
    const path = this.nodes.pathOf(node.ino);
    if (path === undefined) return;
    const st = this.kernel.nativeStat(path);
    const dir = st ? (st.mode & fs.S_IFMT) === fs.S_IFDIR : undefined;
    if (!st || dir !== node.dir) {
      // Gone, or another kind now: the kernel forgets the name and asks again when it is named.
      // The node keeps its name here: an operation of ours may be moving it right now (its report
      // can come before its answer), and the answer moves it. A name found again keeps its node
      // (one node per path, as libfuse's high-level API keeps), and opens check mtime and size (auto_cache).
      if (node.parent !== 0) {
        this.native.notifyEntry(node.parent, node.name);
        this.dropListing(node.parent);
      }
      return;
    }
    if (node.told !== undefined && node.told !== attrKey(st)) {
      node.told = undefined;
      this.opens.withdraw(node); // a report that named only its folder
      this.native.notifyInode(node.ino, 0, 0);
      if (node.dir) node.toldList = undefined; // that dropped its listing too
    }
    // Opened in C again, at the version it has now (withdrawn when the report came).
    this.opens.offer(node, path, st, st.openable);
    if (node.dir && node.toldList !== undefined) {
      let names: string[];
      try {
        names = this.vfs.readdir(path);
      } catch {
        return;
      }
      if (listKey(names) !== node.toldList) {
        this.dropListing(node.ino);
        this.appearedIn(node.ino);
      }
    }
  }

  /** Names the kernel keeps absent from `folder` that exist now: it forgets their absence. */
  private appearedIn(folder: number): void {
    for (const name of [...(this.nodes.absentFrom(folder) ?? [])]) this.appeared(folder, name);
  }

  private appeared(folder: number, name: string): void {
    if (!this.nodes.absentFrom(folder)?.has(name)) return;
    const path = this.nodes.childPath(folder, name);
    if (path === undefined) {
      this.nodes.absentGone(folder);
      return;
    }
    if (this.kernel.nativeStat(path) === undefined) return;
    this.nodes.absentGone(folder, name);
    this.native.notifyEntry(folder, name);
  }

  private dropListing(ino: number): void {
    const dir = this.nodes.get(ino);
    if (dir) {
      dir.toldList = undefined;
      dir.told = undefined;
    }
    this.native.notifyInode(ino, 0, 0);
  }
}

// What the per-operation handlers share: the parts they answer through, and the steps several of
// them take (an entry answered, what the kernel is told it may keep, what it changed itself).
//
// The rule across an await: anything may change there (the kernel sends other requests, about the
// same node too, and the vfs reports changes), so a handler takes nothing it read before an await
// as still true after it: it looks nodes up again and asks the vfs again (told() does), and it
// withdraws C's opens of a note before it awaits anything that may change it, never after.
import { constants as fs } from "node:fs";
import { constants } from "node:os";
import type { Logger } from "../../lib/logger.ts";
import type { KeptStat, KernelView } from "../../vfs/kernelView.ts";
import type { Stat, Vfs } from "../../vfs/vfs.ts";
import type { Fuse3Binding, Request } from "../binding.ts";
import { Errno } from "../errno.ts";
import { attrKey } from "../kernelCache/fingerprint.ts";
import type { FolderNames } from "../kernelCache/folderNames.ts";
import type { NativeOpens } from "../kernelCache/nativeOpens.ts";
import type { KernelNode, NodeTable } from "../kernelCache/nodes.ts";
import { KEPT_S, SHORT_S } from "../kernelCache/timeouts.ts";
import { OpenHandles } from "./openHandles.ts";

const { ENOENT } = constants.errno;

/** One operation's handler: answers `request` exactly once (or throws, and dispatch.ts answers). */
export type Handler = (request: Request, ino: number, ...args: never[]) => Promise<void>;

export interface OpParts {
  native: Fuse3Binding;
  vfs: Vfs;
  kernel: KernelView;
  log: Logger;
  nodes: NodeTable;
  names: FolderNames;
  opens: NativeOpens;
  /** Attributes with owner and permissions as the mount's options show them. */
  shown: (st: Stat) => Stat;
  /** Whether an open of `path` (with `flags`) must bypass the kernel's page cache (staleWindow.ts). */
  directIo: (path: string, flags: number) => boolean;
  /** Whether writes may be held in C (native/fuse3/held.c). */
  holding: boolean;
  /** Log every operation that reaches JavaScript (debug). */
  trace: boolean;
}

export const isDir = (st: Stat): boolean => (st.mode & fs.S_IFMT) === fs.S_IFDIR;

export class OpContext {
  readonly native: Fuse3Binding;
  readonly vfs: Vfs;
  readonly kernel: KernelView;
  readonly log: Logger;
  readonly nodes: NodeTable;
  readonly names: FolderNames;
  readonly opens: NativeOpens;
  readonly shown: (st: Stat) => Stat;
  readonly directIo: (path: string, flags: number) => boolean;
  readonly holding: boolean;
  /** Our handles open on each node (files.ts opens and releases them; getattr falls back on them). */
  readonly handles = new OpenHandles();
  private readonly tracing: boolean;

  constructor(parts: OpParts) {
    this.native = parts.native;
    this.vfs = parts.vfs;
    this.kernel = parts.kernel;
    this.log = parts.log;
    this.nodes = parts.nodes;
    this.names = parts.names;
    this.opens = parts.opens;
    this.shown = parts.shown;
    this.directIo = parts.directIo;
    this.holding = parts.holding;
    this.tracing = parts.trace;
  }

  /** --trace: the vfs call an operation makes (`sync`: answered from the tree, no await). */
  trace(op: string, path: string, sync?: boolean): void {
    if (!this.tracing) return;
    if (sync) this.log.debug({ op, path, sync: true }, "fuse op");
    else this.log.debug({ op, path }, "fuse op");
  }

  /** --trace of a read or write, with its length and offset. */
  traceIo(op: string, path: string, len: number, pos: number): void {
    if (this.tracing) this.log.debug({ op, path, len, pos }, "fuse op");
  }

  pathOf(ino: number): string {
    const path = this.nodes.pathOf(ino);
    if (path === undefined) throw new Errno(ENOENT);
    return path;
  }

  childPath(parent: number, name: string): string {
    const path = this.nodes.childPath(parent, name);
    if (path === undefined) throw new Errno(ENOENT);
    return path;
  }

  /** The tree's stat of `path`, synchronously (the hot path: every stat of ls -l, find, make). */
  known(path: string, op = "getattr"): KeptStat | undefined {
    const st = this.kernel.nativeStat(path);
    if (st) this.trace(op, path, true);
    return st;
  }

  /** `path`'s stat when the tree has none (sidecars, `.txtfs/`, a miss): the vfs's answer. */
  fetch(path: string, op = "getattr"): Promise<Stat> {
    this.trace(op, path);
    return this.vfs.getattr(path);
  }

  /** `path`'s stat, either way. */
  async stat(path: string): Promise<Stat> {
    return this.known(path) ?? (await this.fetch(path));
  }

  /** `name` in `parent` is `st` now: its node, one lookup counted, answered as an entry. */
  entry(request: Request, parent: number, name: string, path: string, st: Stat): void {
    this.nodes.absentGone(parent, name); // the kernel's entry for it is this one now
    const node = this.nodes.ensure(parent, name, isDir(st));
    this.nodes.counted(node);
    const s = this.told(node, path, st);
    this.native.replyEntry(request, node.ino, this.shown(st), s, s);
  }

  /** The kernel is given `st` for `node`: how long it may keep it. */
  told(node: KernelNode, path: string, st: Stat): number {
    // Kept long only what the vfs reports every change of (the tree's notes and folders).
    const known = this.kernel.nativeStat(path);
    node.kept = known !== undefined;
    node.told = node.kept ? attrKey(st) : undefined;
    // C answers the note's stats from now on with what the vfs says now (an await may have come
    // between `st` and here; a change in that gap was reported, and reconcile.ts tells the kernel).
    this.opens.offer(node, path, known ?? st, known?.openable === true);
    return node.kept ? KEPT_S : SHORT_S;
  }

  /**
   * Whether the kernel may keep `name` absent from `parent`: only in the tree's folders, where every
   * name that appears is reported (not sidecars, which resolve without being listed, nor `.txtfs/`).
   */
  mayKeepAbsent(parent: number, path: string, name: string): boolean {
    const { suffix, subtree } = this.kernel.unlisted;
    return (
      this.nodes.get(parent)?.kept === true &&
      !name.endsWith(suffix) &&
      !(path === subtree || path.startsWith(`${subtree}/`)) &&
      this.nodes.keepAbsent(parent, name)
    );
  }

  /**
   * The kernel changed this node itself (an operation it sent): it dropped what it kept of its
   * attributes and, for a folder, its listing, and asks again when it needs them. Nothing about it
   * needs telling until then (reconcile.ts would otherwise drop what the kernel no longer has).
   */
  kernelMade(ino: number): void {
    const node = this.nodes.get(ino);
    if (!node) return;
    // Its next stat comes to JavaScript: C may have been given its attributes while the operation
    // ran (a stat from elsewhere), from before it.
    this.opens.withdraw(node);
    node.told = undefined;
    node.toldList = undefined;
  }
}

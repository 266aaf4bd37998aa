// What a kernel adapter needs of the vfs beyond plain POSIX (Vfs): answers it may keep in the
// kernel's caches or in C, and the reports that tell it when to drop them. Vfs holds one as
// `kernel`; a front end without such caches (WebDAV) never needs it. The FUSE adapter
// (src/fuse/kernelCache/) is its one user.
import { ControlDir } from "./control/control.ts";
import { CONTROL_DIR } from "./control/entries.ts";
import type { VfsCore } from "./core.ts";
import { VfsError } from "./errors.ts";
import type { Attributes } from "./meta/attributes.ts";
import { SIDECAR_SUFFIX } from "./meta/sidecars.ts";
import type { Reads } from "./open/reads.ts";
import type { Saves } from "./open/saves.ts";
import type { Writes } from "./open/writes.ts";
import type { Stat } from "./stat.ts";

/** A stat the kernel may keep until told, and whether a read-only open of it may be answered in C. */
export type KeptStat = Stat & { cacheable: true; openable: boolean };

export interface KernelView {
  /**
   * The kernel's attribute and entry caches, and C's opens: `path`'s stat if the vfs reports every
   * change of it (the tree's notes and folders; undefined for sidecars, `.txtfs/` and misses), so
   * the kernel may keep it with a long timeout; `openable`: a note a read-only open of which C may
   * answer, read by path afterwards (readPath).
   */
  nativeStat(path: string): KeptStat | undefined;
  /** The kernel's page cache (auto_cache): the tree's stat of `path`, synchronously, if it has one. */
  statIfKnown(path: string): Stat | undefined;
  /**
   * C's absent names: the folder's names as lookups resolve them (the tree's; sidecars and
   * `.txtfs/` resolve without being among them: `unlisted`), or undefined when `path` is no folder
   * or has more than `max`.
   */
  lookupNames(path: string, max: number): string[] | undefined;
  /** The kernel's negative entries: whether the folder `path` certainly resolves no `name`. */
  lacksName(path: string, name: string): boolean;
  /** The kernel's negative entries: what resolves without being in its folder's names. */
  readonly unlisted: { readonly suffix: string; readonly subtree: string };
  /** The kernel's page cache: whether `path` is a note (its bytes can change without the kernel). */
  isNote(path: string): boolean;
  /**
   * The kernel's page cache: whether `path` is a note with appends not on the service yet (they
   * land at the end of whatever version it has, so its size is known only once delivered).
   */
  appendsOnTheirWay(path: string): boolean;
  /**
   * Writes held in C: whether writes through `fd` of up to `bytes`, each ending within the largest
   * note, can only succeed (a note whose content is here whole, or an O_APPEND handle whose note's
   * size is known), so C may answer them and hand them over later together.
   */
  writesCannotFail(fd: number, bytes: number): boolean;
  /** Writes held in C: the note's open handles whose writes cannot fail (a truncate emptied it). */
  handlesWhoseWritesCannotFail(path: string, bytes: number): number[];
  /** A read through a read-only open C answered (no handle here): as a fresh open would read. */
  readPath(path: string, length: number, position: number): Promise<Buffer>;
  /** fsync(2) through a read-only open C answered: what any handle wrote to the note. */
  fsyncPath(path: string): Promise<void>;
  /**
   * Every kernel cache: registers who hears of each change to what nativeStat answers that the
   * kernel did not ask for (the change feed, deliveries finishing, restores; a change made inside
   * an operation the adapter answers is its own). `path`: it and its folder's listing; none: anything.
   */
  onAttrsChanged(listener: (path?: string) => void): void;
}

/** The parts a KernelView answers from. */
export interface KernelViewParts {
  control: Pick<ControlDir, "ownsFd" | "notify">;
  attributes: Pick<Attributes, "statAndKind" | "statIfKnown">;
  reads: Pick<Reads, "readPath">;
  saves: Pick<Saves, "fsyncPath">;
  writes: Pick<Writes, "writesCannotFail" | "handlesWhoseWritesCannotFail">;
}

export class VfsKernelView implements KernelView {
  private readonly c: VfsCore;
  private readonly parts: KernelViewParts;
  readonly unlisted = { suffix: SIDECAR_SUFFIX, subtree: `/${CONTROL_DIR}` };

  constructor(c: VfsCore, parts: KernelViewParts) {
    this.c = c;
    this.parts = parts;
  }

  nativeStat(path: string): KeptStat | undefined {
    if (ControlDir.owns(path)) return undefined;
    const known = this.parts.attributes.statAndKind(path);
    const openable = known?.note !== undefined && !this.c.notes.appendsOnTheirWay(known.note);
    return known && { ...known.st, cacheable: true, openable };
  }

  statIfKnown(path: string): Stat | undefined {
    if (ControlDir.owns(path)) return undefined;
    return this.parts.attributes.statIfKnown(path);
  }

  lookupNames(path: string, max: number): string[] | undefined {
    const node = this.c.tree.lookup(path);
    if (node?.kind !== "dir" || node.children.size > max) return undefined;
    return [...node.children.keys()];
  }

  lacksName(path: string, name: string): boolean {
    if (name.endsWith(SIDECAR_SUFFIX) || ControlDir.owns(path) || (path === "/" && name === CONTROL_DIR))
      return false;
    const node = this.c.tree.lookup(path);
    return node?.kind === "dir" && !node.children.has(name);
  }

  isNote(path: string): boolean {
    return this.c.tree.lookup(path)?.kind === "file";
  }

  appendsOnTheirWay(path: string): boolean {
    const node = this.c.tree.lookup(path);
    return node?.kind === "file" && this.c.notes.appendsOnTheirWay(node);
  }

  writesCannotFail(fd: number, bytes: number): boolean {
    return !this.parts.control.ownsFd(fd) && this.parts.writes.writesCannotFail(fd, bytes);
  }

  handlesWhoseWritesCannotFail(path: string, bytes: number): number[] {
    return ControlDir.owns(path) ? [] : this.parts.writes.handlesWhoseWritesCannotFail(path, bytes);
  }

  readPath(path: string, length: number, position: number): Promise<Buffer> {
    if (ControlDir.owns(path)) return Promise.reject(new VfsError("EBADF"));
    return this.parts.reads.readPath(path, length, position);
  }

  fsyncPath(path: string): Promise<void> {
    if (ControlDir.owns(path)) return Promise.resolve();
    return this.parts.saves.fsyncPath(path);
  }

  onAttrsChanged(listener: (path?: string) => void): void {
    this.parts.control.notify = listener;
    this.c.tree.onChange = (changed) => listener(changed?.parent ? this.c.tree.pathOf(changed) : undefined);
  }
}

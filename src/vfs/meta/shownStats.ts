// What each path last showed to stat, for the kernel's page cache: another item taking a path with
// the same mtime and size would be served the pages of the one before, so its mtime moves on.
import { BoundedMap } from "../boundedMap.ts";
import type { Stat } from "../stat.ts";
import type { FileNode, Node } from "../tree.ts";
import { type StatCore, statOf } from "./statOf.ts";

export type ShownStatsCore = StatCore;

export class ShownStats {
  private readonly c: ShownStatsCore;

  constructor(c: ShownStatsCore) {
    this.c = c;
  }

  /** getattr of anything in the tree, synchronously (the hot path); undefined for sidecars or misses. */
  statIfKnown(path: string): Stat | undefined {
    const node = this.c.tree.lookup(path);
    return node ? this.answer(path, node) : undefined;
  }

  /** statIfKnown, and whether the path is a note (a read-only open of it can go by path: readPath). */
  statAndKind(path: string): { st: Stat; note: FileNode | undefined } | undefined {
    const node = this.c.tree.lookup(path);
    return node ? { st: this.answer(path, node), note: node.kind === "file" ? node : undefined } : undefined;
  }

  /**
   * What each path last answered, and for which item. The mount keeps one node (one kernel inode,
   * one page cache) per name, and keeps its cached pages while mtime and size stay the same: it
   * cannot know that another note took the name since (deleted remotely, then another renamed
   * onto it). Such a note never answers with the mtime and size the path last had: its mtime moves
   * on by a millisecond, so the pages of the other note are dropped.
   * Only pages can be stale, so only paths that held an item the kernel may have pages of are
   * remembered (`paged`): a listing of 100,000 notes remembered each (~16 MiB) for nothing.
   */
  private readonly shownAt = new BoundedMap<string, { node: Node; mtimeMs: number; size: number }>(200_000);
  /** Items the kernel may hold pages of: opened through a handle, or read by path, at least once. */
  private readonly paged = new WeakSet<Node>();

  /**
   * The kernel may hold pages of `node` (at `path`) from now on: a handle was opened on it, or it
   * was read by path. What it shows is remembered from now on, starting with what it shows now.
   */
  paging(path: string, node: Node): void {
    if (node.kind === "dir") return;
    // Every read that reaches the daemon comes here: once remembered, its answers keep it current.
    if (this.paged.has(node) && this.shownAt.get(path)?.node === node) return;
    this.paged.add(node);
    this.answer(path, node);
  }

  /**
   * `next` took `prev`'s place with the same bytes and times (a note whose bytes stopped being
   * UTF-8 kept local, a local file going up as a note): the same file to the kernel, not another
   * one whose time must move. Moved, vim finds the file "changed since reading it" and refuses
   * its save (`truncate` splitting a character, then vim).
   */
  continued(prev: Node, next: Node): void {
    const path = this.c.tree.pathOf(next);
    const shown = this.shownAt.get(path);
    if (shown?.node === prev) this.shownAt.set(path, { ...shown, node: next });
    if (this.paged.has(prev)) this.paged.add(next); // the kernel's pages of it are `next`'s
  }

  /** What `node` shows at `path`, its mtime moved on if another item showed the same there. */
  answer(path: string, node: Node): Stat {
    let st = statOf(this.c, node);
    if (node.kind === "dir") return st;
    const before = this.shownAt.get(path);
    if (!before && !this.paged.has(node)) return st; // no pages anywhere to be stale
    if (before && before.node !== node && before.mtimeMs === st.mtime.getTime() && before.size === st.size) {
      if (node.kind === "file") this.c.notes.of(node).shownApart(st.mtime.getTime() + 1);
      else node.mtimeMs = st.mtime.getTime() + 1;
      st = statOf(this.c, node);
    }
    this.shownAt.set(path, { node, mtimeMs: st.mtime.getTime(), size: st.size });
    return st;
  }
}

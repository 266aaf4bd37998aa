// Read-only opens answered in C (native/fuse3/opens.c), from JavaScript's side: which notes may be
// opened there, from when and at which version. A note is offered whenever the kernel is given its
// attributes or the vfs reports it changed, and withdrawn before anything may change it: an open
// that writes, a truncate, a rename or removal (dispatch.ts), a change the vfs reports (withdrawn
// in the same turn as the change, offered again at the next: reconcile.ts).
import type { Stat } from "../../vfs/core.ts";
import type { Fuse3Binding } from "./binding.ts";
import type { KernelNode } from "./nodes.ts";

type Native = Pick<Fuse3Binding, "openable" | "openableNone" | "nativeOpens" | "watchReleases">;

export class NativeOpens {
  private readonly native: Native;
  private readonly after: (path: string) => number;

  /** `after(path)`: for how many ms the kernel may still hold a size from before the note's last change. */
  constructor(native: Native, after: (path: string) => number) {
    this.native = native;
    this.after = after;
  }

  /**
   * The kernel has `st` for `node` (or will ask for it): opens are answered in C while nothing may
   * change the note unseen there — the vfs says it may be (`openable`: Vfs.nativeStat), no handle of
   * ours writes it, it is not hidden, and the vfs reports its changes (`kept`).
   */
  offer(node: KernelNode, path: string, st: Stat, openable: boolean): void {
    if (node.dir) return;
    const after = openable && node.kept && node.writers === 0 && !node.hidden ? this.after(path) : -1;
    this.native.openable(node.ino, after, st.mtime.getTime(), st.size);
  }

  /** From now until offered again, opens of the note go to JavaScript (it may be about to change). */
  withdraw(node: KernelNode | undefined): void {
    if (node && !node.dir) this.native.openable(node.ino, -1, 0, 0);
  }

  withdrawAll(): void {
    this.native.openableNone();
  }

  /** Handles of the note open at all: JavaScript's and those made in C. */
  count(node: KernelNode): number {
    return node.opens + this.native.nativeOpens(node.ino);
  }

  /**
   * Whether the note is open at all; if it is, the last release of a handle made in C comes to
   * JavaScript from now on (a removed note kept under a hidden name until then).
   */
  openWatched(node: KernelNode): boolean {
    this.native.watchReleases(node.ino, true); // before counting: no release slips in between
    if (this.count(node) > 0) return true;
    this.native.watchReleases(node.ino, false);
    return false;
  }
}

// Read-only opens answered in C (native/fuse3/opens.c), from JavaScript's side: which notes may be
// opened there, from when and at which version; while a note may be, its attributes (GETATTR) are
// answered there too, as they were given with the mark. A note is offered whenever the kernel is
// given its attributes or the vfs reports it changed, and withdrawn before anything may change it:
// an open that writes, a truncate, a rename or removal (ops/), a change the vfs reports
// (withdrawn in the same turn as the change, offered again at the next: reconcile.ts).
import type { Stat } from "../../vfs/vfs.ts";
import type { Fuse3Binding } from "../binding.ts";
import { attrKey } from "./fingerprint.ts";
import type { KernelNode } from "./nodes.ts";

type Native = Pick<Fuse3Binding, "openable" | "openableNone" | "nativeOpens" | "watchReleases">;

export class NativeOpens {
  private readonly native: Native;
  private readonly after: (path: string) => number;
  private readonly shown: (st: Stat) => Stat;
  private readonly keepS: number;
  /** What `openable` is given (opens.c reads it during the call): one array, written each time. */
  private readonly attrs = new Float64Array(9);

  /**
   * `after(path)`: for how many ms the kernel may still hold a size from before the note's last
   * change; `shown`: the attributes as the kernel is shown them (owner, permissions); `keepS`: how
   * long the kernel may keep a note's attributes.
   */
  constructor(native: Native, after: (path: string) => number, shown: (st: Stat) => Stat, keepS: number) {
    this.native = native;
    this.after = after;
    this.shown = shown;
    this.keepS = keepS;
  }

  /**
   * The kernel has `st` for `node` (or will ask for it): opens are answered in C while nothing may
   * change the note unseen there — the vfs says it may be (`openable`: KernelView.nativeStat), no handle of
   * ours writes it, it is not hidden, and the vfs reports its changes (`kept`).
   */
  offer(node: KernelNode, path: string, st: Stat, openable: boolean): void {
    if (node.dir) return;
    if (!(openable && node.kept && node.writers === 0 && !node.hidden)) {
      this.native.openable(node.ino, -1);
      return;
    }
    // The kernel may have these attributes from C from now on: a report that changes them must
    // be told to it (reconcile.ts), even if JavaScript gave it none since its own last change.
    node.told ??= attrKey(st);
    const s = this.shown(st);
    const a = this.attrs;
    a[0] = s.mtime.getTime();
    a[1] = s.size;
    a[2] = s.mode;
    a[3] = s.atime.getTime();
    a[4] = s.ctime.getTime();
    a[5] = s.nlink;
    a[6] = s.uid;
    a[7] = s.gid;
    a[8] = this.keepS;
    this.native.openable(node.ino, this.after(path), a);
  }

  /** From now until offered again, opens of the note go to JavaScript (it may be about to change). */
  withdraw(node: KernelNode | undefined): void {
    if (node && !node.dir) this.native.openable(node.ino, -1);
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

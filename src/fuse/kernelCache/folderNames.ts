// Lookups of names a folder does not have, answered in C (native/fuse3/names.c), from JavaScript's
// side: each folder's names are put there when the kernel is given its listing, or when a lookup in
// it reached JavaScript and found nothing; every name that may come to exist is added before the
// change can be seen (an operation's own names before it is answered: ops/; the vfs's
// reports in the same turn as the change: reconcile.ts). Only the tree's folders, whose every
// change the vfs reports (`kept`), have names there; sidecars resolve without being listed (C never
// answers for their suffix), and so does `.txtfs` in the root (always among the root's names).
import type { KernelView } from "../../vfs/kernelView.ts";
import type { Fuse3Binding } from "../binding.ts";
import { type KernelNode, type NodeTable, ROOT } from "./nodes.ts";

type Native = Pick<Fuse3Binding, "putNames" | "addName" | "dropAllNames" | "unlistedSuffix">;

/** A folder with more names than this is not put in C (its lookups go to JavaScript). */
const NAMES_MAX = 100_000;

export class FolderNames {
  private readonly native: Native;
  private readonly kernel: Pick<KernelView, "lookupNames" | "unlisted">;
  private readonly nodes: NodeTable;
  /** The control directory's name in the root: it resolves whether listed or not. */
  private readonly control: string;

  constructor(native: Native, kernel: Pick<KernelView, "lookupNames" | "unlisted">, nodes: NodeTable) {
    this.native = native;
    this.kernel = kernel;
    this.nodes = nodes;
    this.control = kernel.unlisted.subtree.slice(1);
    native.unlistedSuffix(kernel.unlisted.suffix);
  }

  /** The kernel was given `names`, all of the folder's (a listing from its start). */
  listed(folder: KernelNode | undefined, names: string[]): void {
    if (!folder?.kept || names.length > NAMES_MAX) return;
    this.native.putNames(folder.ino, folder.ino === ROOT ? [...names, this.control] : names);
  }

  /** A lookup in `folder` (at `path`) found nothing: the next ones are answered in C. */
  missed(folder: KernelNode | undefined, path: string): void {
    if (!folder?.kept) return;
    const names = this.kernel.lookupNames(path, NAMES_MAX);
    if (names) this.listed(folder, names);
  }

  /** `name` may exist in the folder `parent` from now on. */
  named(parent: number, name: string): void {
    this.native.addName(parent, name);
  }

  /** A report of the vfs (same turn as the change): `path` may exist now; no path: anything may. */
  changed(path?: string): void {
    if (path === undefined) {
      this.native.dropAllNames();
      return;
    }
    const slash = path.lastIndexOf("/");
    const folder = this.nodes.byPath(path.slice(0, slash) || "/");
    if (folder) this.named(folder.ino, path.slice(slash + 1));
  }
}

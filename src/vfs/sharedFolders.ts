// Where what others share with us is shown: `Shared with me/OWNER/`, folders of the mount only,
// made when the first item shared by that owner arrives and dropped with the last.
import type { TxtFolder } from "../lib/apiTypes.ts";
import type { DirNode, FileNode, Node, NoteMeta } from "./treeNodes.ts";

/** The top-level folder holding what others shared with you, one folder per owner inside. */
export const SHARED_DIR = "Shared with me";

/** What the shared folders do to the tree they are shown in. */
export interface SharedFoldersTree {
  readonly root: DirNode;
  /** Anything in the tree may have changed. */
  changed(): void;
  place(dir: DirNode, node: FileNode | DirNode): void;
  detach(node: Node): void;
  relayout(dir: DirNode): void;
}

/** A folder of the mount only (no remote id): read-only, so nothing can be created in it. */
function syntheticDir(name: string, parent: DirNode): DirNode {
  const epoch = new Date(0).toISOString();
  const meta: TxtFolder = {
    id: "",
    name,
    context: "",
    tags: [],
    parentFolderId: null,
    fileCount: 0,
    createdAt: epoch,
    updatedAt: epoch,
    endpoint: "",
    access: "shared",
    role: "reader",
  };
  return { kind: "dir", name: `\0${name}`, parent, id: null, meta, children: new Map() };
}

export class SharedFolders {
  private readonly tree: SharedFoldersTree;
  /** Owner account id -> the name of their folder under `Shared with me/` (their email). */
  private readonly owners = new Map<string, string>();
  private sharedRoot: DirNode | null = null;
  private readonly ownerDirs = new Map<string, DirNode>();

  constructor(tree: SharedFoldersTree) {
    this.tree = tree;
  }

  /** Every owner's folder (items whose folder arrives later wait in them, as in the root). */
  ownerFolders(): IterableIterator<DirNode> {
    return this.ownerDirs.values();
  }

  /** Learns (or renames) the folder of an owner who shares with us. */
  setOwner(ownerId: string, label: string): void {
    this.owners.set(ownerId, label);
    const dir = this.ownerDirs.get(ownerId);
    if (dir?.meta && dir.meta.name !== label && this.sharedRoot) {
      dir.meta.name = label;
      this.tree.relayout(this.sharedRoot);
    }
  }

  /**
   * Where an item goes whose folder is not visible to us: our own at the top (until its folder
   * arrives), shared ones under `Shared with me/OWNER/` (a shared folder's top, a file shared alone).
   */
  orphanParent(meta: NoteMeta | TxtFolder): DirNode {
    if (meta.access !== "shared" || !meta.ownerId) return this.tree.root;
    let dir = this.ownerDirs.get(meta.ownerId);
    if (dir) return dir;
    this.tree.changed();
    if (!this.sharedRoot) {
      this.sharedRoot = syntheticDir(SHARED_DIR, this.tree.root);
      this.tree.place(this.tree.root, this.sharedRoot);
    }
    dir = syntheticDir(this.owners.get(meta.ownerId) ?? meta.ownerId, this.sharedRoot);
    this.ownerDirs.set(meta.ownerId, dir);
    this.tree.place(this.sharedRoot, dir);
    return dir;
  }

  /** Drops an owner's folder once nothing shared by them is left (and `Shared with me` with the last). */
  prune(dir: DirNode | null): void {
    if (!dir || dir.children.size > 0) return;
    for (const [owner, d] of this.ownerDirs) {
      if (d !== dir) continue;
      this.ownerDirs.delete(owner);
      this.tree.detach(dir);
      if (this.sharedRoot && this.sharedRoot.children.size === 0) {
        this.tree.detach(this.sharedRoot);
        this.sharedRoot = null;
      }
    }
  }
}

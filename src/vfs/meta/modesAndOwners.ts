// Modes and owners, which the service has no field for: set here (chmod, chown, what a create was
// made with, what a rename over a note brings) and kept by this device (deviceAttrs.ts), with a folder's times.
import type { VfsCore } from "../core.ts";
import type { Owner } from "../local/specialFiles.ts";
import type { DirNode, FileNode, Node } from "../tree.ts";
import { folderKey, type KeptAttrs, noteKey } from "./deviceAttrs.ts";
import type { SidecarAttrs } from "./sidecarAttrs.ts";
import { FOLDER_MODE, NOTE_MODE, type StatCore, statOf } from "./statOf.ts";

/** The parts modes call: a sidecar path has no attributes of its own. */
export interface ModesAndOwnersParts {
  sidecars: Pick<SidecarAttrs, "sidecarOnly">;
}

export type ModesAndOwnersCore = StatCore &
  Pick<VfsCore, "attrsChanged" | "clock" | "deviceAttrs" | "find" | "localNodes">;

export class ModesAndOwners {
  private readonly c: ModesAndOwnersCore;
  private readonly sidecars: ModesAndOwnersParts["sidecars"];

  constructor(c: ModesAndOwnersCore, parts: ModesAndOwnersParts) {
    this.c = c;
    this.sidecars = parts.sidecars;
  }

  /**
   * Mode bits are this device's (the service has none): kept for notes and folders by id
   * (deviceAttrs.ts), for local files and folders in their manifest. What a reader's role or a
   * read-only mount allows is applied on top when shown (no write bits), never stored.
   */
  async chmod(path: string, mode: number): Promise<void> {
    if (this.sidecars.sidecarOnly(path)) return;
    const node = this.c.find(path);
    this.setMode(node, mode & 0o7777);
    if (node.kind === "local") node.ctimeMs = this.c.clock.now();
    this.c.attrsChanged(node);
  }

  /** What was just made with `mode` (create, mkdir: the kernel applied the umask) by `owner`. */
  madeWith(path: string, mode: number, owner?: Owner): void {
    const node = this.c.tree.lookup(path);
    if (!node) return;
    this.ownedBy(node, owner);
    if (node.kind === "file" || node.kind === "dir") this.setMode(node, mode & 0o7777);
    else this.keep(node);
  }

  /**
   * A rename over a note (or a local file going up as one): the note shows the mode and owner of
   * what replaced it, as on a disk, and keeps its identity (id, tags, history; so its inode too).
   */
  attrsFrom(src: Node, target: FileNode): void {
    if (src.kind === "dir") return;
    const uid = src.uid;
    const gid = src.gid;
    if (src.mode !== target.mode) this.setMode(target, src.mode ?? NOTE_MODE);
    if (uid === target.uid && gid === target.gid) return;
    target.uid = uid;
    target.gid = gid;
    this.keepNoteAttrs(target);
  }

  private setMode(node: Node, bits: number): void {
    if (node.kind === "local") {
      node.mode = bits;
      this.c.localNodes.save();
    } else if (node.kind === "file") {
      node.mode = bits === NOTE_MODE ? undefined : bits;
      this.c.notes.of(node).changedHere();
      this.keepNoteAttrs(node);
    } else {
      node.mode = bits === FOLDER_MODE ? undefined : bits;
      node.localCtimeMs = this.c.clock.now();
      this.keepFolderAttrs(node);
    }
  }

  /** What this device keeps of a note, once it has an id to keep it by (a new one: at delivery). */
  keepNoteAttrs(node: FileNode): void {
    if (node.id) this.c.deviceAttrs.set(noteKey(node.id), { mode: node.mode, uid: node.uid, gid: node.gid });
  }

  /** What this device keeps of a folder: local ones in the manifest, others by id (a new one: once created). */
  keepFolderAttrs(dir: DirNode): void {
    if (dir.localOnly) {
      this.c.localNodes.save();
      return;
    }
    const key = dir === this.c.tree.root ? "root" : dir.id ? folderKey(dir.id) : undefined;
    if (!key) return;
    const times = dir.timesKept ? { mtimeMs: dir.localMtimeMs, atimeMs: dir.localAtimeMs } : {};
    this.c.deviceAttrs.set(key, { mode: dir.mode, uid: dir.uid, gid: dir.gid, ...times });
  }

  /** At start: what this device kept of the listed notes and folders. */
  restoreKept(): void {
    const kept = this.c.deviceAttrs;
    kept.load();
    const owner = (node: Node, k: KeptAttrs) => {
      node.uid = k.uid;
      node.gid = k.gid;
    };
    for (const node of this.c.tree.files.values()) {
      const k = node.id ? kept.get(noteKey(node.id)) : undefined;
      if (!k) continue;
      node.mode = k.mode;
      owner(node, k);
    }
    const restore = (dir: DirNode, key: string) => {
      const k = kept.get(key);
      if (!k) return;
      dir.mode = k.mode;
      owner(dir, k);
      if (k.mtimeMs === undefined) return;
      dir.localMtimeMs = k.mtimeMs;
      dir.localAtimeMs = k.atimeMs;
      dir.timesKept = true;
    };
    for (const dir of this.c.tree.dirs.values()) if (dir.id) restore(dir, folderKey(dir.id));
    restore(this.c.tree.root, "root");
  }

  /**
   * Owners are this device's too (the service has one per account): kept as modes are; the kernel
   * decides who may change them (`-o default_permissions`: only root). -1: that one stays.
   */
  async chown(path: string, uid: number, gid: number): Promise<void> {
    if (this.sidecars.sidecarOnly(path)) return;
    const node = this.c.find(path);
    const shown = statOf(this.c, node);
    this.ownedBy(node, { uid: uid === -1 ? shown.uid : uid, gid: gid === -1 ? shown.gid : gid });
    this.keep(node);
    this.c.attrsChanged(node);
  }

  /** `owner` (who made it, or chown) on `node`, kept only where it is not the mount's. */
  ownedBy(node: Node, owner: Owner | undefined): void {
    if (!owner) return;
    node.uid = owner.uid === this.c.opts.uid ? undefined : owner.uid;
    node.gid = owner.gid === this.c.opts.gid ? undefined : owner.gid;
    const now = this.c.clock.now();
    if (node.kind === "local") node.ctimeMs = now;
    else if (node.kind === "file") this.c.notes.of(node).changedHere(now);
    else node.localCtimeMs = now;
  }

  /** Keeps what this device holds of `node`: where it is kept depends on its kind. */
  private keep(node: Node): void {
    if (node.kind === "local") this.c.localNodes.save();
    else if (node.kind === "file") this.keepNoteAttrs(node);
    else this.keepFolderAttrs(node);
  }
}

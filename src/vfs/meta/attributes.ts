// Attributes as the rest of the vfs calls them: stat, times, modes, owners, xattrs, sidecars, df.
// Built here from its parts, one concern each (the files named beside each field).
import type { Attachments } from "../attachments/attachments.ts";
import type { VfsCore } from "../core.ts";
import type { Delivery } from "../delivery/deliver.ts";
import { fail } from "../errors.ts";
import type { Owner } from "../local/specialFiles.ts";
import type { Saves } from "../open/saves.ts";
import type { Stat } from "../stat.ts";
import type { DirNode, FileNode, Node } from "../tree.ts";
import { type DiskSpaceCore, diskSpace } from "./diskSpace.ts";
import { ExtendedAttrs, type ExtendedAttrsCore } from "./extendedAttrs.ts";
import { ItemTimes, type ItemTimesCore } from "./itemTimes.ts";
import { ModesAndOwners, type ModesAndOwnersCore } from "./modesAndOwners.ts";
import { ShownStats, type ShownStatsCore } from "./shownStats.ts";
import { SidecarAttrs, type SidecarAttrsCore } from "./sidecarAttrs.ts";
import type { SidecarNode } from "./sidecars.ts";
import { statOf } from "./statOf.ts";

/** The parts attributes call: waiting saves settle before metadata is read or set. */
export interface AttributesParts {
  attachments: Pick<Attachments, "keepPinned">;
  delivery: Pick<Delivery, "settle">;
  saves: Pick<Saves, "needsUpload" | "upload">;
}

/** What attributes use of the mount's shared state: what their parts use. */
export type AttributesCore = DiskSpaceCore &
  ExtendedAttrsCore &
  ItemTimesCore &
  ModesAndOwnersCore &
  ShownStatsCore &
  SidecarAttrsCore &
  Pick<VfsCore, "findDir" | "openSidecars">;

export class Attributes {
  private readonly c: AttributesCore;
  /** What each path last showed (shownStats.ts). */
  private readonly shown: ShownStats;
  /** Sidecars as files (sidecarAttrs.ts). */
  private readonly sidecars: SidecarAttrs;
  /** Modes and owners, and what this device keeps of them (modesAndOwners.ts). */
  private readonly modes: ModesAndOwners;
  /** Times set here or brought by an answer (itemTimes.ts). */
  private readonly times: ItemTimes;
  /** Extended attributes (extendedAttrs.ts). */
  private readonly xattrs: ExtendedAttrs;

  constructor(c: AttributesCore, parts: AttributesParts) {
    this.c = c;
    this.shown = new ShownStats(c);
    this.sidecars = new SidecarAttrs(c, { delivery: parts.delivery });
    this.modes = new ModesAndOwners(c, { sidecars: this.sidecars });
    this.times = new ItemTimes(c, { modes: this.modes, saves: parts.saves, sidecars: this.sidecars });
    this.xattrs = new ExtendedAttrs(c, {
      attachments: parts.attachments,
      delivery: parts.delivery,
      sidecars: this.sidecars,
    });
  }

  /** getattr of anything in the tree, synchronously (the hot path); undefined for sidecars or misses. */
  statIfKnown(path: string): Stat | undefined {
    return this.shown.statIfKnown(path);
  }

  /** statIfKnown, and whether the path is a note (a read-only open of it can go by path: readPath). */
  statAndKind(path: string): { st: Stat; note: FileNode | undefined } | undefined {
    return this.shown.statAndKind(path);
  }

  /** The kernel may hold pages of `node` (at `path`) from now on: what it shows is remembered. */
  paging(path: string, node: Node): void {
    this.shown.paging(path, node);
  }

  /** `next` took `prev`'s place with the same bytes and times: the same file to the kernel. */
  continued(prev: Node, next: Node): void {
    this.shown.continued(prev, next);
  }

  async getattr(path: string): Promise<Stat> {
    const node = this.c.tree.lookup(path);
    if (node) return this.shown.answer(path, node);
    const sidecar = this.sidecars.sidecar(path);
    if (!sidecar) throw fail("ENOENT");
    const open = this.c.openSidecars.get(sidecar.target);
    return this.sidecars.sidecarStat(
      sidecar,
      open?.content ?? (await this.sidecars.renderSidecar(sidecar.target)),
    );
  }

  statOf(node: Node): Stat {
    return statOf(this.c, node);
  }

  readdir(path: string): string[] {
    return [...this.c.findDir(path).children.keys()];
  }

  /** `df` (diskSpace.ts). */
  statfs(): ReturnType<typeof diskSpace> {
    return diskSpace(this.c);
  }

  /** A sidecar's attributes with `content` as its body. */
  sidecarStat(sidecar: SidecarNode, content: Buffer): Stat {
    return this.sidecars.sidecarStat(sidecar, content);
  }

  /** A sidecar's JSON; a note still on its way is delivered first. */
  renderSidecar(target: SidecarNode["target"]): Promise<Buffer> {
    return this.sidecars.renderSidecar(target);
  }

  /** The (unlisted) sidecar a path names, when nothing real has that name. */
  sidecar(path: string): SidecarNode | undefined {
    return this.sidecars.sidecar(path);
  }

  /** Applies a sidecar's JSON (written, or renamed onto it); a refusal is logged and kept for status. */
  applySidecar(sidecar: SidecarNode, text: string): Promise<void> {
    return this.sidecars.applySidecar(sidecar, text);
  }

  /** A sidecar edit refused (at a write or when applied): logged and kept for `txtfs status`. */
  sidecarRefused(sidecar: SidecarNode, err: unknown): void {
    this.sidecars.sidecarRefused(sidecar, err);
  }

  /** Sets the times a program asked for (undefined: UTIME_OMIT, that one stays). */
  utimens(path: string, atime: number | undefined, mtime: number | undefined): Promise<void> {
    return this.times.utimens(path, atime, mtime);
  }

  /** The note shows the service's version where it showed our save (that save became a conflict copy). */
  showRemoteVersion(node: FileNode): void {
    this.times.showRemoteVersion(node);
  }

  /** Keeps a delivered note's times for the next mount. */
  rememberTimes(node: FileNode): void {
    this.times.rememberTimes(node);
  }

  chmod(path: string, mode: number): Promise<void> {
    return this.modes.chmod(path, mode);
  }

  chown(path: string, uid: number, gid: number): Promise<void> {
    return this.modes.chown(path, uid, gid);
  }

  /** What was just made with `mode` (create, mkdir: the kernel applied the umask) by `owner`. */
  madeWith(path: string, mode: number, owner?: Owner): void {
    this.modes.madeWith(path, mode, owner);
  }

  /** A rename over a note: the note shows the mode and owner of what replaced it. */
  attrsFrom(src: Node, target: FileNode): void {
    this.modes.attrsFrom(src, target);
  }

  /** `owner` (who made it, or chown) on `node`, kept only where it is not the mount's. */
  ownedBy(node: Node, owner: Owner | undefined): void {
    this.modes.ownedBy(node, owner);
  }

  /** What this device keeps of a folder. */
  keepFolderAttrs(dir: DirNode): void {
    this.modes.keepFolderAttrs(dir);
  }

  /** At start: what this device kept of the listed notes and folders. */
  restoreKept(): void {
    this.modes.restoreKept();
  }

  getxattr(path: string, name: string): Promise<Buffer | null> {
    return this.xattrs.getxattr(path, name);
  }

  listxattr(path: string): string[] {
    return this.xattrs.listxattr(path);
  }

  setxattr(path: string, name: string, value: Buffer): Promise<void> {
    return this.xattrs.setxattr(path, name, value);
  }
}

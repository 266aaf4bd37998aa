import { statfs } from "node:fs/promises";
import { BoundedMap } from "../boundedMap.ts";
import type { VfsCore } from "../core.ts";
import type { Delivery } from "../delivery/deliver.ts";
import { fail, toVfsError } from "../errors.ts";
import { S_IFDIR, S_IFLNK, S_IFREG } from "../fileModes.ts";
import { type Owner, specialType } from "../local/specialFiles.ts";
import { folderKey, type KeptAttrs, noteKey } from "../meta/deviceAttrs.ts";
import { AVAILABILITIES, type Availability, itemsBelow } from "../meta/pins.ts";
import { type SidecarNode, sidecarAt } from "../meta/sidecars.ts";
import { readXattr, writeXattr, xattrNames } from "../meta/xattrs.ts";
import { parentAndName } from "../names.ts";
import type { Saves } from "../open/saves.ts";
import type { Stat } from "../stat.ts";
import type { DirNode, FileNode, Node } from "../tree.ts";
import { STATE_XATTR } from "./xattrs.ts";

/** The permission bits shown when none were set here. */
const NOTE_MODE = 0o644;
const FOLDER_MODE = 0o755;
/** A reader's items and a read-only mount's: no write bits, whatever was set. */
const NO_WRITE = ~0o222;

/** The parts attributes call: waiting saves settle before metadata is read or set. */
export interface AttributesParts {
  delivery: Pick<Delivery, "onItsWay" | "settle">;
  saves: Pick<Saves, "needsUpload" | "upload">;
}

/** What attributes use of the mount's shared state. */
export type AttributesCore = Pick<
  VfsCore,
  | "access"
  | "attrsChanged"
  | "journal"
  | "checkWritable"
  | "client"
  | "deviceAttrs"
  | "find"
  | "findDir"
  | "notes"
  | "openSidecars"
  | "opts"
  | "pins"
  | "reports"
  | "localNodes"
  | "sidecars"
  | "times"
  | "tree"
>;

export class Attributes {
  private readonly delivery: AttributesParts["delivery"];
  private readonly saves: AttributesParts["saves"];
  readonly c: AttributesCore;

  constructor(c: AttributesCore, parts: AttributesParts) {
    this.c = c;
    this.delivery = parts.delivery;
    this.saves = parts.saves;
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

  private answer(path: string, node: Node): Stat {
    let st = this.statOf(node);
    if (node.kind === "dir") return st;
    const before = this.shownAt.get(path);
    if (!before && !this.paged.has(node)) return st; // no pages anywhere to be stale
    if (before && before.node !== node && before.mtimeMs === st.mtime.getTime() && before.size === st.size) {
      if (node.kind === "file") this.c.notes.of(node).shownApart(st.mtime.getTime() + 1);
      else node.mtimeMs = st.mtime.getTime() + 1;
      st = this.statOf(node);
    }
    this.shownAt.set(path, { node, mtimeMs: st.mtime.getTime(), size: st.size });
    return st;
  }

  async getattr(path: string): Promise<Stat> {
    const node = this.c.tree.lookup(path);
    if (node) return this.answer(path, node);
    const sidecar = this.sidecar(path);
    if (!sidecar) throw fail("ENOENT");
    const open = this.c.openSidecars.get(sidecar.target);
    return this.sidecarStat(sidecar, open?.content ?? (await this.renderSidecar(sidecar.target)));
  }

  /** A sidecar's attributes with `content` as its body (what it renders, or what an open of it holds). */
  sidecarStat(sidecar: SidecarNode, content: Buffer): Stat {
    const size = content.length;
    const base = this.statOf(sidecar.target);
    const ro =
      this.c.access.readOnly || (sidecar.target.kind !== "local" && sidecar.target.meta?.role === "reader");
    // Sidecars are rendered on demand and may differ from what was last written to them (a refused
    // edit): a fresh mtime makes every open drop cached pages (auto_cache), so reads see the truth.
    const mtime = new Date();
    return {
      ...base,
      mtime,
      ctime: mtime,
      mode: S_IFREG | (ro ? 0o444 : 0o644),
      size,
      nlink: 1,
      blocks: Math.ceil(size / 512),
    };
  }

  /** A sidecar's JSON; a note still on its way is delivered first (its id, times and etag are the service's). */
  async renderSidecar(target: SidecarNode["target"]): Promise<Buffer> {
    await this.delivery.settle(target);
    if (target.kind === "file" && !target.id) throw fail("ENOENT", "the note is not saved yet");
    return this.c.sidecars.render(target);
  }

  /** The (unlisted) sidecar a path names, when nothing real has that name. */
  sidecar(path: string): SidecarNode | undefined {
    const { parent, name } = parentAndName(path);
    const dir = this.c.tree.lookup(parent);
    return dir?.kind === "dir" ? sidecarAt(dir, name) : undefined;
  }

  statOf(node: Node): Stat {
    const { uid, gid } = this.c.opts;
    const ro = this.c.access.readOnly;
    let mode: number;
    let size: number;
    let mtimeMs: number;
    let ctimeMs: number;
    let atimeMs: number | undefined;
    if (node.kind === "dir") {
      const reader = node.meta?.role === "reader";
      const bits = node.mode ?? FOLDER_MODE;
      mode = S_IFDIR | (ro || reader ? bits & NO_WRITE : bits);
      size = 4096;
      // The mount's root has no record of its own: its times are the account's newest change.
      const own = node === this.c.tree.root ? this.c.tree.newestChangeMs : 0;
      mtimeMs = node.localMtimeMs ?? (node.meta ? Date.parse(node.meta.updatedAt) : own);
      // A change made elsewhere moves the root on past a time kept here (a local change inside it).
      if (node === this.c.tree.root) mtimeMs = Math.max(mtimeMs, own);
      ctimeMs = node.localCtimeMs ?? (node.meta ? Date.parse(node.meta.createdAt) : own);
      atimeMs = node.localAtimeMs;
    } else if (node.kind === "local" && specialType(node) !== undefined) {
      // A link's own permissions are never checked (Linux): always 0777, as on a disk.
      mode = node.link !== undefined ? S_IFLNK | 0o777 : specialType(node)! | node.mode;
      size = node.size;
      mtimeMs = node.mtimeMs;
      ctimeMs = node.ctimeMs ?? node.mtimeMs;
      atimeMs = node.atimeMs;
    } else if (node.kind === "local") {
      mode = S_IFREG | (ro ? node.mode & 0o555 : node.mode);
      size = node.size;
      mtimeMs = node.mtimeMs;
      ctimeMs = node.ctimeMs ?? node.mtimeMs;
      atimeMs = node.atimeMs;
    } else {
      const reader = node.meta?.role === "reader";
      const bits = node.mode ?? NOTE_MODE;
      mode = S_IFREG | (ro || reader ? bits & NO_WRITE : bits);
      size = node.note?.dirtySize ?? node.meta?.size ?? 0;
      const times = this.c.notes.timesOf(node);
      // The time shown is this mount's (see Note.mtimeShown); a remote edit shows the service's
      // updatedAt, so the kernel's auto_cache drops stale pages exactly then.
      const updated = node.meta ? Date.parse(node.meta.updatedAt) : 0;
      mtimeMs = times?.mtimeMs ?? updated;
      ctimeMs = times?.ctimeMs ?? updated;
      atimeMs = times?.atimeMs;
    }
    return {
      mode,
      size,
      mtime: new Date(mtimeMs),
      atime: new Date(atimeMs ?? mtimeMs),
      ctime: new Date(ctimeMs),
      nlink: node.kind === "dir" ? 2 : 1,
      uid: node.uid ?? uid,
      gid: node.gid ?? gid,
      rdev: node.kind === "local" ? node.rdev?.dev : undefined,
      blocks: Math.ceil(size / 512),
    };
  }

  readdir(path: string): string[] {
    return [...this.c.findDir(path).children.keys()];
  }

  /**
   * `df`: the free space of the disk holding the cache dir, which is what a write can fill here —
   * every save is journalled there before it is delivered, local-only files live there, and the
   * service has no storage quota to report. Files: the notes and folders, plus the disk's free inodes.
   */
  async statfs() {
    const disk = await statfs(this.c.opts.cacheDir);
    const MAX = 0xffff_ffff; // counts kept within 32 bits (older tools print them so): bigger disks count bigger blocks
    let frsize = disk.bsize;
    while (disk.blocks * (disk.bsize / frsize) > MAX) frsize *= 2;
    const scale = (n: number) => Math.min(MAX, Math.floor((n * disk.bsize) / frsize));
    const items = this.c.tree.files.size + this.c.tree.dirs.size + this.c.tree.locals.size;
    return {
      bsize: disk.bsize,
      frsize,
      blocks: scale(disk.blocks),
      bfree: scale(disk.bfree),
      bavail: scale(disk.bavail),
      files: Math.min(MAX, items + disk.ffree),
      ffree: Math.min(MAX, disk.ffree),
      favail: Math.min(MAX, disk.ffree),
      fsid: 0x7874,
      flag: 0,
      namemax: 255,
    };
  }

  /** Attribute calls on a sidecar path: it has no attributes of its own (null = not a sidecar). */
  sidecarOnly(path: string): SidecarNode | null {
    return this.c.tree.lookup(path) ? null : (this.sidecar(path) ?? null);
  }

  /** Sets the times a program asked for (undefined: UTIME_OMIT, that one stays). */
  async utimens(path: string, atime: number | undefined, mtime: number | undefined): Promise<void> {
    if (this.sidecarOnly(path)) return;
    const node = this.c.find(path);
    // `touch new.md` (create, utimens, close): send the empty note now, so it exists remotely
    // when touch returns (the kernel does not wait for release).
    const open = node.kind === "file" ? node.note?.open : undefined;
    if (open && this.saves.needsUpload(open)) await this.saves.upload(open);
    const now = Date.now();
    if (node.kind === "local") {
      node.mtimeMs = mtime ?? node.mtimeMs;
      node.atimeMs = atime ?? node.atimeMs;
      node.ctimeMs = now;
      this.c.localNodes.save();
    } else if (node.kind === "file") {
      // Kept here (the service keeps its own updatedAt), and across restarts while the content is
      // the same (noteTimes): `rsync -a` and `make` see the times they set.
      const shown = this.statOf(node);
      this.c.notes.of(node).timesSet(mtime ?? shown.mtime.getTime(), atime ?? shown.atime.getTime(), now);
      this.rememberTimes(node);
    } else {
      // The service keeps no time of its own a program could set: this device keeps it (rsync -a
      // sets every folder's time after filling it; not kept, every later run sent them again).
      const shown = this.statOf(node);
      node.localMtimeMs = mtime ?? shown.mtime.getTime();
      node.localAtimeMs = atime ?? shown.atime.getTime();
      node.localCtimeMs = now;
      node.timesKept = true;
      this.keepFolderAttrs(node);
    }
    this.c.attrsChanged(node);
  }

  /**
   * The note shows the service's version where it showed our save (that save became a conflict
   * copy): its times are the service's, and its mtime always moves, so the kernel's auto_cache
   * drops the pages of our version at the next open (same size and mtime would keep them).
   */
  showRemoteVersion(node: FileNode): void {
    const before = this.statOf(node).mtime.getTime();
    const note = this.c.notes.of(node);
    note.timesFromService();
    if (this.statOf(node).mtime.getTime() === before) note.shownApart(before + 1);
    this.c.attrsChanged(node);
    this.c.tree.onRemoteChange(node);
  }

  /** Keeps a delivered note's times for the next mount (a pending one's are kept once it is delivered). */
  rememberTimes(node: FileNode): void {
    // A note made here has an id now: what this device keeps of it is kept by it.
    if (node.mode !== undefined || node.uid !== undefined || node.gid !== undefined) this.keepNoteAttrs(node);
    const times = this.c.notes.timesOf(node);
    const mtimeMs = times?.mtimeMs;
    if (!node.meta || mtimeMs === undefined || this.c.notes.stateOf(node) !== "clean") return;
    this.c.times.set(node.meta.id, { hash: node.meta.contentHash, mtimeMs, atimeMs: times?.atimeMs });
  }

  /**
   * Mode bits are this device's (the service has none): kept for notes and folders by id
   * (deviceAttrs.ts), for local files and folders in their manifest. What a reader's role or a
   * read-only mount allows is applied on top when shown (no write bits), never stored.
   */
  async chmod(path: string, mode: number): Promise<void> {
    if (this.sidecarOnly(path)) return;
    const node = this.c.find(path);
    this.setMode(node, mode & 0o7777);
    if (node.kind === "local") node.ctimeMs = Date.now();
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
      node.localCtimeMs = Date.now();
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
    if (this.sidecarOnly(path)) return;
    const node = this.c.find(path);
    const shown = this.statOf(node);
    this.ownedBy(node, { uid: uid === -1 ? shown.uid : uid, gid: gid === -1 ? shown.gid : gid });
    this.keep(node);
    this.c.attrsChanged(node);
  }

  /** `owner` (who made it, or chown) on `node`, kept only where it is not the mount's. */
  ownedBy(node: Node, owner: Owner | undefined): void {
    if (!owner) return;
    node.uid = owner.uid === this.c.opts.uid ? undefined : owner.uid;
    node.gid = owner.gid === this.c.opts.gid ? undefined : owner.gid;
    const now = Date.now();
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

  async getxattr(path: string, name: string): Promise<Buffer | null> {
    if (this.sidecarOnly(path)) return null;
    const node = this.c.find(path);
    if (name === STATE_XATTR) return this.readState(node);
    await this.delivery.settle(node);
    return readXattr(this.c.client, node, name);
  }

  listxattr(path: string): string[] {
    if (this.sidecarOnly(path)) return [];
    return xattrNames(this.c.find(path));
  }

  async setxattr(path: string, name: string, value: Buffer): Promise<void> {
    if (this.sidecarOnly(path)) throw fail("ENOTSUP");
    const node = this.c.find(path);
    if (name === STATE_XATTR) return this.writeState(node, value);
    if (name.startsWith("user.txtfs.")) this.c.checkWritable(node);
    await this.delivery.settle(node);
    try {
      await writeXattr(this.c.client, this.c.tree, this.c.notes, node, name, value);
    } catch (err) {
      this.c.reports.metadataRefused(`${path} (${name})`, err);
      throw err;
    }
    if (node.kind === "local") this.c.localNodes.save();
  }

  /** Applies a sidecar's JSON (written, or renamed onto it); a refusal is logged and kept for status. */
  async applySidecar(sidecar: SidecarNode, text: string): Promise<void> {
    await this.delivery.settle(sidecar.target);
    try {
      await this.c.sidecars.apply(sidecar.target, text);
      if (sidecar.target.kind === "local") this.c.localNodes.save();
    } catch (err) {
      this.sidecarRefused(sidecar, err);
      throw err;
    }
  }

  /** A sidecar edit refused (at a write or when applied): logged and kept for `txtfs status`. */
  sidecarRefused(sidecar: SidecarNode, err: unknown): void {
    const dir = this.c.tree.pathOf(sidecar.parent);
    this.c.reports.metadataRefused(`${dir === "/" ? "" : dir}/${sidecar.name}`, err);
  }

  readState(node: Node): Buffer | null {
    if (node.kind === "local" || !node.id) return null;
    return Buffer.from(this.c.pins.stateOf(node));
  }

  /** `txtfs pin/unpin` set this attribute: online-only, available or pinned (folders: recursive). */
  async writeState(node: Node, value: Buffer): Promise<void> {
    const state = value.toString("utf8").trim() as Availability;
    if (!AVAILABILITIES.includes(state)) throw fail("EINVAL");
    if (node.kind === "local" || !node.id) throw fail("EPERM");
    try {
      await this.c.pins.set(node, state, itemsBelow(node));
    } catch (err) {
      throw toVfsError(err);
    }
  }
}

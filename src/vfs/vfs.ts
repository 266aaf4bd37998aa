// The filesystem semantics of the mount, with no FUSE in sight: paths in, bytes and errno names out.
// Metadata comes from the in-memory tree (never the network); bodies from the content cache, a
// conditional GET, or one folder fetch; writes are buffered per open file and uploaded on flush.
import { isUtf8 } from "node:buffer";
import { randomUUID } from "node:crypto";
import { constants as fsc } from "node:fs";
import { stat } from "node:fs/promises";
import { hostname } from "node:os";
import { ApiError, type FolderRef, NetworkError, type TxtfsClient, withoutContent } from "../client/api.ts";
import type { TxtFile, TxtFolder } from "../lib/apiTypes.ts";
import { NOTE_CONTENT_BYTES } from "../lib/limits.ts";
import type { Logger } from "../lib/logger.ts";
import { ContentCache } from "./contentCache.ts";
import { fail, toVfsError, VfsError } from "./errors.ts";
import { ChangeFollower } from "./follower.ts";
import { Journal, type JournalEntry } from "./journal.ts";
import { type Bulk, type BulkItem, type BulkResult, bulksOf, pushBulk } from "./journalSync.ts";
import { ALWAYS_LOCAL_DIRS, localDirKind } from "./localDirs.ts";
import { LocalFiles, LocalHandle, type ManifestEntry } from "./localFiles.ts";
import { isNoteName, parentAndName } from "./names.ts";
import { NoteTimes } from "./noteTimes.ts";
import { AVAILABILITIES, type Availability, itemsBelow, Pins } from "./pins.ts";
import { type SidecarNode, Sidecars, sidecarAt } from "./sidecars.ts";
import { type Claim, type DirNode, type FileNode, type LocalNode, type Node, Tree } from "./tree.ts";
import { readXattr, writeXattr, xattrNames } from "./xattrs.ts";

export interface VfsOptions {
  client: TxtfsClient;
  cacheDir: string;
  cacheSize: number;
  readOnly?: boolean;
  uid: number;
  gid: number;
  logger: Logger;
  /** Long-poll wait of the change follower, seconds. */
  pollWait?: number;
  /**
   * Write-behind (the default): a save returns once it is in the on-disk journal, which delivers
   * saves to the service in order in the background; fsync waits for delivery. Off, every save
   * waits for the service (the journal then only holds saves made while it is unreachable).
   */
  writeBehind?: boolean;
  /** This mount's registered device (its availability states are recorded there). */
  deviceId?: string;
  /** More folder names whose content stays local (see localDirs.ts). */
  localDirs?: string[];
}

export interface Stat {
  mode: number;
  size: number;
  mtime: Date;
  atime: Date;
  ctime: Date;
  nlink: number;
  uid: number;
  gid: number;
  blocks: number;
}

/** What is open of a note: shared by every handle on it, so writes through two fds agree. */
interface OpenNote {
  node: FileNode;
  refs: number;
  /** The body being edited; null until something needs it. */
  content: Buffer | null;
  /** ETag the edit is based on: the upload sends it as If-Match. */
  /** The version the edit is based on: If-Match on upload, and how to tell a real conflict. */
  base: Base;
  dirty: boolean;
  /** Made by create(): uploaded at release even if nothing was written (touch). */
  created: boolean;
  /** Spare capacity behind `content`, so a file written 4 KiB at a time is not copied each time. */
  backing?: Buffer;
}

/** An open sidecar: edits are applied when it is flushed. */
interface OpenSidecar {
  sidecar: SidecarNode;
  refs: number;
  content: Buffer;
  dirty: boolean;
}

type Handle =
  | {
      kind: "note";
      open: OpenNote;
      append: boolean;
      writable: boolean;
      /** What a reader reads while nothing is written through the note, and what it is a copy of. */
      snapshot?: Buffer;
      snapshotOf?: unknown;
    }
  | { kind: "sidecar"; open: OpenSidecar }
  | { kind: "local"; node: LocalNode; fh: LocalHandle; append: boolean; written?: boolean }
  | { kind: "dir" };

/** A note's place in the journal: its id, or its create key while it has none. */
const journalKey = (node: FileNode) => Journal.keyOf({ fileId: node.id, createKey: node.createKey });
/** The journal key of a folder made here (its create). */
const dirKey = (dir: DirNode) => Journal.keyOf({ fileId: null, createKey: dir.createKey! });

/** What a folder made here shows until the service has it. */
function provisionalFolder(name: string, parent: DirNode): TxtFolder {
  const now = new Date().toISOString();
  return {
    id: "",
    name,
    context: "",
    tags: [],
    parentFolderId: parent.id,
    fileCount: 0,
    createdAt: now,
    updatedAt: now,
    endpoint: "",
    access: "owner",
    role: "owner",
  };
}

const S_IFREG = 0o100000;
/** The device's availability of a note or folder (read-write); see pins.ts. */
const STATE_XATTR = "user.txtfs.state";
const S_IFDIR = 0o040000;
/** See deliverSoon. */
const DELIVERY_QUIET_MS = 20;
const DELIVERY_MAX_WAIT_MS = 1000;
/** Above this, a folder's bodies are fetched one by one instead of in one request. */
const FOLDER_PREFETCH_MAX_BYTES = 8 * 1024 * 1024;

export class Vfs {
  readonly tree = new Tree();
  readonly cache: ContentCache;
  private readonly client: TxtfsClient;
  private readonly log: Logger;
  private readonly opts: VfsOptions;
  private readonly local: LocalFiles;
  private readonly follower: ChangeFollower;
  private readonly handles = new Map<number, Handle>();
  private readonly openNotes = new Map<FileNode, OpenNote>();
  private readonly openSidecars = new Map<FileNode | DirNode, OpenSidecar>();
  private readonly sidecars: Sidecars;
  private readonly prefetches = new Map<string, Promise<void>>();
  private readonly journal: Journal;
  /** Bodies of notes with a journalled (not yet delivered) write: what reads must see. */
  private readonly overlay = new Map<FileNode, Buffer>();
  /** The journal's next delivery: saves gathering (deliverSoon), or a retry while unreachable. */
  private replayTimer: NodeJS.Timeout | undefined;
  /** When the first save still gathering for the next delivery was made. */
  private gatheringSince: number | undefined;
  /** Folders made here and not created on the service yet, by their journal key. */
  private readonly pendingDirs = new Map<string, DirNode>();
  /** The running delivery of the journal (one at a time), and whether saves arrived meanwhile. */
  private replaying: Promise<void> | undefined;
  private replayAgain = false;
  private unreachable = false;
  /** "id etag" -> the version our own save made of it (see ownSuccessor); bounded, oldest dropped. */
  private readonly superseded = new BoundedMap<string, NonNullable<Base>>(10_000);
  private stopped = false;
  private nextFd = 1;
  readonly conflicts: string[] = [];
  readonly pins: Pins;
  /** Saves the service refused for good (newest last, bounded), and those `txtfs sync` has not reported yet. */
  readonly refused: RefusedSave[] = [];
  private unreported: RefusedSave[] = [];
  /** Notes deleted here whose delete is still in the journal, by folder and name (see Claim). */
  private readonly tombstones = new Map<DirNode, Map<string, Claim>>();
  private readonly alwaysLocal: ReadonlySet<string>;
  private readonly times: NoteTimes;

  constructor(opts: VfsOptions) {
    this.opts = opts;
    this.client = opts.client;
    this.log = opts.logger;
    this.cache = new ContentCache(opts.cacheSize);
    this.local = new LocalFiles(opts.cacheDir, (err) =>
      this.log.error({ err }, "could not save the local-files manifest"),
    );
    this.journal = new Journal(opts.cacheDir);
    this.alwaysLocal = new Set([...ALWAYS_LOCAL_DIRS, ...(opts.localDirs ?? [])]);
    this.times = new NoteTimes(opts.cacheDir, (err) => this.log.error({ err }, "could not save note times"));
    this.sidecars = new Sidecars(this.client, this.tree);
    this.tree.heldLocally = (node) =>
      this.journal.get(journalKey(node)) !== undefined || this.openNotes.get(node)?.dirty === true;
    this.tree.placement = (meta, node) => {
      // By id, or, for a note whose create is just being delivered, by its create key.
      const pending =
        this.journal.get(meta.id) ??
        (node && this.journal.get(Journal.keyOf({ fileId: null, createKey: node.createKey })));
      return pending?.move ? { ...meta, name: pending.name, folderId: pending.folderId } : meta;
    };
    this.follower = new ChangeFollower(this.client, this.tree, this.cache, this.log, opts.pollWait ?? 25);
    this.pins = new Pins({
      client: this.client,
      cacheDir: opts.cacheDir,
      deviceId: opts.deviceId,
      logger: this.log,
    });
  }

  /** Loads the whole listing and the local files, then follows the change feed. */
  async start(onProgress?: (message: string) => void): Promise<void> {
    onProgress?.("listing the account...");
    const index = await this.client.flatIndex();
    for (const o of index.owners ?? []) this.tree.setOwner(o.id, o.email);
    this.tree.load(index.folders, index.files);
    this.times.load();
    for (const node of this.tree.files.values()) {
      const kept = node.meta && this.times.get(node.meta.id, node.meta.contentHash);
      if (!kept) continue;
      node.localMtimeMs = kept.mtimeMs;
      node.localAtimeMs = kept.atimeMs;
    }
    onProgress?.(`${index.files.length} notes in ${index.folders.length} folders`);
    // Folders made here first (journal), then what is kept locally inside them.
    this.restoreJournal(await this.journal.load());
    const kept = await this.local.init();
    // Local folders before what is in them.
    kept.sort((a, b) => Number(!a.dir) - Number(!b.dir) || a.path.length - b.path.length);
    for (const entry of kept) this.restoreLocal(entry);
    await this.pins.init();
    // The service's record of this device's states wins (fetched after the mount is up: no delay).
    void this.pins.loadRemote().finally(() => this.pins.startRefreshing(() => this.tree.files.values()));
    this.follower.start(index.cursor);
  }

  /** Flushes every pending write (to the service, or to the journal when it is unreachable). */
  async stop(): Promise<void> {
    await this.follower.stop();
    await this.pins.stop();
    for (const open of [...this.openNotes.values()]) {
      if (open.dirty) await this.upload(open).catch((err) => this.log.error({ err }, "final upload failed"));
    }
    await this.drain();
    this.stopped = true;
    try {
      this.local.flush();
    } catch (err) {
      this.log.error({ err }, "could not save the local-files manifest");
    }
    clearTimeout(this.replayTimer);
    this.times.flush();
    this.journal.close();
    if (this.journal.size)
      this.log.warn(
        { pending: this.journal.size },
        "writes still journalled; they are sent at the next mount",
      );
  }

  /** Counters for `txtfs status` and benchmarks. */
  stats() {
    return {
      notes: this.tree.files.size,
      folders: this.tree.dirs.size,
      cacheBytes: this.cache.bytes,
      cacheEntries: this.cache.entries,
      requests: this.client.requests,
      cursor: this.follower.cursor,
      dirty: [...this.openNotes.values()].filter((o) => o.dirty).length + this.journal.size,
      conflicts: this.conflicts.length,
      localFiles: this.localEntries().length,
      keptOffline: this.pins.keptBodies,
    };
  }

  private noteRefused(save: RefusedSave): void {
    for (const list of [this.refused, this.unreported]) {
      list.push(save);
      if (list.length > 100) list.shift();
    }
  }

  /** What the service refused since the last call (`txtfs sync` reports each once, and fails). */
  takeRefused(): RefusedSave[] {
    return this.unreported.splice(0);
  }

  /** Every local-only file and why it is not a note on the service (`txtfs status`). */
  localOnly(): { path: string; why: string }[] {
    return [...this.tree.locals].map((node) => ({
      path: this.tree.pathOf(node),
      why:
        node.parent.localOnly === "always"
          ? "inside a folder whose content stays local"
          : isNoteName(node.name)
            ? "not valid UTF-8 (a note is text)"
            : "not a .md or .txt name",
    }));
  }

  /** `name`, or `name.1`, `name.2`... whichever is free in `dir`. */
  private freeName(dir: DirNode, name: string): string {
    let candidate = name;
    for (let n = 1; dir.children.has(candidate); n++) candidate = `${name}.${n}`;
    return candidate;
  }

  // ---------------------------------------------------------------- metadata (memory only)

  private find(path: string): Node {
    const node = this.tree.lookup(path);
    if (!node) throw fail("ENOENT");
    return node;
  }

  private findDir(path: string): DirNode {
    const node = this.find(path);
    if (node.kind !== "dir") throw fail("ENOTDIR");
    return node;
  }

  /**
   * Registers who must hear of every change to what `statIfKnown` answers (the FUSE adapter's
   * attribute cache). Changes made inside a filesystem operation are covered by the adapter itself;
   * this reports the rest: the change feed, uploads and journal deliveries finishing, restores.
   */
  /** `listener(path)`: what that path and its folder answer changed; no path: anything may have. */
  onAttrsChanged(listener: (path?: string) => void): void {
    this.tree.onChange = (changed) => listener(changed?.parent ? this.tree.pathOf(changed) : undefined);
  }

  /** Attributes changed outside the tree's own changes (sizes of saves on their way): of `node`, or of anything. */
  private attrsChanged(node?: Node): void {
    this.tree.onChange(node);
  }

  /** getattr of anything in the tree, synchronously (the hot path); undefined for sidecars or misses. */
  statIfKnown(path: string): Stat | undefined {
    const node = this.tree.lookup(path);
    return node ? this.statOf(node) : undefined;
  }

  async getattr(path: string): Promise<Stat> {
    const node = this.tree.lookup(path);
    if (node) return this.statOf(node);
    const sidecar = this.sidecar(path);
    if (!sidecar) throw fail("ENOENT");
    const open = this.openSidecars.get(sidecar.target);
    const size = (open?.content ?? (await this.sidecars.render(sidecar.target))).length;
    const base = this.statOf(sidecar.target);
    const ro = this.opts.readOnly || sidecar.target.meta?.role === "reader";
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

  /** The (unlisted) sidecar a path names, when nothing real has that name. */
  private sidecar(path: string): SidecarNode | undefined {
    const { parent, name } = parentAndName(path);
    const dir = this.tree.lookup(parent);
    return dir?.kind === "dir" ? sidecarAt(dir, name) : undefined;
  }

  private async openSidecar(sidecar: SidecarNode): Promise<number> {
    let open = this.openSidecars.get(sidecar.target);
    if (!open) {
      open = { sidecar, refs: 0, content: await this.sidecars.render(sidecar.target), dirty: false };
      this.openSidecars.set(sidecar.target, open);
    }
    open.refs++;
    return this.addHandle({ kind: "sidecar", open });
  }

  /**
   * Writes an edited sidecar back; EINVAL (and no change at all) when it is not acceptable. A
   * refused edit stays in the buffer (shells flush before they write), so a later flush retries.
   */
  private async applySidecar(open: OpenSidecar): Promise<void> {
    await this.settle(open.sidecar.target);
    await this.sidecars.apply(open.sidecar.target, open.content.toString("utf8"));
    open.dirty = false;
  }

  private statOf(node: Node): Stat {
    const { uid, gid } = this.opts;
    const ro = this.opts.readOnly;
    let mode: number;
    let size: number;
    let mtimeMs: number;
    let ctimeMs: number;
    let atimeMs: number | undefined;
    if (node.kind === "dir") {
      const reader = node.meta?.role === "reader";
      mode = S_IFDIR | (ro || reader ? 0o555 : 0o755);
      size = 4096;
      mtimeMs = node.meta ? Date.parse(node.meta.updatedAt) : 0;
      ctimeMs = node.meta ? Date.parse(node.meta.createdAt) : 0;
    } else if (node.kind === "local") {
      mode = S_IFREG | (ro ? node.mode & 0o555 : node.mode);
      size = node.size;
      mtimeMs = node.mtimeMs;
      ctimeMs = node.ctimeMs ?? node.mtimeMs;
      atimeMs = node.atimeMs;
    } else {
      const reader = node.meta?.role === "reader";
      mode = S_IFREG | (ro || reader ? 0o444 : 0o644);
      size = node.dirtySize ?? node.meta?.size ?? 0;
      // The time shown is this mount's (see FileNode.localMtimeMs); a remote edit shows the
      // service's updatedAt, so the kernel's auto_cache drops stale pages exactly then.
      const updated = node.meta ? Date.parse(node.meta.updatedAt) : 0;
      mtimeMs = node.localMtimeMs ?? updated;
      ctimeMs = node.localCtimeMs ?? updated;
      atimeMs = node.localAtimeMs;
    }
    return {
      mode,
      size,
      mtime: new Date(mtimeMs),
      atime: new Date(atimeMs ?? mtimeMs),
      ctime: new Date(ctimeMs),
      nlink: node.kind === "dir" ? 2 : 1,
      uid,
      gid,
      blocks: Math.ceil(size / 512),
    };
  }

  readdir(path: string): string[] {
    return [...this.findDir(path).children.keys()];
  }

  /**
   * A cold `grep -r` or `cat *` opens every file of a folder in turn: the first body missing in a
   * folder fetches all of the folder's bodies in one request, and the next opens find them cached.
   * (Only on open: `ls -lR` and `find` never fetch bodies.)
   */
  private prefetchFolder(dir: DirNode): Promise<void> | undefined {
    if (!dir.id && dir !== this.tree.root) return undefined; // `Shared with me/` folders: nothing to fetch
    const id = dir.id ?? "root";
    const running = this.prefetches.get(id);
    if (running) return running;
    let missing = 0;
    let bytes = 0;
    for (const child of dir.children.values()) {
      if (child.kind === "file" && child.id && child.meta && !this.cache.fresh(child.id, child.meta.etag)) {
        missing++;
        bytes += child.meta.size;
      }
    }
    if (missing < 2 || bytes > Math.min(FOLDER_PREFETCH_MAX_BYTES, this.opts.cacheSize / 2)) return undefined;
    const job = this.client
      .readFolderWithBodies(id)
      .then((folder) => {
        for (const f of folder.files) {
          const body = Buffer.from(f.content, "utf8");
          this.cache.set(f.id, f.etag, body);
          const node = this.tree.files.get(f.id);
          if (node) void this.pins.remember(node, f.etag, body); // kept on disk when available/pinned
        }
      })
      .catch((err) => this.log.debug({ err, folder: id }, "folder prefetch failed"))
      .finally(() => this.prefetches.delete(id));
    this.prefetches.set(id, job);
    return job;
  }

  statfs() {
    const files = this.tree.files.size + this.tree.dirs.size;
    return {
      bsize: 4096,
      frsize: 4096,
      blocks: 1 << 24,
      bfree: 1 << 23,
      bavail: 1 << 23,
      files: files + 1_000_000,
      ffree: 1_000_000,
      favail: 1_000_000,
      fsid: 0x7874,
      flag: 0,
      namemax: 255,
    };
  }

  // ---------------------------------------------------------------- bodies

  /** The current body of a note: cache, or a conditional GET (304 moves no body). */
  private async body(node: FileNode): Promise<Buffer> {
    const journalled = this.overlay.get(node);
    if (journalled) return journalled;
    if (!node.id) return this.openNotes.get(node)?.content ?? Buffer.alloc(0);
    const etag = node.meta?.etag;
    const cached = this.cache.fresh(node.id, etag);
    if (cached) return cached;
    const kept = await this.pins.read(node.id, etag);
    if (kept && etag) {
      this.cache.set(node.id, etag, kept);
      return kept;
    }
    const pending = this.prefetchFolder(node.parent);
    if (pending) {
      await pending;
      const now = this.cache.fresh(node.id, node.meta?.etag);
      if (now) return now;
    }
    const old = this.cache.get(node.id);
    try {
      const detail = await this.client.readFile(node.id, old?.etag);
      if (!detail) return old!.body; // 304: our copy is current
      const body = Buffer.from(detail.content, "utf8");
      this.cache.set(node.id, detail.etag, body);
      this.tree.upsertFile(withoutContent(detail));
      await this.pins.remember(node, detail.etag, body);
      return body;
    } catch (err) {
      // Offline: an older cached copy is better than no copy; a pinned note's kept body is one.
      if (old && isTransient(err)) return old.body;
      const keptAny = isTransient(err) ? await this.pins.read(node.id, undefined, true) : undefined;
      if (keptAny) return keptAny;
      throw toVfsError(err);
    }
  }

  // ---------------------------------------------------------------- open / read / write

  private addHandle(h: Handle): number {
    const fd = this.nextFd++;
    this.handles.set(fd, h);
    return fd;
  }

  private handle(fd: number): Handle {
    const h = this.handles.get(fd);
    if (!h) throw fail("EBADF");
    return h;
  }

  private openNote(node: FileNode): OpenNote {
    let open = this.openNotes.get(node);
    if (!open) {
      open = {
        node,
        refs: 0,
        content: null,
        base: baseOf(node.meta),
        dirty: false,
        created: false,
      };
      this.openNotes.set(node, open);
    } else if (!open.dirty && open.content === null) {
      // Close-to-open: an edit is based on the version there was when its file was opened. A
      // remote change after that makes the save a conflict (both kept), never a silent overwrite.
      open.base = baseOf(node.meta);
    }
    open.refs++;
    return open;
  }

  private checkWritable(node: Node): void {
    if (this.opts.readOnly) throw fail("EROFS");
    if ((node.kind === "file" || node.kind === "dir") && node.meta?.role === "reader") throw fail("EACCES");
  }

  async open(path: string, flags: number): Promise<number> {
    const writable = (flags & 3) !== fsc.O_RDONLY;
    const node = this.tree.lookup(path);
    if (!node) {
      const sidecar = this.sidecar(path);
      if (!sidecar) throw fail("ENOENT");
      if (writable) this.checkWritable(sidecar.target);
      return this.openSidecar(sidecar);
    }
    if (node.kind === "dir") return this.addHandle({ kind: "dir" });
    if (writable) this.checkWritable(node);
    const append = (flags & fsc.O_APPEND) !== 0;
    if (node.kind === "local") {
      return this.addHandle({ kind: "local", node, fh: LocalHandle.open(node.blob, writable), append });
    }
    return this.addHandle({ kind: "note", open: this.openNote(node), append, writable });
  }

  async create(path: string, mode: number): Promise<number> {
    const { parent, name } = parentAndName(path);
    const dir = this.findDir(parent);
    this.checkWritable(dir);
    checkName(name);
    const existing = dir.children.get(name);
    if (existing) {
      if (existing.kind === "dir") throw fail("EISDIR");
      const fd = await this.open(path, fsc.O_RDWR);
      await this.truncateOpen(this.handle(fd), 0);
      return fd;
    }
    if (!isNoteName(name) || dir.localOnly === "always") {
      const node = this.newLocal(dir, name, mode & 0o7777);
      return this.addHandle({ kind: "local", node, fh: LocalHandle.open(node.blob, true), append: false });
    }
    await this.materialize(dir);
    // A note renamed away or deleted under this name a moment ago is continued, not replaced
    // (vim's backupcopy=no, git checkout, tar -x, unzip -o): its id, tags and history stay.
    const claim = await this.claimName(dir, name);
    const node = this.newNote(dir, name, claim);
    const open = this.openNote(node);
    open.content = Buffer.alloc(0);
    open.created = true;
    // A new note is uploaded by the first flush after a write, or at release if nothing was written
    // (touch): one request per new note, not an empty create followed by a PUT.
    if (claim) {
      open.dirty = true; // its content is now this (empty) body
      open.base = { etag: claim.etag, hash: claim.hash ?? "" };
    }
    return this.addHandle({ kind: "note", open, append: false, writable: true });
  }

  /** A note made here under `name` in `dir`: a new one, or the continuation of `claim`. */
  private newNote(dir: DirNode, name: string, claim: Claim | undefined, timesOf?: LocalNode): FileNode {
    const now = Date.now();
    const node: FileNode = {
      kind: "file",
      name,
      parent: dir,
      id: claim?.id ?? null,
      meta: claim?.meta ? { ...claim.meta, name, folderId: dir.id } : null,
      remoteName: claim ? claim.name : name,
      createKey: randomUUID(),
      localMtimeMs: timesOf?.mtimeMs ?? now,
      localAtimeMs: timesOf?.atimeMs,
      localCtimeMs: now,
    };
    this.tree.addChild(dir, node);
    if (claim) {
      this.tree.ghosted.delete(claim.id);
      this.tree.files.set(claim.id, node);
    }
    return node;
  }

  /**
   * Takes the identity left under `name` in `dir`, if any (see Claim): a ghost showing that name
   * (then it becomes a plain local file: vim's backup, sed's `.bak`), or a delete of a note of
   * that name still waiting in the journal (then the delete is called off).
   */
  private async claimName(dir: DirNode, name: string): Promise<Claim | undefined> {
    for (const child of dir.children.values()) {
      if (child.kind !== "local" || child.ghostOf?.shownAs !== name) continue;
      const claim = child.ghostOf;
      child.ghostOf = undefined;
      this.saveLocal();
      return claim;
    }
    const claim = this.tombstones.get(dir)?.get(name);
    if (!claim) return undefined;
    const entry = this.journal.get(claim.id);
    if (entry?.delete !== "file" || this.onItsWay(claim.id)) return undefined; // it went
    this.dropTombstone(claim.id);
    await this.journal.done(entry);
    this.tree.deleting.delete(claim.id);
    return claim;
  }

  /** Whether the journal entry `key` may be on its way to the service right now (then it is not ours to change). */
  private onItsWay(key: string): boolean {
    return (
      this.replaying !== undefined ||
      this.journal.inflightBulk<Bulk>()?.items.some((i) => i.key === key) === true
    );
  }

  private dropTombstone(id: string): void {
    for (const [dir, names] of this.tombstones) {
      for (const [name, claim] of names) if (claim.id === id) names.delete(name);
      if (names.size === 0) this.tombstones.delete(dir);
    }
  }

  async read(fd: number, length: number, position: number): Promise<Buffer> {
    const h = this.handle(fd);
    if (h.kind === "dir") throw fail("EISDIR");
    if (h.kind === "sidecar") return h.open.content.subarray(position, position + length);
    if (h.kind === "local") return h.fh.read(length, position);
    // A reader keeps the body it first read, so a large note reads consistently across calls.
    // A reader keeps the body it read, so a large note reads consistently across calls, until the
    // note changes (a remote edit, another process's save): then it reads what stat now reports
    // (`tail -f` shows remote appends).
    if (!h.open.content) {
      const version = this.versionOf(h.open.node);
      if (!h.snapshot || h.snapshotOf !== version) {
        h.snapshot = await this.body(h.open.node);
        h.snapshotOf = version;
      }
    }
    const content = h.open.content ?? h.snapshot!;
    return content.subarray(position, position + length);
  }

  async write(fd: number, data: Buffer, position: number): Promise<number> {
    const h = this.handle(fd);
    if (h.kind === "dir") throw fail("EISDIR");
    if (h.kind === "sidecar") {
      h.open.content = splice(h.open.content, data, position);
      h.open.dirty = true;
      return data.length;
    }
    if (h.kind === "local") {
      const { written, size } = h.fh.write(data, position, h.append);
      h.written = true;
      h.node.size = size;
      h.node.mtimeMs = h.node.ctimeMs = Date.now();
      return written;
    }
    if (!h.writable) throw fail("EBADF");
    const open = h.open;
    const content = await this.editable(open);
    // O_APPEND writes arrive at the kernel's idea of the size: append to the real end instead.
    const at = h.append ? content.length : position;
    // A note holds at most NOTE_CONTENT_BYTES, like a filesystem's largest file: a write is cut
    // there (the program is told how much went in) and the next one fails with EFBIG.
    if (at >= NOTE_CONTENT_BYTES) throw fail("EFBIG");
    if (at + data.length > NOTE_CONTENT_BYTES) data = data.subarray(0, NOTE_CONTENT_BYTES - at);
    writeInto(open, data, at);
    open.dirty = true;
    open.node.dirtySize = open.content!.length;
    touched(open.node);
    return data.length;
  }

  /** What identifies a note's current content: its pending local save, or the service's version. */
  private versionOf(node: FileNode): unknown {
    return this.overlay.get(node) ?? node.meta?.etag;
  }

  /** Loads the body an edit starts from (once), remembering its ETag for If-Match. */
  private async editable(open: OpenNote): Promise<Buffer> {
    if (open.content) return open.content;
    // The base stays what it was at open (close-to-open), whatever the body is by now.
    open.content = Buffer.from(await this.body(open.node));
    return open.content;
  }

  private async truncateOpen(h: Handle, size: number): Promise<void> {
    if (h.kind === "dir") throw fail("EISDIR");
    if (h.kind === "sidecar") {
      h.open.content = resize(h.open.content, size);
      h.open.dirty = true;
      return;
    }
    if (h.kind === "local") {
      h.fh.truncate(size);
      h.written = true;
      h.node.size = size;
      h.node.mtimeMs = h.node.ctimeMs = Date.now();
      return;
    }
    const open = h.open;
    if (size > NOTE_CONTENT_BYTES) throw fail("EFBIG");
    // A truncate only changes the buffer: the upload happens at flush, never an empty body by itself.
    const content = size === 0 ? Buffer.alloc(0) : await this.editable(open);
    open.content = resize(content, size);
    open.dirty = true;
    open.node.dirtySize = size;
    touched(open.node);
  }

  async ftruncate(fd: number, size: number): Promise<void> {
    await this.truncateOpen(this.handle(fd), size);
  }

  async truncate(path: string, size: number): Promise<void> {
    const sidecar = this.tree.lookup(path) ? undefined : this.sidecar(path);
    const openSidecar = sidecar && this.openSidecars.get(sidecar.target);
    if (openSidecar) return this.truncateOpen({ kind: "sidecar", open: openSidecar }, size);
    if (sidecar) throw fail("EINVAL", "open a sidecar to rewrite it");
    const node = this.find(path);
    if (node.kind === "dir") throw fail("EISDIR");
    this.checkWritable(node);
    if (node.kind === "local") {
      this.local.truncate(node.blob, size);
      node.size = size;
      node.mtimeMs = node.ctimeMs = Date.now();
      return;
    }
    const existing = this.openNotes.get(node);
    if (existing) {
      // libfuse2 sends `echo x > note` as open, truncate(path, 0), write: mark the open note.
      await this.truncateOpen({ kind: "note", open: existing, append: false, writable: true }, size);
      return;
    }
    const fd = await this.open(path, fsc.O_RDWR);
    try {
      await this.ftruncate(fd, size);
    } finally {
      await this.release(fd);
    }
  }

  async flush(fd: number): Promise<void> {
    const h = this.handle(fd);
    // Only what was written: shells flush a new file once before writing to it, and uploading the
    // empty note then would cost a second request per new note.
    // Saves are delivered a moment later (deliverSoon): `echo x > note` is open, truncate, flush,
    // write, flush, and its empty step is replaced before it is sent.
    if (h.kind === "note" && h.open.dirty) await this.upload(h.open);
    if (h.kind === "sidecar" && h.open.dirty) await this.applySidecar(h.open);
  }

  async fsync(fd: number): Promise<void> {
    const h = this.handle(fd);
    if (h.kind === "local") {
      this.local.flush(); // the file's place in the manifest too
      return h.fh.sync();
    }
    if (h.kind !== "note") return this.flush(fd);
    if (h.open.dirty) await this.upload(h.open);
    // On the service if it can be reached; otherwise durably in the journal until it can.
    await this.drain();
    const key = journalKey(h.open.node);
    if (this.journal.get(key)) await this.journal.sync(key);
  }

  async release(fd: number): Promise<void> {
    const h = this.handle(fd);
    this.handles.delete(fd);
    if (h.kind === "local") {
      h.fh.close();
      this.saveLocal();
      // A note that was kept local (not UTF-8) and is text again goes up as that note.
      const node = h.node;
      const lastHandle = ![...this.handles.values()].some((o) => o.kind === "local" && o.node === node);
      const kept = node.parent.localOnly === "always";
      if (h.written && lastHandle && !kept && isNoteName(node.name) && this.tree.locals.has(node)) {
        await this.adoptLocal(node, node.ghostOf);
      }
      return;
    }
    if (h.kind === "sidecar") {
      try {
        if (h.open.dirty) await this.applySidecar(h.open);
      } finally {
        if (--h.open.refs <= 0) this.openSidecars.delete(h.open.sidecar.target);
      }
      return;
    }
    if (h.kind !== "note") return;
    const open = h.open;
    try {
      if (this.needsUpload(open)) await this.upload(open);
    } finally {
      if (--open.refs <= 0) this.openNotes.delete(open.node);
    }
  }

  // ---------------------------------------------------------------- uploads and conflicts

  /**
   * Saves a dirty note. When the service cannot be reached (or fails), the write goes to the
   * on-disk journal instead and is replayed later: the save still succeeds, nothing is lost.
   */
  private async upload(open: OpenNote): Promise<void> {
    const node = open.node;
    const content = open.content ?? (await this.body(node));
    if (!isUtf8(content)) return this.becomeLocal(open, content);
    // A note with a journalled write waits its turn behind it, so saves reach the service in order.
    const queued = this.journal.get(journalKey(node));
    if (!queued && !this.writeBehind) {
      try {
        const { meta, body } = await this.send(node, content.toString("utf8"), open.base);
        open.content = Buffer.from(body!, "utf8");
        open.base = baseOf(meta);
        open.dirty = false;
        return;
      } catch (err) {
        if (!isTransient(err)) {
          this.log.error({ err, path: this.tree.pathOf(node) }, "upload failed");
          throw toVfsError(err);
        }
        this.log.warn(
          { path: this.tree.pathOf(node), err: (err as Error).message },
          "service unreachable: journalling the write",
        );
      }
    }
    await this.journalSave(node, content, open.base, false);
    open.dirty = false;
  }

  /**
   * Records a save of `node` in the journal (the service gets it in order, in the background) and
   * shows it at once. `move`: its name and folder go too.
   */
  private async journalSave(node: FileNode, content: Buffer, base: Base, move: boolean): Promise<void> {
    await this.journal.put(
      {
        fileId: node.id,
        createKey: node.createKey,
        name: node.remoteName,
        ...this.placeOf(node.parent),
        content: content.toString("utf8"),
        baseEtag: base?.etag ?? null,
        baseHash: base?.hash ?? null,
        path: this.tree.pathOf(node),
        ...(move ? { move: true as const } : {}),
      },
      !this.writeBehind, // write-behind: fsync(2) makes it durable; write-through: only offline saves land here
    );
    // A copy: the open buffer keeps changing (and may share memory with its spare capacity).
    this.overlay.set(node, Buffer.from(content));
    node.dirtySize = content.length;
    this.attrsChanged(node);
    this.deliverSoon();
  }

  /**
   * A note whose content is no longer valid UTF-8 (a note is text: the service would have to alter
   * the bytes) becomes a local-only file holding exactly those bytes, still bound to the note (see
   * Claim), and every handle open on it now reads and writes that file. Written as text again, it
   * goes up as the same note.
   */
  private async becomeLocal(open: OpenNote, content: Buffer): Promise<void> {
    const node = open.node;
    const dir = node.parent;
    let base = open.base ?? baseOf(node.meta);
    const pending = this.journal.get(journalKey(node));
    // Earlier (text) saves still waiting are moot now (`> note` sends its empty step first), unless
    // already on their way: the service keeps what it has, the claim is based on that.
    if (pending && !this.onItsWay(journalKey(node))) {
      await this.journal.done(pending);
      this.overlay.delete(node);
      base = pending.baseEtag ? { etag: pending.baseEtag, hash: pending.baseHash ?? "" } : null;
    }
    const claim: Claim | undefined = node.id
      ? {
          id: node.id,
          etag: base?.etag ?? "",
          hash: base?.hash,
          name: node.remoteName,
          shownAs: node.name,
          meta: node.meta ?? undefined,
        }
      : undefined;
    if (node.id) this.tree.removeFile(node.id);
    else this.tree.detach(node);
    const local = this.newLocal(dir, node.name, 0o644, content);
    local.mtimeMs = local.ctimeMs = node.localMtimeMs ?? Date.now();
    this.keepLocal(local, claim, "not valid UTF-8");
    for (const [fd, h] of this.handles) {
      if (h.kind !== "note" || h.open !== open) continue;
      const fh = LocalHandle.open(local.blob, h.writable);
      this.handles.set(fd, { kind: "local", node: local, fh, append: h.append });
    }
    this.openNotes.delete(node);
    open.dirty = false;
  }

  /**
   * Saves of one note in this mount form one line (its open handles share a buffer), so a save
   * based on a version that an earlier save of ours replaced builds on our version, not on a
   * remote change: it must not become a conflict copy. (Write-behind captures a save's base before
   * the save ahead of it is delivered.)
   */
  private ownSuccessor(id: string, base: Base): Base {
    let current = base;
    // Bounded: an update that changed nothing keeps its ETag, and the map must never loop.
    for (let hops = 0; current && hops < 1000; hops++) {
      const next = this.superseded.get(`${id} ${current.etag}`);
      if (!next || next.etag === current.etag) break;
      current = next;
    }
    return current;
  }

  /** Our save turned version `base` of note `id` into `meta` (see ownSuccessor). */
  private replaced(id: string, base: Base, meta: TxtFile): void {
    if (base && base.etag !== meta.etag) this.superseded.set(`${id} ${base.etag}`, baseOf(meta)!);
  }

  private get writeBehind(): boolean {
    return this.opts.writeBehind !== false && !this.stopped;
  }

  /**
   * One note's content to the service: a create (with its Idempotency-Key) or a PUT with If-Match.
   * A 412 keeps both versions; a note deleted remotely meanwhile is created again. Returns the
   * note's record and the body it now has.
   */
  private async send(
    node: FileNode,
    content: string | undefined,
    given: Base,
    move = false,
  ): Promise<{ meta: TxtFile; body: string | undefined }> {
    let meta: TxtFile;
    let body = content;
    if (node.id && move) {
      // Its new name and folder first (a rename never conflicts), then the body on top of it.
      meta = withoutContent(
        await this.client.updateFile(node.id, { name: node.remoteName, folderId: node.parent.id }),
      );
      this.replaced(node.id, this.ownSuccessor(node.id, given), meta);
      this.tree.upsertFile(meta, true);
      if (content === undefined) {
        this.refreshDirtySize(node);
        return { meta, body };
      }
    }
    const base = node.id ? this.ownSuccessor(node.id, given) : given;
    if (!node.id) {
      meta = withoutContent(
        await this.client.createFile(
          // Metadata set before the first upload (cp -a copies xattrs onto the new file) goes along.
          { name: node.remoteName, content: content ?? "", folderId: node.parent.id, ...node.pendingMeta },
          node.createKey,
        ),
      );
      this.tree.bindFile(node, meta);
      node.pendingMeta = undefined; // it went with the create
      body = content ?? "";
    } else if (content === undefined) {
      throw new Error("unreachable: a journal entry with neither a body nor a move");
    } else {
      try {
        const sent = node.pendingMeta;
        meta = withoutContent(
          await this.client.updateFile(node.id, { content, ...sent }, { ifMatch: base?.etag }),
        );
        if (node.pendingMeta === sent) node.pendingMeta = undefined;
        this.replaced(node.id, base, meta);
        this.tree.upsertFile(meta, true);
      } catch (err) {
        if (err instanceof ApiError && err.status === 412) {
          ({ meta, body } = await this.afterPreconditionFailed(node, content, base));
        } else if (err instanceof ApiError && err.status === 404) {
          this.log.warn({ path: this.tree.pathOf(node) }, "note was deleted remotely; saving it again");
          this.tree.removeFile(node.id);
          node.id = null;
          node.createKey = randomUUID();
          this.tree.addChild(node.parent, node);
          return this.send(node, content, null);
        } else {
          throw err;
        }
      }
    }
    this.cache.set(meta.id, meta.etag, Buffer.from(body!, "utf8"));
    this.refreshDirtySize(node);
    return { meta, body };
  }

  /**
   * The note changed remotely since our edit began. If only its metadata changed (same content as
   * our base), our content applies on top; otherwise both are kept.
   */
  private async afterPreconditionFailed(node: FileNode, content: string, base: Base) {
    const remote = await this.client.readFile(node.id!);
    if (remote && base?.hash && remote.contentHash === base.hash) {
      try {
        const meta = withoutContent(
          await this.client.updateFile(node.id!, { content }, { ifMatch: remote.etag }),
        );
        this.tree.upsertFile(meta, true);
        return { meta, body: content };
      } catch (err) {
        if (!(err instanceof ApiError && err.status === 412)) throw err;
      }
    }
    return this.keepBoth(node, content);
  }

  /** The note's content changed remotely since we read it: the remote stays, ours is saved beside it. */
  private async keepBoth(node: FileNode, content: string): Promise<{ meta: TxtFile; body: string }> {
    const name = conflictName(node.remoteName);
    const copy = withoutContent(
      await this.client.createFile({ name, content, folderId: node.parent.id }, randomUUID()),
    );
    const path = `${this.tree.pathOf(node.parent)}/${name}`.replace(/^\/\//, "/");
    this.tree.upsertFile(copy, true);
    this.cache.set(copy.id, copy.etag, Buffer.from(content, "utf8"));
    this.conflicts.push(path);
    this.log.warn(
      { path: this.tree.pathOf(node), copy: path },
      "conflict: the note changed remotely; kept ours as a copy",
    );
    const remote = await this.client.readFile(node.id!);
    if (!remote) throw new Error("unreachable: unconditional read answered 304");
    const meta = withoutContent(remote);
    this.tree.upsertFile(meta);
    return { meta, body: remote.content };
  }

  // ---------------------------------------------------------------- the journal

  /**
   * Saves gather for a moment before they are delivered, so a burst (a shell loop, `cp -r`, a
   * build) goes up in a few bulk requests instead of one each, and `echo x > note` (truncate,
   * flush, write, flush) never sends its empty step. Delivery starts once no save came for
   * DELIVERY_QUIET_MS, at the latest DELIVERY_MAX_WAIT_MS after the first one waiting; fsync(2),
   * `txtfs sync`, unmount and operations that need a note on the service (settle) deliver at once.
   * While the service is unreachable, its retry timer does.
   */
  private deliverSoon(): void {
    if (this.unreachable) return;
    const now = Date.now();
    this.gatheringSince ??= now;
    const wait = Math.min(DELIVERY_QUIET_MS, this.gatheringSince + DELIVERY_MAX_WAIT_MS - now);
    clearTimeout(this.replayTimer);
    this.replayTimer = setTimeout(
      () => {
        this.replayTimer = undefined;
        this.gatheringSince = undefined;
        void this.deliver();
      },
      Math.max(0, wait),
    );
    this.replayTimer.unref();
  }

  private scheduleReplay(delayMs: number): void {
    if (this.replayTimer || this.stopped) return;
    this.replayTimer = setTimeout(() => {
      this.replayTimer = undefined;
      void this.deliver();
    }, delayMs);
    this.replayTimer.unref();
  }

  /**
   * Delivers the journal (one delivery at a time; saves arriving meanwhile are taken along).
   * Resolves when it is empty or the service is unreachable (then it retries every 2 s).
   */
  private deliver(): Promise<void> {
    if (this.replaying) {
      this.replayAgain = true;
      return this.replaying;
    }
    const run = async () => {
      do {
        this.replayAgain = false;
        this.unreachable = !(await this.replay());
      } while (this.replayAgain && !this.unreachable);
      if (this.unreachable) this.scheduleReplay(2000);
    };
    this.replaying = run().finally(() => {
      this.replaying = undefined;
    });
    return this.replaying;
  }

  /**
   * Waits until every save is on the service, or the service is found unreachable. Returns the
   * number of saves still journalled (`txtfs sync`, fsync, unmount).
   */
  async drain(): Promise<number> {
    while (this.replaying || this.journal.size > 0) {
      await (this.replaying ?? this.deliver());
      if (this.unreachable) break;
    }
    return this.journal.size;
  }

  /**
   * Remote operations on a note (rename, delete, metadata) come after its journalled save, or a
   * note still being created would be renamed or deleted before it exists.
   */
  private async settle(node: Node | undefined): Promise<void> {
    const key =
      node?.kind === "file"
        ? journalKey(node)
        : node?.kind === "dir" && node.createKey
          ? dirKey(node)
          : undefined;
    if (!key || !this.journal.get(key)) return;
    await this.drain();
    if (this.journal.get(key))
      throw fail("EIO", "the service is unreachable and this item's change is still on its way");
  }

  /**
   * The size stat shows while a note has saves on their way: its newest local body (an open
   * buffer, else the last journalled save), or nothing once the service has the newest.
   */
  private refreshDirtySize(node: FileNode): void {
    const open = this.openNotes.get(node);
    node.dirtySize = open?.dirty && open.content ? open.content.length : this.overlay.get(node)?.length;
    this.attrsChanged(node);
  }

  /** Shows a note under a new name and folder before the service has them. */
  private placeLocally(node: FileNode, dir: DirNode, name: string): void {
    node.remoteName = name;
    // The service carries the type along with a .md/.txt name: so does the local view.
    const type = /\.md$/i.test(name) ? "md" : /\.txt$/i.test(name) ? "txt" : node.meta?.type;
    if (node.meta) node.meta = { ...node.meta, name, folderId: dir.id, type: type ?? node.meta.type };
    this.tree.move(node, dir, name);
  }

  private async reloadNote(id: string): Promise<void> {
    const remote = await this.client.readFile(id).catch(() => undefined);
    if (remote) this.tree.upsertFile(withoutContent(remote));
  }

  /** Every write-behind save is delivered through the journal: only a catch-up is worth an info line. */
  private logDelivered(path: string, msg: string): void {
    if (this.unreachable) this.log.info({ path }, msg);
    else this.log.debug({ path }, msg);
  }

  /** Sends journalled writes in order. False when it stopped because the service is unreachable. */
  private async replay(): Promise<boolean> {
    const before = new Set(this.journal.pending());
    if (!(await this.replayInBulk())) return false;
    for (const entry of this.journal.pending()) {
      // Saved while the bulk was on its way: the next round takes it (in bulk, with others).
      if (!before.has(entry)) {
        this.replayAgain = true;
        continue;
      }
      if (entry.delete) {
        try {
          await this.sendDelete(entry);
        } catch (err) {
          if (isTransient(err)) return false;
          await this.deleteUndone(entry, (err as Error).message);
        }
        continue;
      }
      if (entry.folder) {
        try {
          await this.sendFolder(entry);
        } catch (err) {
          if (isTransient(err)) return false;
          await this.folderRefused(entry, err);
        }
        continue;
      }
      const node = this.nodeFor(entry);
      // Its folder, made here, is created first (later this round; then another round follows).
      if (this.isPending(node.parent) && this.journal.get(dirKey(node.parent))) continue;
      try {
        const base = entry.baseEtag ? { etag: entry.baseEtag, hash: entry.baseHash ?? "" } : null;
        const { meta, body } = await this.send(node, entry.content, base, entry.move);
        await this.journal.done(entry, meta);
        if (!this.journal.get(journalKey(node))) this.overlay.delete(node);
        this.refreshDirtySize(node);
        // An open note's next save builds on what was just delivered (unless that became a
        // conflict copy: then the next save must not overwrite the remote either).
        const open = this.openNotes.get(node);
        if (open && body === entry.content) open.base = baseOf(meta);
        this.rememberTimes(node);
        this.logDelivered(entry.path, "journalled write delivered");
      } catch (err) {
        if (isTransient(err)) return false;
        // The service refused it for good (e.g. a limit): keep the bytes as a local file, visibly,
        // and say so in the log, `txtfs sync` (which then fails) and `txtfs status`.
        const reason = (err as Error).message;
        let keptAs: string | undefined;
        if (entry.content !== undefined) {
          const kept = this.newLocal(
            node.parent,
            this.freeName(node.parent, unsentName(node.name)),
            0o644,
            Buffer.from(entry.content, "utf8"),
          );
          keptAs = this.tree.pathOf(kept);
        }
        this.log.error(
          { err, path: entry.path, keptAs },
          "the service refused a save; its bytes are kept as a local file",
        );
        this.noteRefused({ path: entry.path, reason, keptAs, at: new Date().toISOString() });
        await this.journal.done(entry);
        this.overlay.delete(node);
        if (!node.id) this.tree.detach(node); // never created: its bytes are in the kept file
        // A refused rename: show the note where the service has it.
        if (entry.move && node.id) await this.reloadNote(node.id);
      }
    }
    return true;
  }

  /**
   * Bursts of saves go up in bulk (journalSync.ts): new notes and edits of existing ones. False
   * when the service is unreachable (the bulk on its way is then sent again, unchanged).
   */
  private async replayInBulk(): Promise<boolean> {
    const waiting = this.journal.inflightBulk<Bulk>();
    for (const bulk of waiting ? [waiting] : this.nextBulks()) {
      let results: BulkResult[];
      this.journal.setInflightBulk(bulk);
      try {
        results = await pushBulk(this.client, bulk);
      } catch (err) {
        if (isTransient(err)) return false;
        // Refused as a whole (nothing was applied): the saves go one by one.
        this.log.debug({ err }, "bulk delivery refused; delivering one by one");
        this.journal.setInflightBulk(undefined);
        return true;
      }
      for (const r of results) {
        const entry = this.journal.get(r.item.key);
        if (entry?.delete) {
          if (r.status < 300 || r.gone) await this.deleteDelivered(entry);
          else if (r.conflict) await this.deleteUndone(entry, "it changed remotely since it was read");
        } else if (entry?.folder) {
          if (r.folder) await this.folderMade(entry, r.folder);
        } else if (entry && r.meta) await this.applyBulkItem(entry, r.item, r.meta);
      }
      this.journal.setInflightBulk(undefined);
    }
    return true;
  }

  /** The journal's new notes, edits, renames and deletes, as bulk requests (none for fewer than two). */
  private nextBulks(): Bulk[] {
    const items: BulkItem[] = [];
    for (const e of this.journal.pending()) {
      if (e.delete) {
        const base = e.delete === "file" ? this.deleteBase(e) : undefined;
        items.push({
          key: Journal.keyOf(e),
          rev: e.rev,
          op: `${e.delete}.delete`,
          target: e.fileId!,
          baseEtag: base,
        });
        continue;
      }
      if (e.folder) {
        const dir = this.pendingDirs.get(Journal.keyOf(e));
        const parentFolderId = dir?.parent && this.refTo(dir.parent);
        if (dir)
          items.push({
            key: Journal.keyOf(e),
            rev: e.rev,
            op: "folder.create",
            body: { name: e.name, parentFolderId },
          });
        continue;
      }
      if (!e.fileId) {
        if (e.content === undefined) continue;
        const node = this.nodeFor(e);
        const body = { name: node.remoteName, content: e.content, folderId: this.refTo(node.parent) };
        items.push({
          key: journalKey(node),
          rev: e.rev,
          op: "file.create",
          body: { ...body, ...node.pendingMeta },
        });
        continue;
      }
      if (!e.baseEtag) continue;
      const base = this.ownSuccessor(e.fileId, { etag: e.baseEtag, hash: e.baseHash ?? "" })!;
      const update = {
        key: Journal.keyOf(e),
        rev: e.rev,
        op: "file.update" as const,
        target: e.fileId,
        baseEtag: base.etag,
      };
      // A rename alone never conflicts; with an edit it carries the edit's base (on a conflict the
      // one-by-one path renames, then keeps both versions).
      const place = e.move ? { name: e.name, folderId: this.refTo(this.nodeFor(e).parent) } : {};
      const move = e.move && e.content === undefined;
      items.push({ ...update, move, body: { ...place, content: e.content, ...this.nodeFor(e).pendingMeta } });
    }
    return items.length < 2 ? [] : bulksOf(items);
  }

  /** A folder in a bulk request: its id, or a reference to the item of the same request creating it. */
  private refTo(dir: DirNode): FolderRef {
    return this.isPending(dir) ? { ref: dirKey(dir) } : dir.id;
  }

  /** A save the service took in bulk: the note now has `meta`; a newer save of it stays in line. */
  private async applyBulkItem(entry: JournalEntry, item: BulkItem, meta: TxtFile): Promise<void> {
    const body = item.body ?? {};
    const node = this.nodeFor(entry);
    if (item.op === "file.create") this.tree.bindFile(node, meta);
    else {
      this.replaced(meta.id, { etag: item.baseEtag!, hash: "" }, meta);
      this.tree.upsertFile(meta, true);
    }
    if (body.content !== undefined) this.cache.set(meta.id, meta.etag, Buffer.from(body.content, "utf8"));
    if (node.pendingMeta && carries(body, node.pendingMeta)) node.pendingMeta = undefined;
    // Saved again (or renamed) since the bulk left: that newer save is rebased on `meta` (a copy
    // of the entry tells `done` so), otherwise the entry is delivered.
    await this.journal.done(entry.rev === item.rev ? entry : { ...entry }, meta);
    if (!this.journal.get(journalKey(node))) this.overlay.delete(node);
    this.refreshDirtySize(node);
    const open = this.openNotes.get(node);
    if (open) open.base = baseOf(meta);
    this.rememberTimes(node);
    this.logDelivered(entry.path, "journalled write delivered (bulk)");
  }

  /** A folder made here, to the service on its own (its Idempotency-Key: the create's key). */
  private async sendFolder(entry: JournalEntry): Promise<void> {
    const dir = this.pendingDirs.get(Journal.keyOf(entry));
    if (!dir?.parent) return this.journal.done(entry); // removed here meanwhile
    if (this.isPending(dir.parent)) return; // its own folder first
    const parentFolderId = dir.parent.id;
    await this.folderMade(
      entry,
      await this.client.createFolder({ name: entry.name, parentFolderId }, entry.createKey),
    );
  }

  private async folderMade(entry: JournalEntry, folder: TxtFolder): Promise<void> {
    const key = Journal.keyOf(entry);
    const dir = this.pendingDirs.get(key);
    this.pendingDirs.delete(key);
    if (dir) this.tree.bindFolder(dir, folder);
    await this.journal.rebind(key, folder.id);
    await this.journal.done(entry);
    this.replayAgain = true; // what waited for it goes next
    this.logDelivered(entry.path, "folder created");
  }

  /** The service refused a folder made here: it goes, what was put inside moves up a level. */
  private async folderRefused(entry: JournalEntry, err: unknown): Promise<void> {
    this.log.error({ err, path: entry.path }, "folder create refused; what is inside moves up a level");
    const key = Journal.keyOf(entry);
    const dir = this.pendingDirs.get(key);
    this.pendingDirs.delete(key);
    await this.journal.done(entry);
    if (!dir?.parent) return;
    const up = this.placeOf(dir.parent);
    this.tree.removeDir(dir);
    await this.journal.rebind(key, up.folderId, up.parentKey);
  }

  /** Where a journal entry's item lives: its folder, or the folder made here it waits for. */
  private parentFor(entry: JournalEntry): DirNode {
    const pending = entry.parentKey ? this.pendingDirs.get(entry.parentKey) : undefined;
    return pending ?? this.tree.dirs.get(entry.folderId ?? "") ?? this.tree.root;
  }

  /** The tree node a journal entry writes to (re-created after a restart when needed). */
  private nodeFor(entry: JournalEntry): FileNode {
    const existing = entry.fileId
      ? this.tree.files.get(entry.fileId)
      : [...this.overlay.keys()].find((n) => n.createKey === entry.createKey);
    if (existing) return existing;
    const parent = this.parentFor(entry);
    const node: FileNode = {
      kind: "file",
      name: entry.name,
      parent,
      id: entry.fileId,
      meta: null,
      remoteName: entry.name,
      createKey: entry.createKey,
    };
    this.tree.addChild(parent, node);
    if (entry.fileId) this.tree.files.set(entry.fileId, node);
    return node;
  }

  /** After a restart: show journalled writes in the tree right away, then deliver them. */
  private restoreJournal(entries: JournalEntry[]): void {
    for (const entry of entries) {
      if (entry.folder) {
        // Made here before the restart: shown (with what goes into it) until the service has it.
        const parent = this.parentFor(entry);
        const dir: DirNode = {
          kind: "dir",
          name: entry.name,
          parent,
          id: null,
          meta: provisionalFolder(entry.name, parent),
          children: new Map(),
          createKey: entry.createKey,
        };
        this.tree.addChild(parent, dir);
        this.pendingDirs.set(Journal.keyOf(entry), dir);
        continue;
      }
      if (entry.delete) {
        // Deleted here before the restart: gone from the tree until the service agrees.
        this.tree.deleting.add(entry.fileId!);
        if (entry.delete === "file") this.tree.removeFile(entry.fileId!);
        else this.tree.removeFolder(entry.fileId!);
        continue;
      }
      const node = this.nodeFor(entry);
      if (entry.move && node.id) {
        // Renamed here before the restart: shown at its new place until the service has it.
        this.placeLocally(node, this.parentFor(entry), entry.name);
      }
      if (entry.content === undefined) continue;
      const body = Buffer.from(entry.content, "utf8");
      this.overlay.set(node, body);
      node.dirtySize = body.length;
    }
    this.attrsChanged();
    if (entries.length) this.deliverSoon();
  }

  // ---------------------------------------------------------------- namespace changes

  async mkdir(path: string): Promise<void> {
    const { parent, name } = parentAndName(path);
    const dir = this.findDir(parent);
    this.checkWritable(dir);
    checkName(name);
    if (dir.children.has(name)) throw fail("EEXIST");
    const local = localDirKind(name, dir.localOnly, this.alwaysLocal);
    if (local) {
      // Kept on this machine (see localDirs.ts): git init, .obsidian, node_modules.
      const made: DirNode = {
        kind: "dir",
        name,
        parent: dir,
        id: null,
        meta: provisionalFolder(name, dir),
        children: new Map(),
        localOnly: local,
      };
      this.tree.addChild(dir, made);
      this.saveLocal();
      return;
    }
    await this.materialize(dir);
    if (this.writeBehind && (dir === this.tree.root || dir.createKey || dir.meta?.role === "owner")) {
      // Shown at once, created on the service in order with what goes into it.
      const made: DirNode = {
        kind: "dir",
        name,
        parent: dir,
        id: null,
        meta: provisionalFolder(name, dir),
        children: new Map(),
        createKey: randomUUID(),
      };
      this.tree.addChild(dir, made);
      this.pendingDirs.set(dirKey(made), made);
      const entry = {
        fileId: null,
        createKey: made.createKey!,
        name,
        baseEtag: null,
        path,
        folder: true as const,
      };
      await this.journal.put({ ...entry, ...this.placeOf(dir) }, false);
      this.deliverSoon();
      return;
    }
    try {
      const folder = await this.client.createFolder({ name, parentFolderId: dir.id });
      this.tree.upsertFolder(folder);
    } catch (err) {
      throw toVfsError(err);
    }
  }

  /** Where an item in `dir` goes on the service: its id, or the key of its create on the way. */
  private placeOf(dir: DirNode): { folderId: string | null; parentKey?: string } {
    if (dir.localOnly) throw new Error(`bug: ${this.tree.pathOf(dir)} is local; materialize it first`);
    return dir.createKey ? { folderId: null, parentKey: dirKey(dir) } : { folderId: dir.id };
  }

  /** A folder made here whose create has not reached the service yet (its children wait for it). */
  private isPending(dir: DirNode): boolean {
    return dir.createKey !== undefined && dir.id === null;
  }

  async rmdir(path: string): Promise<void> {
    const dir = this.findDir(path);
    if (dir === this.tree.root) throw fail("EPERM");
    this.checkWritable(dir);
    if (dir.children.size > 0) throw fail("ENOTEMPTY"); // POSIX: only an empty directory
    if (dir.localOnly) {
      this.tree.detach(dir);
      this.saveLocal();
      return;
    }
    if (this.isPending(dir) && (await this.dropUnsentDir(dir))) return;
    await this.settle(dir);
    if (this.deletesLater(dir)) {
      await this.deleteLater("folder", dir.id!, null, path);
      this.tree.removeFolder(dir.id!);
      return;
    }
    try {
      await this.client.deleteFolder(dir.id!);
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 404)) throw toVfsError(err);
    }
    this.tree.removeFolder(dir.id!);
  }

  async unlink(path: string): Promise<void> {
    if (!this.tree.lookup(path) && this.sidecar(path))
      throw fail("EPERM", "a sidecar goes away with its note");
    const node = this.find(path);
    if (node.kind === "dir") throw fail("EISDIR");
    this.checkWritable(node);
    if (node.kind === "file" && (await this.dropUnsent(node))) return;
    await this.settle(node);
    if (node.kind === "local") {
      this.tree.detach(node);
      // A renamed-away note (`note~`, `.fuse_hidden*` at the last close of a removed open note).
      if (node.ghostOf && this.writeBehind) {
        await this.deleteLater("file", node.ghostOf.id, node.ghostOf.etag, path);
        this.leaveTombstone(node.parent, node.ghostOf.shownAs, node.ghostOf);
      } else if (node.ghostOf) await this.deleteRemote(node.ghostOf.id, node.ghostOf.etag);
      this.local.remove(node.blob);
      this.saveLocal();
      return;
    }
    if (node.id && this.deletesLater(node)) {
      await this.deleteLater("file", node.id, node.meta?.etag ?? null, path);
      this.leaveTombstone(node.parent, node.name, {
        id: node.id,
        etag: this.ownSuccessor(node.id, baseOf(node.meta))?.etag ?? node.meta?.etag ?? "",
        hash: node.meta?.contentHash,
        name: node.remoteName,
        shownAs: node.name,
        meta: node.meta ?? undefined,
      });
    } else if (node.id) await this.deleteRemote(node.id, node.meta?.etag);
    if (node.id) this.tree.removeFile(node.id);
    else this.tree.detach(node);
  }

  /**
   * Deletes are write-behind too (rm -rf returns at once; a burst goes up in bulk), for what the
   * user owns: deleting someone else's shared item is refused by the service, and that answer
   * must reach the program that asked.
   */
  private deletesLater(node: FileNode | DirNode): boolean {
    return this.writeBehind && (node.meta?.role ?? "owner") === "owner";
  }

  private async deleteLater(kind: "file" | "folder", id: string, etag: string | null, path: string) {
    this.tree.deleting.add(id);
    const entry = { fileId: id, createKey: "", name: "", folderId: null, baseEtag: etag, path, delete: kind };
    await this.journal.put(entry, false);
    this.deliverSoon();
  }

  /**
   * A note whose create has not left yet is deleted by forgetting it: `echo x > tmp.md; rm tmp.md`
   * costs no request. True if that was the case.
   */
  private async dropUnsent(node: FileNode): Promise<boolean> {
    const key = journalKey(node);
    const entry = this.journal.get(key);
    if (node.id || !entry || this.onItsWay(key) || this.openNotes.has(node)) return false;
    await this.journal.done(entry);
    this.overlay.delete(node);
    this.tree.detach(node);
    return true;
  }

  /** A folder whose create has not left yet is removed by forgetting it (mkdir -p, then rm -rf). */
  private async dropUnsentDir(dir: DirNode): Promise<boolean> {
    const key = dirKey(dir);
    const entry = this.journal.get(key);
    if (!entry || this.onItsWay(key)) return false;
    await this.journal.done(entry);
    this.pendingDirs.delete(key);
    this.tree.removeDir(dir);
    return true;
  }

  /** The ETag a delete of a note is based on: what we last saw, or our own save on top of it. */
  private deleteBase(entry: JournalEntry): string | undefined {
    if (!entry.baseEtag) return undefined;
    return this.ownSuccessor(entry.fileId!, { etag: entry.baseEtag, hash: "" })?.etag;
  }

  /** One delete to the service (a bulk of one). Throws what the service answered, except "gone". */
  private async sendDelete(entry: JournalEntry): Promise<void> {
    const id = entry.fileId!;
    try {
      if (entry.delete === "file") await this.client.deleteFile(id, this.deleteBase(entry));
      else await this.client.deleteFolder(id);
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 404)) throw err;
    }
    await this.deleteDelivered(entry);
  }

  /** A note deleted here, claimable by name until its delete leaves (git checkout, tar -x: delete, then create). */
  private leaveTombstone(dir: DirNode, name: string, claim: Claim): void {
    const names = this.tombstones.get(dir) ?? new Map<string, Claim>();
    names.set(name, { ...claim, shownAs: name });
    this.tombstones.set(dir, names);
  }

  private async deleteDelivered(entry: JournalEntry): Promise<void> {
    this.dropTombstone(entry.fileId!);
    await this.journal.done(entry);
    this.times.delete(entry.fileId!);
    this.tree.deleting.delete(entry.fileId!);
    this.tree.ghosted.delete(entry.fileId!);
    this.logDelivered(entry.path, "delete delivered");
  }

  /** The service kept the item (it changed remotely meanwhile, or the delete was refused): it shows again. */
  private async deleteUndone(entry: JournalEntry, why: string): Promise<void> {
    this.log.warn({ path: entry.path, why }, "delete not applied; the item shows again");
    this.dropTombstone(entry.fileId!);
    await this.journal.done(entry);
    const id = entry.fileId!;
    this.tree.deleting.delete(id);
    this.tree.ghosted.delete(id); // a renamed-away note shows again under its own name
    if (entry.delete === "file") await this.reloadNote(id);
    else {
      const folder = await this.client.readFolderWithBodies(id).catch(() => undefined);
      if (folder) {
        const { files, ...meta } = folder;
        this.tree.upsertFolder(meta);
        for (const f of files) this.tree.upsertFile(withoutContent(f));
      }
    }
  }

  private async deleteRemote(id: string, etag: string | undefined): Promise<void> {
    try {
      // If-Match: deleting a note that changed remotely since we saw it would lose that change.
      await this.client.deleteFile(id, etag);
      this.cache.delete(id);
      this.tree.ghosted.delete(id);
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) return;
      throw toVfsError(err);
    }
  }

  async rename(from: string, to: string): Promise<void> {
    const src = this.find(from);
    const { parent, name } = parentAndName(to);
    const destDir = this.findDir(parent);
    checkName(name);
    const sidecar = destDir.children.has(name) ? undefined : sidecarAt(destDir, name);
    if (sidecar) {
      // `jq ... > tmp && mv tmp NAME.meta.json`: the renamed file's JSON is applied.
      if (src.kind !== "local") throw fail("EINVAL", "only a plain file can replace a sidecar");
      this.checkWritable(sidecar.target);
      await this.settle(sidecar.target);
      await this.sidecars.apply(sidecar.target, this.local.read(src.blob).toString("utf8"));
      this.tree.detach(src);
      this.local.remove(src.blob);
      this.saveLocal();
      return;
    }
    this.checkWritable(src);
    this.checkWritable(destDir);
    const target = destDir.children.get(name);
    if (target === src) return;
    if (src.kind === "dir") return this.renameDir(src, destDir, name, target);
    if (target?.kind === "dir") throw fail("EISDIR");
    try {
      if (target?.kind === "file" && isNoteName(name)) {
        await this.settle(src); // its remote copy is deleted once its content moved over
        return await this.replaceNote(src, target);
      }
      if (target) await this.unlink(to);
      if (src.kind === "local") return await this.renameLocal(src, destDir, name);
      return await this.renameNote(src, destDir, name);
    } catch (err) {
      throw toVfsError(err);
    }
  }

  /**
   * Rename over an existing note is how editors and tools save (sed -i, python's os.replace, rsync,
   * vim): the existing note gets the new content, keeping its id, metadata and history.
   */
  private async replaceNote(src: FileNode | LocalNode, target: FileNode): Promise<void> {
    const content = src.kind === "local" ? this.local.read(src.blob) : await this.body(src);
    if (src.kind === "local" && src.pendingMeta)
      target.pendingMeta = { ...target.pendingMeta, ...src.pendingMeta };
    const open = this.openNote(target);
    try {
      // Its whole content is replaced: the old body is not needed (nor fetched).
      open.content = Buffer.from(content);
      open.dirty = true;
      await this.upload(open);
    } finally {
      if (--open.refs <= 0) this.openNotes.delete(target);
    }
    if (src.kind === "local") {
      this.tree.detach(src);
      this.local.remove(src.blob);
      this.saveLocal();
      if (src.ghostOf && src.ghostOf.id !== target.id) await this.deleteRemote(src.ghostOf.id, undefined);
    } else if (src.id) {
      await this.deleteRemote(src.id, src.meta?.etag);
      this.tree.removeFile(src.id);
    } else {
      this.tree.detach(src);
    }
  }

  private async renameLocal(src: LocalNode, destDir: DirNode, name: string): Promise<void> {
    if (!isNoteName(name) || destDir.localOnly === "always") {
      this.tree.move(src, destDir, name);
      this.saveLocal();
      return;
    }
    await this.materialize(destDir);
    // A local file becomes a note (rsync's and sed's temp files, a ghost renamed back): it continues
    // the note it stands for, or the one left under this name, or it is a new note.
    const claim = src.ghostOf ?? (await this.claimName(destDir, name));
    src.ghostOf = undefined;
    this.tree.move(src, destDir, name);
    await this.adoptLocal(src, claim);
  }

  /**
   * A local file under a note name goes up as that note (write-behind, in order with everything
   * else), continuing `claim` if given. Content that is not valid UTF-8 cannot be a note: the file
   * stays local with exactly its bytes (and keeps the claim, for when it is text again).
   */
  private async adoptLocal(src: LocalNode, claim: Claim | undefined): Promise<void> {
    const dir = src.parent;
    if (dir.localOnly === "always") return; // what is inside stays local (localDirs.ts)
    const content = this.local.read(src.blob);
    if (!isUtf8(content)) {
      this.keepLocal(src, claim, "not valid UTF-8");
      return;
    }
    await this.materialize(dir);
    this.tree.detach(src);
    this.local.remove(src.blob);
    this.saveLocal();
    const node = this.newNote(dir, src.name, claim, src);
    // A continued note takes this name and folder too (sent along with its content), and the
    // context and tags set on the file (rsync -X).
    node.remoteName = src.name;
    node.pendingMeta = src.pendingMeta;
    const base = claim ? { etag: claim.etag, hash: claim.hash ?? "" } : null;
    await this.journalSave(node, content, base, claim !== undefined);
    if (!this.writeBehind) await this.drain();
  }

  /** A file under a note name that cannot be a note stays local, exactly, and says why (once). */
  private keepLocal(node: LocalNode, claim: Claim | undefined, why: string): void {
    if (claim) {
      node.ghostOf = { ...claim, shownAs: node.name };
      this.tree.ghosted.add(claim.id);
    }
    this.saveLocal();
    this.log.warn({ path: this.tree.pathOf(node), why }, "kept as a local-only file");
  }

  private async renameNote(src: FileNode, destDir: DirNode, name: string): Promise<void> {
    // Into a folder whose content stays local: mv copies it there and deletes the note (EXDEV).
    if (destDir.localOnly === "always") throw fail("EXDEV");
    await this.materialize(destDir);
    if (isNoteName(name) && (this.writeBehind || !src.id)) {
      // Shown at once; the journal sends the new name and folder in order with the note's saves
      // (a note not created yet is simply created under its new name).
      this.placeLocally(src, destDir, name);
      const pending = this.journal.get(journalKey(src));
      if (src.id || pending) {
        await this.journal.put(
          {
            fileId: src.id,
            createKey: src.createKey,
            name,
            ...this.placeOf(destDir),
            baseEtag: src.meta?.etag ?? null,
            baseHash: src.meta?.contentHash ?? null,
            path: this.tree.pathOf(src),
            // Also for a note being created: its create may already be on its way under the old name.
            move: true,
          },
          !this.writeBehind,
        );
        this.deliverSoon();
      }
      return;
    }
    await this.settle(src);
    if (!src.id) {
      // Not uploaded yet (nothing was written): it will be created under its new name.
      src.remoteName = name;
      this.tree.move(src, destDir, name);
      return;
    }
    if (!isNoteName(name)) {
      // Renamed to a non-note name (vim's `note~`, `.fuse_hidden*`): the note stays remote,
      // shown here as a local file still bound to it, until it is re-created, renamed back or unlinked.
      const body = await this.body(src);
      const ghost = this.newLocal(destDir, name, 0o644, body);
      ghost.ghostOf = {
        id: src.id,
        etag: src.meta!.etag,
        hash: src.meta!.contentHash,
        name: src.remoteName,
        shownAs: src.name,
      };
      this.tree.ghosted.add(src.id);
      this.tree.removeFile(src.id);
      this.saveLocal();
      return;
    }
    const meta = withoutContent(await this.client.updateFile(src.id, { name, folderId: destDir.id }));
    this.tree.upsertFile(meta, true);
  }

  private async renameDir(
    src: DirNode,
    destDir: DirNode,
    name: string,
    target: Node | undefined,
  ): Promise<void> {
    if (target) {
      if (target.kind !== "dir") throw fail("ENOTDIR");
      if (target.children.size > 0) throw fail("ENOTEMPTY");
    }
    for (let d: DirNode | null = destDir; d; d = d.parent) if (d === src) throw fail("EINVAL");
    if (src.localOnly) return this.renameLocalDir(src, destDir, name, target);
    if (destDir.localOnly === "always") throw fail("EXDEV");
    await this.materialize(destDir);
    // A folder made here moves, or takes a folder in, once the service has it.
    await this.settle(src);
    await this.settle(destDir);
    try {
      if (target?.kind === "dir") await this.rmdir(this.tree.pathOf(target));
      const folder = await this.client.updateFolder(src.id!, { name, parentFolderId: destDir.id });
      this.tree.upsertFolder(folder);
    } catch (err) {
      throw toVfsError(err);
    }
  }

  /** A local folder moves here; under a name that is not local (no dot), it becomes an ordinary folder. */
  private async renameLocalDir(src: DirNode, destDir: DirNode, name: string, target: Node | undefined) {
    if (target?.kind === "dir") await this.rmdir(this.tree.pathOf(target));
    src.meta = provisionalFolder(name, destDir); // a folder is shown under its record's name
    this.tree.move(src, destDir, name);
    const kind = localDirKind(name, destDir.localOnly, this.alwaysLocal);
    if (kind) src.localOnly = kind;
    else {
      await this.materialize(destDir);
      await this.promote(src);
    }
    this.saveLocal();
  }

  /** A local "until-note" folder is about to hold a note: it (and its local parents) go to the service. */
  private async materialize(dir: DirNode): Promise<void> {
    if (dir.localOnly !== "until-note") return;
    const chain: DirNode[] = [];
    for (let d: DirNode | null = dir; d?.localOnly === "until-note"; d = d.parent) chain.unshift(d);
    for (const d of chain) await this.promote(d, false);
  }

  /**
   * A local folder becomes an ordinary one: created on the service in order with what goes into it
   * (as mkdir does). `deep`: folders inside that are local only because it was follow.
   */
  private async promote(dir: DirNode, deep = true): Promise<void> {
    dir.localOnly = undefined;
    this.tree.localDirs.delete(dir);
    dir.createKey = randomUUID();
    this.pendingDirs.set(dirKey(dir), dir);
    const path = this.tree.pathOf(dir);
    await this.journal.put(
      {
        fileId: null,
        createKey: dir.createKey,
        name: dir.name,
        baseEtag: null,
        path,
        folder: true,
        ...this.placeOf(dir.parent!),
      },
      false,
    );
    this.attrsChanged(dir);
    this.saveLocal();
    this.deliverSoon();
    if (!deep) return;
    for (const child of dir.children.values()) {
      if (child.kind !== "dir" || !child.localOnly) continue;
      const kind = localDirKind(child.name, undefined, this.alwaysLocal);
      if (kind) child.localOnly = kind;
      else await this.promote(child);
    }
  }

  // ---------------------------------------------------------------- attributes

  /** Dirty, or created and never sent (touch): what flush and release must upload. */
  private needsUpload(open: OpenNote): boolean {
    return open.dirty || (open.created && !open.node.id && !this.overlay.has(open.node));
  }

  /** Attribute calls on a sidecar path: it has no attributes of its own (null = not a sidecar). */
  private sidecarOnly(path: string): SidecarNode | null {
    return this.tree.lookup(path) ? null : (this.sidecar(path) ?? null);
  }

  /** Sets the times a program asked for (undefined: UTIME_OMIT, that one stays). */
  async utimens(path: string, atime: number | undefined, mtime: number | undefined): Promise<void> {
    if (this.sidecarOnly(path)) return;
    const node = this.find(path);
    // `touch new.md` (create, utimens, close): send the empty note now, so it exists remotely
    // when touch returns (the kernel does not wait for release).
    const open = node.kind === "file" ? this.openNotes.get(node) : undefined;
    if (open && this.needsUpload(open)) await this.upload(open);
    const now = Date.now();
    if (node.kind === "local") {
      node.mtimeMs = mtime ?? node.mtimeMs;
      node.atimeMs = atime ?? node.atimeMs;
      node.ctimeMs = now;
      this.saveLocal();
    } else if (node.kind === "file") {
      // Kept here (the service keeps its own updatedAt), and across restarts while the content is
      // the same (noteTimes): `rsync -a` and `make` see the times they set.
      const shown = this.statOf(node);
      node.localMtimeMs = mtime ?? shown.mtime.getTime();
      node.localAtimeMs = atime ?? shown.atime.getTime();
      node.localCtimeMs = now;
      this.rememberTimes(node);
    }
  }

  /** Keeps a delivered note's times for the next mount (a pending one's are kept once it is delivered). */
  private rememberTimes(node: FileNode): void {
    if (!node.meta || node.localMtimeMs === undefined || this.tree.heldLocally(node)) return;
    this.times.set(node.meta.id, {
      hash: node.meta.contentHash,
      mtimeMs: node.localMtimeMs,
      atimeMs: node.localAtimeMs,
    });
  }

  async chmod(path: string, mode: number): Promise<void> {
    if (this.sidecarOnly(path)) return;
    const node = this.find(path);
    if (node.kind === "local") {
      node.mode = mode & 0o7777;
      this.saveLocal();
    }
    // Notes have no permission bits of their own (their role decides): accepted, like sed -i expects.
  }

  async chown(path: string): Promise<void> {
    if (this.sidecarOnly(path)) return;
    this.find(path);
  }

  async getxattr(path: string, name: string): Promise<Buffer | null> {
    if (this.sidecarOnly(path)) return null;
    const node = this.find(path);
    if (name === STATE_XATTR) return this.readState(node);
    await this.settle(node);
    return readXattr(this.client, node, name);
  }

  listxattr(path: string): string[] {
    if (this.sidecarOnly(path)) return [];
    return xattrNames(this.find(path));
  }

  async setxattr(path: string, name: string, value: Buffer): Promise<void> {
    if (this.sidecarOnly(path)) throw fail("ENOTSUP");
    const node = this.find(path);
    if (name === STATE_XATTR) return this.writeState(node, value);
    if (name.startsWith("user.txtfs.")) this.checkWritable(node);
    await this.settle(node);
    await writeXattr(this.client, this.tree, node, name, value);
    if (node.kind === "local") this.saveLocal();
  }

  // ---------------------------------------------------------------- availability on this device

  private readState(node: Node): Buffer | null {
    if (node.kind === "local" || !node.id) return null;
    return Buffer.from(this.pins.stateOf(node));
  }

  /** `txtfs pin/unpin` set this attribute: online-only, available or pinned (folders: recursive). */
  private async writeState(node: Node, value: Buffer): Promise<void> {
    const state = value.toString("utf8").trim() as Availability;
    if (!AVAILABILITIES.includes(state)) throw fail("EINVAL");
    if (node.kind === "local" || !node.id) throw fail("EPERM");
    try {
      await this.pins.set(node, state, itemsBelow(node));
    } catch (err) {
      throw toVfsError(err);
    }
  }

  // ---------------------------------------------------------------- local-only files

  private newLocal(dir: DirNode, name: string, mode: number, body?: Buffer): LocalNode {
    const node: LocalNode = {
      kind: "local",
      name,
      parent: dir,
      blob: this.local.create(body),
      mode,
      size: body?.length ?? 0,
      mtimeMs: Date.now(),
    };
    this.tree.addChild(dir, node);
    this.saveLocal();
    return node;
  }

  private localEntries(): ManifestEntry[] {
    const dirs: ManifestEntry[] = [...this.tree.localDirs].map((dir) => ({
      path: this.tree.pathOf(dir),
      blob: "",
      mode: 0o755,
      mtimeMs: Date.parse(dir.meta?.updatedAt ?? "") || 0,
      dir: dir.localOnly,
    }));
    return dirs.concat(
      [...this.tree.locals].map((node) => ({
        path: this.tree.pathOf(node),
        blob: node.blob,
        mode: node.mode,
        mtimeMs: node.mtimeMs,
        atimeMs: node.atimeMs,
        ghostOf: node.ghostOf,
        pendingMeta: node.pendingMeta,
      })),
    );
  }

  /** Records local files in the manifest, a moment later (see LocalFiles.save). */
  private saveLocal(): void {
    this.local.save(() => this.localEntries());
  }

  private restoreLocal(entry: ManifestEntry): void {
    const { parent, name } = parentAndName(entry.path);
    const dir = this.tree.lookup(parent);
    const home = dir?.kind === "dir" ? dir : this.tree.root;
    if (entry.dir) {
      if (home.children.has(name)) return; // made on the service meanwhile (by another device)
      const local: DirNode = {
        kind: "dir",
        name,
        parent: home,
        id: null,
        meta: provisionalFolder(name, home),
        children: new Map(),
        localOnly: entry.dir,
      };
      this.tree.addChild(home, local);
      return;
    }
    const node: LocalNode = {
      kind: "local",
      name,
      parent: home,
      blob: entry.blob,
      mode: entry.mode,
      size: 0,
      mtimeMs: entry.mtimeMs,
      atimeMs: entry.atimeMs,
      ghostOf: entry.ghostOf,
      pendingMeta: entry.pendingMeta,
    };
    if (entry.ghostOf) this.tree.ghosted.add(entry.ghostOf.id);
    this.tree.addChild(home, node);
    void stat(entry.blob)
      .then((s) => {
        node.size = s.size;
        this.attrsChanged();
      })
      .catch(() => this.tree.detach(node));
  }
}

/** `data` written into `content` at `at`, growing it as needed (a new buffer when it grows). */
function splice(content: Buffer, data: Buffer, at: number): Buffer {
  const end = at + data.length;
  const next = end > content.length ? Buffer.alloc(end) : content;
  if (next !== content) content.copy(next);
  data.copy(next, at);
  return next;
}

/**
 * Writes into an open note's body. Its backing buffer grows geometrically (a note written 4 KiB at
 * a time is not copied each time), sized from the body's length, never from the previous backing:
 * a body truncated and written again must not double its memory each time.
 */
function writeInto(open: OpenNote, data: Buffer, at: number): void {
  const current = open.content ?? Buffer.alloc(0);
  const length = Math.max(current.length, at + data.length);
  let backing = open.backing;
  const isView =
    backing !== undefined && current.buffer === backing.buffer && current.byteOffset === backing.byteOffset;
  if (!backing || !isView || length > backing.length) {
    const grown = Buffer.alloc(Math.max(length, Math.min(length * 2, length + 64 * 1024 * 1024), 16 * 1024));
    current.copy(grown);
    backing = grown;
    open.backing = grown;
  } else if (at > current.length) {
    backing.fill(0, current.length, at); // a write past the end leaves a hole of zeros
  }
  data.copy(backing, at);
  open.content = backing.subarray(0, length);
}

/** The note's content changed here, now: mtime and ctime say so (POSIX), whatever the service's clock. */
function touched(node: FileNode, at = Date.now()): void {
  node.localMtimeMs = at;
  node.localCtimeMs = at;
}

export interface RefusedSave {
  path: string;
  /** What the service said. */
  reason: string;
  /** Where its bytes are kept (a local-only file), if it had content. */
  keptAs?: string;
  at: string;
}

/** `note.md` -> `note.md.unsent`, within the 255 bytes a name may have. */
function unsentName(name: string): string {
  let stem = name;
  while (Buffer.byteLength(`${stem}.unsent.99`, "utf8") > 255) stem = stem.slice(0, -1);
  return `${stem}.unsent`;
}

/** Whether a request body carried every context and tag change in `meta`. */
function carries(
  body: { context?: string; tags?: string[] },
  meta: { context?: string; tags?: string[] },
): boolean {
  const same = meta.tags === undefined || JSON.stringify(meta.tags) === JSON.stringify(body.tags);
  return same && (meta.context === undefined || meta.context === body.context);
}

/** The service keeps names of at most 255 bytes (as POSIX's NAME_MAX): longer ones are refused here, at once. */
function checkName(name: string): void {
  if (Buffer.byteLength(name, "utf8") > 255) throw fail("ENAMETOOLONG");
}

function resize(content: Buffer, size: number): Buffer {
  const next = Buffer.alloc(size);
  content.copy(next, 0, 0, Math.min(size, content.length));
  return next;
}

type Base = { etag: string; hash: string } | null;

/** A Map that forgets its oldest entries beyond `max`. */
class BoundedMap<K, V> extends Map<K, V> {
  private readonly max: number;
  constructor(max: number) {
    super();
    this.max = max;
  }
  override set(key: K, value: V): this {
    super.set(key, value);
    if (this.size > this.max) this.delete(this.keys().next().value as K);
    return this;
  }
}

function baseOf(meta: TxtFile | null | undefined): Base {
  return meta ? { etag: meta.etag, hash: meta.contentHash } : null;
}

/** Worth retrying later: the service was unreachable, overloaded or failing. */
function isTransient(err: unknown): boolean {
  return (
    err instanceof NetworkError || (err instanceof ApiError && (err.status >= 500 || err.status === 429))
  );
}

/** `note.md` -> `note.conflict-host-20261121T223000.md` */
export function conflictName(name: string): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, "").slice(0, 15);
  const dot = name.lastIndexOf(".");
  const tag = `conflict-${hostname().replace(/[^\w-]/g, "")}-${stamp}`;
  return dot > 0 ? `${name.slice(0, dot)}.${tag}${name.slice(dot)}` : `${name}.${tag}`;
}

export { VfsError };

import { stat } from "node:fs/promises";
import { ApiError, NetworkError, type TxtfsClient, withoutContent } from "../client/api.ts";
import type { TxtFile, TxtFolder } from "../lib/apiTypes.ts";
import type { Logger } from "../lib/logger.ts";
import { handlingBody } from "../lib/memoryMode.ts";
import { Access } from "./access.ts";
import type { Conflicts } from "./conflicts.ts";
import { ContentCache, ownBytes } from "./contentCache.ts";
import { CreatesOnTheirWay } from "./delivery/createsOnTheirWay.ts";
import type { Delivery } from "./delivery/deliver.ts";
import { Journal, type JournalEntry } from "./delivery/journal.ts";
import { fail, toVfsError } from "./errors.ts";
import { FolderPrefetch } from "./folderPrefetch.ts";
import { ChangeFollower } from "./follower.ts";
import type { OpenFiles } from "./handles.ts";
import { decide, noteState } from "./lifecycle.ts";
import type { Claims } from "./local/claims.ts";
import { ALWAYS_LOCAL_DIRS } from "./local/localDirs.ts";
import { LocalFiles, type LocalHandle, type ManifestEntry } from "./local/localFiles.ts";
import type { Attributes } from "./meta/attributes.ts";
import { DeviceAttrs } from "./meta/deviceAttrs.ts";
import { NoteTimes } from "./meta/noteTimes.ts";
import { Pins } from "./meta/pins.ts";
import { type SidecarNode, Sidecars, type SidecarTarget } from "./meta/sidecars.ts";
import { parentAndName } from "./names.ts";
import type { Namespace } from "./namespace.ts";
import { Reports } from "./reports.ts";
import { type DirNode, type FileNode, type LocalNode, type Node, Tree } from "./tree.ts";

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
  /** Where the mount is: absolute symlink targets into `.txtfs/` (ln -s "$PWD/note.md") are found by it. */
  mountpoint?: string;
  /** List `.txtfs/` in the root folder (it is always reachable by its path). */
  showControlDir?: boolean;
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
  /** A device node's number. */
  rdev?: number;
}

export interface OpenNote {
  node: FileNode;
  refs: number;
  /** The body being edited; null until something needs it. */
  content: Buffer | null;
  /** The version the edit is based on: If-Match on upload, and how to tell a real conflict. */
  base: Base;
  dirty: boolean;
  /**
   * The note shows another version than this buffer (our save became a conflict copy while the
   * file was open): once the last handle closes, its times move so no stale page is read again.
   */
  detached?: boolean;
  /** Made by create(): uploaded at release even if nothing was written (touch). */
  created: boolean;
  /** Spare capacity behind `content`, so a file written 4 KiB at a time is not copied each time. */
  backing?: Buffer;
  /**
   * Append-only (opened O_WRONLY|O_APPEND, body not here): the bytes appended since the last save,
   * the body never loaded. Saved as an append (`file.append`); anything else done with the note
   * loads the body first and turns this into `content` (handles.ts, materialize).
   */
  tail?: Buffer;
  materializing?: Promise<void>;
}

export interface OpenSidecar {
  sidecar: SidecarNode;
  refs: number;
  content: Buffer;
  dirty: boolean;
}

export type Handle =
  | {
      kind: "note";
      open: OpenNote;
      append: boolean;
      writable: boolean;
      /** What a reader reads while nothing is written through the note, and what it is a copy of. */
      snapshot?: Buffer;
      snapshotOf?: unknown;
      /** The version that snapshot is: a write through this handle builds on it (handles.ts). */
      snapshotBase?: Base;
      /**
       * A write would have taken the note past its largest size: the save through this handle is
       * refused whole, so its writes, flushes and close answer EFBIG (handles.ts, refuseOversize).
       */
      oversize?: boolean;
    }
  | {
      kind: "sidecar";
      open: OpenSidecar;
      /** A write through it could never make an acceptable sidecar: EINVAL until it is closed. */
      refused?: boolean;
    }
  | { kind: "local"; node: LocalNode; fh: LocalHandle; append: boolean; written?: boolean }
  | { kind: "dir" };

export const journalKey = (node: FileNode) => Journal.keyOf({ fileId: node.id, createKey: node.createKey });

export const dirKey = (dir: DirNode) => Journal.keyOf({ fileId: null, createKey: dir.createKey! });

export function provisionalFolder(name: string, parent: DirNode): TxtFolder {
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

export const S_IFREG = 0o100000;

export const STATE_XATTR = "user.txtfs.state";

export const S_IFDIR = 0o040000;

export const S_IFLNK = 0o120000;

export function unsentName(name: string): string {
  let stem = name;
  while (Buffer.byteLength(`${stem}.unsent.99`, "utf8") > 255) stem = stem.slice(0, -1);
  return `${stem}.unsent`;
}

export function carries(
  body: { context?: string; tags?: string[] },
  meta: { context?: string; tags?: string[] },
): boolean {
  const same = meta.tags === undefined || JSON.stringify(meta.tags) === JSON.stringify(body.tags);
  return same && (meta.context === undefined || meta.context === body.context);
}

export function checkName(name: string): void {
  if (Buffer.byteLength(name, "utf8") > 255) throw fail("ENAMETOOLONG");
}

export type Base = { etag: string; hash: string } | null;

export function baseOf(meta: Pick<TxtFile, "etag" | "contentHash"> | null | undefined): Base {
  return meta ? { etag: meta.etag, hash: meta.contentHash } : null;
}

export function isTransient(err: unknown): boolean {
  return (
    err instanceof NetworkError || (err instanceof ApiError && (err.status >= 500 || err.status === 429))
  );
}

export { BoundedMap } from "./boundedMap.ts";

export class VfsCore {
  delivery!: Delivery;
  io!: OpenFiles;
  names!: Namespace;
  claims!: Claims;
  rebase!: Conflicts;
  attrs!: Attributes;

  readonly tree = new Tree();
  readonly cache: ContentCache;
  readonly client: TxtfsClient;
  readonly log: Logger;
  readonly opts: VfsOptions;
  /** What may change through this mount (--read-only, the key's scopes, roles). */
  readonly access: Access;
  readonly local: LocalFiles;
  readonly follower: ChangeFollower;
  /** Creates of ours on their way: the feed's records of what they made wait for their answers. */
  readonly creating = new CreatesOnTheirWay();
  readonly handles = new Map<number, Handle>();
  readonly openNotes = new Map<FileNode, OpenNote>();
  readonly openSidecars = new Map<SidecarTarget, OpenSidecar>();
  readonly sidecars: Sidecars;
  readonly prefetch: FolderPrefetch;
  readonly journal: Journal;
  /** Bodies of notes with a journalled (not yet delivered) write: what reads must see. */
  readonly overlay = new Map<FileNode, Buffer>();
  /**
   * Notes renamed here whose journal entry is not written yet (it waits while the journal is busy,
   * e.g. with an fdatasync), by how many such renames: they already show at their new place.
   */
  readonly renaming = new Map<FileNode, number>();
  /** Folders made here and not created on the service yet, by their journal key. */
  readonly pendingDirs = new Map<string, DirNode>();
  stopped = false;
  nextFd = 1;
  readonly conflicts: string[] = [];
  readonly pins: Pins;
  /** Refused saves and metadata, reachability: what `txtfs sync` and `txtfs status` report. */
  readonly reports: Reports;
  readonly alwaysLocal: ReadonlySet<string>;
  readonly times: NoteTimes;
  /** Modes and folder times: this device's (meta/deviceAttrs.ts). */
  readonly deviceAttrs: DeviceAttrs;

  constructor(opts: VfsOptions) {
    this.opts = opts;
    this.access = new Access(Boolean(opts.readOnly));
    this.client = opts.client;
    this.log = opts.logger;
    this.cache = new ContentCache(opts.cacheSize, opts.cacheDir);
    this.local = new LocalFiles(opts.cacheDir, (err) =>
      this.log.error({ err }, "could not save the local-files manifest"),
    );
    this.journal = new Journal(opts.cacheDir);
    this.alwaysLocal = new Set([...ALWAYS_LOCAL_DIRS, ...(opts.localDirs ?? [])]);
    this.times = new NoteTimes(opts.cacheDir, (err) => this.log.error({ err }, "could not save note times"));
    this.deviceAttrs = new DeviceAttrs(opts.cacheDir, (err) =>
      this.log.error({ err }, "could not save modes and folder times"),
    );
    this.tree.onFolderTimes = (dir) => this.attrs.keepFolderAttrs(dir);
    this.sidecars = new Sidecars(this.client, this.tree);
    this.tree.lifecycle = (node, event) => decide(noteState(this, node), event);
    this.tree.placement = (meta, node) => {
      if (!node) return { meta };
      // A rename of ours not on the service yet: journalled (by id or, for a note whose create is
      // just being delivered, by its create key), or its entry still waiting for the journal.
      const pending =
        this.journal.get(meta.id) ??
        this.journal.get(Journal.keyOf({ fileId: null, createKey: node.createKey }));
      if (!pending?.move && !this.renaming.has(node)) return { meta };
      return { meta: { ...meta, name: node.remoteName, folderId: node.parent.id }, parent: node.parent };
    };
    this.follower = new ChangeFollower(this.client, this.tree, this.cache, this.log, opts.pollWait ?? 25);
    this.reports = new Reports(this.log);
    this.follower.onReach = (reachable) => this.reports.reachability(reachable);
    this.follower.holds = (change) => this.creating.mayHaveMadeRecord(change, this.tree);
    this.pins = new Pins({
      client: this.client,
      cacheDir: opts.cacheDir,
      deviceId: opts.deviceId,
      logger: this.log,
    });
    this.prefetch = new FolderPrefetch({
      client: this.client,
      cache: this.cache,
      tree: this.tree,
      pins: this.pins,
      log: this.log,
      cacheSize: opts.cacheSize,
    });
  }

  /** `name`, or `name.1`, `name.2`... whichever is free in `dir`. */
  freeName(dir: DirNode, name: string): string {
    let candidate = name;
    for (let n = 1; dir.children.has(candidate); n++) candidate = `${name}.${n}`;
    return candidate;
  }

  find(path: string): Node {
    const node = this.tree.lookup(path);
    if (!node) throw fail("ENOENT");
    return node;
  }

  findDir(path: string): DirNode {
    const node = this.find(path);
    if (node.kind !== "dir") throw fail("ENOTDIR");
    return node;
  }

  /** Attributes changed outside the tree's own changes (sizes of saves on their way): of `node`, or of anything. */
  attrsChanged(node?: Node): void {
    this.tree.onChange(node);
  }

  /**
   * A piece of the current body of a note when it is at hand (its save on its way, or the cached
   * version it has now), without reading the rest; undefined otherwise (then `body`).
   */
  bodyPiece(node: FileNode, position: number, length: number): Buffer | undefined {
    const journalled = this.overlay.get(node);
    if (journalled) return journalled.subarray(position, position + length);
    if (!node.id || this.journal.get(journalKey(node))?.append) return undefined;
    return this.cache.freshRange(node.id, node.meta?.etag, position, length);
  }

  /**
   * The current body of a note: cache, or a conditional GET (304 moves no body). Appends on their
   * way (`file.append`) go first, and the body is the version they made on the service: what a
   * reader sees is never a version the service does not have (a remote edit may have come
   * between). That version is cached when they went onto the cached one (appendDelivered).
   */
  async body(node: FileNode): Promise<Buffer> {
    handlingBody(node.dirtySize ?? node.meta?.size ?? 0);
    const journalled = this.overlay.get(node);
    if (journalled) return journalled;
    if (this.journal.get(journalKey(node))?.append) {
      const shown = await this.delivery.settle(node).then(
        () => undefined,
        (err: unknown) => this.appendsAsWhole(node, err),
      );
      if (shown) return shown;
    }
    if (!node.id) return this.openNotes.get(node)?.content ?? Buffer.alloc(0);
    this.prefetch.opened(node);
    const etag = node.meta?.etag;
    const cached = this.cache.fresh(node.id, etag);
    if (cached) return this.cache.count(cached, true);
    const kept = await this.pins.read(node.id, etag);
    if (kept && etag) {
      this.cache.set(node.id, etag, kept);
      return this.cache.count(kept, true);
    }
    const pending = this.prefetch.missing(node.parent);
    if (pending) {
      await pending;
      const now = this.cache.fresh(node.id, node.meta?.etag);
      if (now) return this.cache.count(now, false); // downloaded with its folder
    }
    const old = this.cache.get(node.id);
    try {
      let detail = await this.client.readFile(node.id, old?.etag);
      const current = detail ? undefined : old!.body();
      if (current) return this.cache.count(current, true); // 304: our copy is current
      // ... but overwritten in the ring meanwhile: the body again (no 304 without an ETag)
      detail ??= (await this.client.readFile(node.id))!;
      const body = this.cache.set(node.id, detail.etag, ownBytes(detail.content));
      this.tree.upsertFile(withoutContent(detail));
      await this.pins.remember(node, detail.etag, body);
      return this.cache.count(body, false);
    } catch (err) {
      // Offline: an older cached copy is better than no copy; a pinned note's kept body is one.
      const older = old && isTransient(err) ? old.body() : undefined;
      if (older) return this.cache.count(older, true);
      const keptAny = isTransient(err) ? await this.pins.read(node.id, undefined, true) : undefined;
      if (keptAny) return this.cache.count(keptAny, true);
      // Gone from the service: its delete was not seen here (the feed has not brought it yet). It
      // goes as the feed's would (lifecycle.ts: a note with a save of ours waiting stays, and that
      // save creates it again), so no name stays listed that no open can ever read.
      if (err instanceof ApiError && err.status === 404) this.tree.remoteDelete(node.id);
      throw toVfsError(err);
    }
  }

  checkWritable(node: Node): void {
    this.access.checkWritable(node);
  }

  get writeBehind(): boolean {
    return this.opts.writeBehind !== false && !this.stopped;
  }

  /**
   * The size stat shows while a note has saves on their way: its newest local body (an open
   * buffer, else the last journalled save), or nothing once the service has the newest.
   */
  refreshDirtySize(node: FileNode): void {
    const open = this.openNotes.get(node);
    // An open buffer with unsaved writes, or one the note no longer shows (detached): every read
    // of the note goes to that buffer while it is open.
    const buffer = open?.content && (open.dirty || open.detached) ? open.content : undefined;
    node.dirtySize = buffer?.length ?? this.overlay.get(node)?.length ?? this.appendedSize(node);
    this.attrsChanged(node);
  }

  /**
   * The service cannot be reached and appends to `node` wait: when the version they go onto is
   * cached, they become one save of the whole note on that version, so it reads as written here
   * offline too (and, should the note have changed remotely meanwhile, that save is kept as a
   * conflict copy, as any save built on an older version). Otherwise `err` stands.
   */
  private async appendsAsWhole(node: FileNode, err: unknown): Promise<Buffer> {
    const appends = this.journal.get(journalKey(node));
    const base = node.id && appends?.append ? this.cache.fresh(node.id, node.meta?.etag) : undefined;
    if (!base) throw err;
    const whole = Buffer.concat([base, Buffer.from(appends!.content ?? "", "utf8")]);
    await this.delivery.journalSave(node, whole, baseOf(node.meta));
    return whole;
  }

  /** Whether appends to `node` wait in the journal or in an open handle (their place is the service's end). */
  appendsOnTheirWay(node: FileNode): boolean {
    return (
      this.journal.get(journalKey(node))?.append === true || this.openNotes.get(node)?.tail !== undefined
    );
  }

  /** The size of a note only appended to (its body never loaded): the service's plus what is on its way. */
  appendedSize(node: FileNode): number | undefined {
    const entry = this.journal.get(journalKey(node));
    const journalled = entry?.append ? Buffer.byteLength(entry.content ?? "", "utf8") : 0;
    const open = this.openNotes.get(node)?.tail?.length ?? 0;
    return journalled || open ? (node.meta?.size ?? 0) + journalled + open : undefined;
  }

  /** Where a journal entry's item lives: its folder, or the folder made here it waits for. */
  parentFor(entry: JournalEntry): DirNode {
    const pending = entry.parentKey ? this.pendingDirs.get(entry.parentKey) : undefined;
    return pending ?? this.tree.dirs.get(entry.folderId ?? "") ?? this.tree.root;
  }

  /** The tree node a journal entry writes to (re-created after a restart when needed). */
  nodeFor(entry: JournalEntry): FileNode {
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

  /** Where an item in `dir` goes on the service: its id, or the key of its create on the way. */
  placeOf(dir: DirNode): { folderId: string | null; parentKey?: string } {
    if (dir.localOnly) throw new Error(`bug: ${this.tree.pathOf(dir)} is local; materialize it first`);
    return dir.createKey ? { folderId: null, parentKey: dirKey(dir) } : { folderId: dir.id };
  }

  /** A folder made here whose create has not reached the service yet (its children wait for it). */
  isPending(dir: DirNode): boolean {
    return dir.createKey !== undefined && dir.id === null;
  }

  newLocal(dir: DirNode, name: string, mode: number, body?: Buffer): LocalNode {
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

  localEntries(): ManifestEntry[] {
    const dirs: ManifestEntry[] = [...this.tree.localDirs].map((dir) => ({
      path: this.tree.pathOf(dir),
      blob: "",
      mode: dir.mode ?? 0o755,
      mtimeMs: dir.localMtimeMs ?? (Date.parse(dir.meta?.updatedAt ?? "") || 0),
      atimeMs: dir.localAtimeMs,
      uid: dir.uid,
      gid: dir.gid,
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
        keptNote: node.keptNote,
        link: node.link,
        special: node.special,
        rdev: node.rdev,
        uid: node.uid,
        gid: node.gid,
      })),
    );
  }

  /** Records the local files now (a program closed one it wrote). */
  flushLocal(): void {
    try {
      this.local.flush();
    } catch (err) {
      this.log.error({ err }, "could not save the local-files manifest");
    }
  }

  /** Records local files in the manifest, a moment later (see LocalFiles.save). */
  saveLocal(): void {
    this.local.save(() => this.localEntries());
  }

  restoreLocal(entry: ManifestEntry): void {
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
        mode: entry.mode === 0o755 ? undefined : entry.mode,
        localMtimeMs: entry.mtimeMs || undefined,
        localAtimeMs: entry.atimeMs,
        uid: entry.uid,
        gid: entry.gid,
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
      keptNote: entry.keptNote,
      uid: entry.uid,
      gid: entry.gid,
    };
    if (entry.ghostOf) this.tree.ghosted.add(entry.ghostOf.id);
    this.tree.addChild(home, node);
    if (entry.link !== undefined || entry.special !== undefined) {
      node.link = entry.link;
      node.special = entry.special;
      node.rdev = entry.rdev;
      node.size = entry.link === undefined ? 0 : Buffer.byteLength(entry.link, "utf8");
      return;
    }
    void stat(entry.blob)
      .then((s) => {
        node.size = s.size;
        this.attrsChanged();
      })
      .catch(() => this.tree.detach(node));
  }
}

import type { TxtfsClient } from "../client/api.ts";
import type { Logger } from "../lib/logger.ts";
import { Access } from "./access.ts";
import { type Clock, systemClock } from "./clock.ts";
import { ContentCache } from "./contentCache.ts";
import { CreatesOnTheirWay } from "./delivery/createsOnTheirWay.ts";
import { Journal, type JournalEntry } from "./delivery/journal.ts";
import { dirKey } from "./delivery/journalKeys.ts";
import { fail } from "./errors.ts";
import { FolderPrefetch } from "./folderPrefetch.ts";
import { ChangeFollower } from "./follower.ts";
import { ALWAYS_LOCAL_DIRS, type LocalDirKind, localDirKind } from "./local/localDirs.ts";
import { LocalFiles } from "./local/localFiles.ts";
import { LocalNodes } from "./local/localNodes.ts";
import { IGNORE_FILE, MountExcludes } from "./local/mountExcludes.ts";
import { DeviceAttrs } from "./meta/deviceAttrs.ts";
import { NoteTimes } from "./meta/noteTimes.ts";
import { Pins } from "./meta/pins.ts";
import { Sidecars, type SidecarTarget } from "./meta/sidecars.ts";
import { isNoteName } from "./names.ts";
import { type NoteSurroundings, Notes } from "./note.ts";
import type { OpenFile, OpenSidecar } from "./openFile.ts";
import type { VfsOptions } from "./options.ts";
import { Reports } from "./reports.ts";
import { type DirNode, type FileNode, type Node, Tree } from "./tree.ts";

export class VfsCore {
  readonly tree: Tree;
  readonly cache: ContentCache;
  readonly client: TxtfsClient;
  readonly log: Logger;
  readonly opts: VfsOptions;
  /** The wall clock every part reads (clock.ts). */
  readonly clock: Clock;
  /** What may change through this mount (--read-only, the key's scopes, roles). */
  readonly access: Access;
  readonly local: LocalFiles;
  readonly follower: ChangeFollower;
  /** Creates of ours on their way: the feed's records of what they made wait for their answers. */
  readonly createsOnTheirWay = new CreatesOnTheirWay();
  readonly handles = new Map<number, OpenFile>();
  readonly openSidecars = new Map<SidecarTarget, OpenSidecar>();
  readonly sidecars: Sidecars;
  readonly prefetch: FolderPrefetch;
  readonly journal: Journal;
  /** Each note's local write state (note.ts). */
  readonly notes: Notes;
  /** Folders made here and not created on the service yet, by their journal key. */
  readonly pendingDirs = new Map<string, DirNode>();
  /**
   * A note made here, put back from the journal after a restart, and the listed note of its name it
   * took the name from: that one may be what the create made (its answer lost), or a note of the
   * same name made elsewhere, which shows again beside it once the answer says so (NoteSend.created).
   */
  readonly shadowedBy = new Map<FileNode, FileNode>();
  /** The same for a folder made here: the listed folder of its name it took the name from. */
  readonly shadowedDirs = new Map<DirNode, DirNode>();
  stopped = false;
  nextFd = 1;
  /** Conflict copies made (paths), newest last. */
  readonly conflictCopies: string[] = [];
  readonly pins: Pins;
  /** Refused saves and metadata, reachability: what `txtfs sync` and `txtfs status` report. */
  readonly reports: Reports;
  readonly alwaysLocal: ReadonlySet<string>;
  /** What stays on this machine by pattern (the defaults, `.txtfsignore`, `--exclude`). */
  readonly excludes: MountExcludes;
  readonly times: NoteTimes;
  /** Modes and folder times: this device's (meta/deviceAttrs.ts). */
  readonly deviceAttrs: DeviceAttrs;
  /** The local-only files and folders and their manifest. */
  readonly localNodes: LocalNodes;

  /** `delivery`: whether a journal entry is on its way now (the Notes' `in-flight`; delivery/runningRound.ts). */
  constructor(opts: VfsOptions, delivery: Pick<NoteSurroundings, "onItsWay">) {
    this.opts = opts;
    this.clock = opts.clock ?? systemClock;
    this.access = new Access(Boolean(opts.readOnly));
    this.client = opts.client;
    this.log = opts.logger;
    this.cache = new ContentCache(opts.cacheSize, opts.cacheDir);
    this.local = new LocalFiles(opts.cacheDir, (err) =>
      this.log.error({ err }, "could not save the local-files manifest"),
    );
    this.journal = new Journal(opts.cacheDir, this.clock);
    this.notes = new Notes({
      journal: this.journal,
      clock: this.clock,
      onItsWay: (key) => delivery.onItsWay(key),
      changed: (node) => this.attrsChanged(node),
      keptTimes: (node) => (node.meta ? this.times.get(node.meta.id, node.meta.contentHash) : undefined),
    });
    this.tree = new Tree(this.notes);
    this.tree.clock = this.clock;
    this.alwaysLocal = new Set([...ALWAYS_LOCAL_DIRS, ...(opts.localDirs ?? [])]);
    this.excludes = new MountExcludes({
      patterns: opts.excludes ?? [],
      ignoreFile: () => {
        const node = this.tree.root.children.get(IGNORE_FILE);
        if (node?.kind !== "local" || !node.blob) return undefined;
        return {
          version: `${node.blob} ${node.size} ${node.mtimeMs}`,
          read: () => this.local.read(node.blob),
        };
      },
      log: this.log,
    });
    this.times = new NoteTimes(opts.cacheDir, (err) => this.log.error({ err }, "could not save note times"));
    this.deviceAttrs = new DeviceAttrs(opts.cacheDir, (err) =>
      this.log.error({ err }, "could not save modes and folder times"),
    );
    this.localNodes = new LocalNodes(this.tree, this.local, this.log);
    this.sidecars = new Sidecars(this.client, this.tree);
    this.tree.placement = (meta, node) => {
      if (!node) return { meta };
      // A rename of ours not on the service yet: journalled (by id or, for a note whose create is
      // just being delivered, by its create key), or its entry still waiting for the journal.
      const pending =
        this.journal.get(meta.id) ??
        this.journal.get(Journal.keyOf({ fileId: null, createKey: node.createKey }));
      if (!pending?.move && !node.note?.renaming) return { meta };
      return { meta: { ...meta, name: node.remoteName, folderId: node.parent.id }, parent: node.parent };
    };
    this.follower = new ChangeFollower(this.client, this.tree, this.cache, this.log, opts.pollWait ?? 25);
    this.reports = new Reports(this.log, this.clock);
    this.follower.onReach = (reachable) => this.reports.reachability(reachable);
    this.follower.holds = (change) => this.createsOnTheirWay.mayHaveMadeRecord(change, this.tree);
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

  /**
   * Whether a file named `name` in `dir` stays on this machine: not a note's name, or excluded
   * (local/mountExcludes.ts). Where a file may go up, this is asked; nothing else decides.
   */
  keptLocal(dir: DirNode, name: string): boolean {
    if (!isNoteName(name)) return true;
    const path = dir === this.tree.root ? `/${name}` : `${this.tree.pathOf(dir)}/${name}`;
    return this.excludes.match(path, false) !== undefined;
  }

  /**
   * The kind of local folder a folder named `name` made in (or moved to) `dir` is, if any: one
   * the exclude list matches keeps everything inside here, as `.git` does (local/localDirs.ts).
   */
  localDirKindOf(dir: DirNode, name: string): LocalDirKind | undefined {
    const path = dir === this.tree.root ? `/${name}` : `${this.tree.pathOf(dir)}/${name}`;
    if (this.excludes.match(path, true)) return "always";
    return localDirKind(name, dir.localOnly, this.alwaysLocal);
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

  checkWritable(node: Node): void {
    this.access.checkWritable(node);
  }

  get writeBehind(): boolean {
    return this.opts.writeBehind !== false && !this.stopped;
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
      : this.notes.journalledCreate(entry.createKey)?.node;
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
    const taken = parent.children.get(node.name);
    this.tree.addChild(parent, node);
    if (!entry.fileId && taken?.kind === "file" && taken.id) this.shadowedBy.set(node, taken);
    if (entry.fileId) this.tree.files.set(entry.fileId, node);
    return node;
  }

  /** Where an item in `dir` goes on the service: its id, or the key of its create on the way. */
  placeOf(dir: DirNode): { folderId: string | null; parentKey?: string } {
    if (dir.localOnly) throw new Error(`bug: ${this.tree.pathOf(dir)} is local; materialize it first`);
    return dir.createKey ? { folderId: null, parentKey: dirKey(dir) } : { folderId: dir.id };
  }

  /**
   * A note made here and put back from the journal at a restart over a listed note of its name
   * (nodeFor) was created, removed or renamed before its create went: the listed one shows again
   * beside it, unless it is what the create made (`madeId`). Hidden, it would stay out of the
   * listing for good while still known by its id.
   */
  unshadowNote(node: FileNode, madeId?: string): void {
    const shadowed = this.shadowedBy.get(node);
    this.shadowedBy.delete(node);
    const parent = shadowed?.parent;
    if (!shadowed?.id || shadowed.id === madeId || !parent || this.tree.files.get(shadowed.id) !== shadowed)
      return;
    if (![...parent.children.values()].includes(shadowed)) this.tree.addChild(parent, shadowed, true);
  }

  /**
   * A folder made here and put back from the journal at a restart was created, refused or
   * removed: the listed folder of its name it took the name from shows again beside it, unless
   * it is what the create made (`madeId`).
   */
  unshadowDir(dir: DirNode, madeId?: string): void {
    const shadowed = this.shadowedDirs.get(dir);
    this.shadowedDirs.delete(dir);
    const parent = shadowed?.parent;
    if (!shadowed?.id || shadowed.id === madeId || !parent || this.tree.dirs.get(shadowed.id) !== shadowed)
      return;
    if (![...parent.children.values()].includes(shadowed)) this.tree.addChild(parent, shadowed, true);
  }

  /** A folder made here whose create has not reached the service yet (its children wait for it). */
  isPending(dir: DirNode): boolean {
    return dir.createKey !== undefined && dir.id === null;
  }
}

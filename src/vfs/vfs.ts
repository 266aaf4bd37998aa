// The filesystem semantics of the mount, with no FUSE in sight: paths in, bytes and errno names out.
// This is the facade the FUSE adapter calls; each concern lives in its own module:
//
//   core.ts              the state the parts share (tree, caches, journal, notes, descriptors)
//   note.ts              one note's local write state, its only writer, where it stands (`state`)
//                        and its events run through the table; the rule for `await`
//   lifecycle.ts         a note's states and what each event does in each state (the table)
//   bodies.ts            where a note's bytes come from (its journalled save, cache, service)
//   open/                open files: the table (openFiles.ts), reads, writes and truncates,
//                        saves at flush, fsync and close (saves.ts)
//   kernelView.ts        what a kernel adapter needs beyond POSIX, to keep the kernel's caches right
//   namespace/           create and mkdir, unlink and rmdir, rename (a rename over a note is a save)
//   delivery/            the journal (log on disk), its delivery in order and in bulk, replay
//   conflicts.ts         keep-both copies; our own successive versions
//   local/               local-only files, folders kept local, claims (identity kept across rewrites)
//   attachments/         files that are not notes, on the service as attachments (bytes exact)
//   meta/                stat and times, xattrs, sidecars, pins (availability), note times
//   follower.ts          the change feed -> the tree; contentCache.ts: bodies by ETag
//   control/             `.txtfs/`: history, tags, related notes, search, comments as files
//                        (every operation on a path below it is handed there first)
//
// The parts are built in the constructor below, each given the others it calls (docs/architecture.md,
// "The vfs: its parts, who calls whom").

import { describeDamage } from "../lib/journalDamage.ts";
import { Attachments } from "./attachments/attachments.ts";
import { Bodies } from "./bodies.ts";
import { Conflicts } from "./conflicts.ts";
import { ControlDir } from "./control/control.ts";
import { CONTROL_DIR } from "./control/entries.ts";
import { VfsCore } from "./core.ts";
import { Delivery } from "./delivery/deliver.ts";
import { VfsError } from "./errors.ts";
import { type KernelView, VfsKernelView } from "./kernelView.ts";
import { Claims } from "./local/claims.ts";
import { isSpecial, type Owner, SpecialFiles } from "./local/specialFiles.ts";
import { Attributes } from "./meta/attributes.ts";
import { isNoteName } from "./names.ts";
import { Creates } from "./namespace/creates.ts";
import { Removals } from "./namespace/removals.ts";
import { Renames } from "./namespace/renames.ts";
import { Replacements } from "./namespace/replacements.ts";
import { OpenFiles } from "./open/openFiles.ts";
import { Reads } from "./open/reads.ts";
import { Saves } from "./open/saves.ts";
import { Writes } from "./open/writes.ts";
import type { VfsOptions } from "./options.ts";
import type { RefusedSave } from "./reports.ts";
import type { Stat } from "./stat.ts";
import type { NoteMeta } from "./tree.ts";

export { conflictName } from "./conflicts.ts";
export type { VfsOptions } from "./options.ts";
export type { RefusedSave } from "./reports.ts";
export type { Stat } from "./stat.ts";

export class Vfs {
  private readonly c: VfsCore;
  private readonly delivery: Delivery;
  private readonly openFiles: OpenFiles;
  private readonly reads: Reads;
  private readonly writes: Writes;
  private readonly saves: Saves;
  private readonly creates: Creates;
  private readonly removals: Removals;
  private readonly renames: Renames;
  private readonly claims: Claims;
  private readonly attachments: Attachments;
  private readonly attributes: Attributes;
  private readonly control: ControlDir;
  private readonly special: SpecialFiles;
  /** What a kernel adapter needs to keep the kernel's caches right (kernelView.ts). */
  readonly kernel: KernelView;

  /**
   * The parts, each built with the others it calls. Parts call each other both ways (delivery keeps
   * times through attributes, attributes settle a note through delivery): a part built before the
   * one it calls gets that call as a function that reaches the later part, which exists by the
   * time any operation runs.
   */
  constructor(opts: VfsOptions) {
    const c = new VfsCore(opts, { onItsWay: (key) => delivery.onItsWay(key) });
    const conflicts: Conflicts = new Conflicts(c);
    const delivery: Delivery = new Delivery(c, {
      conflicts,
      attributes: {
        keepFolderAttrs: (dir) => attributes.keepFolderAttrs(dir),
        rememberTimes: (...args) => attributes.rememberTimes(...args),
        showRemoteVersion: (...args) => attributes.showRemoteVersion(...args),
      },
      claims: {
        created: (...args) => claims.created(...args),
        dropTombstone: (...args) => claims.dropTombstone(...args),
      },
      renames: { placeLocally: (...args) => renames.placeLocally(...args) },
      attachments: { send: (entry) => attachments.send(entry) },
    });
    const attachments = new Attachments(c, delivery);
    const bodies: Bodies = new Bodies(c, delivery);
    const attributes: Attributes = new Attributes(c, {
      attachments,
      delivery,
      saves: {
        needsUpload: (...args) => saves.needsUpload(...args),
        upload: (...args) => saves.upload(...args),
      },
    });
    const claims: Claims = new Claims(c, {
      attachments,
      delivery,
      attributes,
      conflicts,
      creates: {
        materialize: (...args) => creates.materialize(...args),
        newNote: (...args) => creates.newNote(...args),
      },
    });
    const openFiles = new OpenFiles(c, { attributes, attachments });
    const reads = new Reads(c, { attributes, attachments, bodies, openFiles });
    const saves: Saves = new Saves(c, {
      attachments,
      attributes,
      bodies,
      claims,
      delivery,
      openFiles,
      reads,
    });
    const writes = new Writes(c, { attachments, attributes, bodies, openFiles, reads, saves });
    const creates: Creates = new Creates(c, { attributes, claims, delivery, openFiles, writes });
    const removals = new Removals(c, { attachments, attributes, claims, conflicts, delivery });
    const replacements = new Replacements(c, { attributes, bodies, delivery, openFiles, removals, saves });
    const renames: Renames = new Renames(c, {
      attachments,
      attributes,
      bodies,
      claims,
      conflicts,
      creates,
      delivery,
      openFiles,
      reads,
      removals,
      replacements,
    });
    c.tree.onFolderTimes = (dir) => attributes.keepFolderAttrs(dir);
    this.c = c;
    this.delivery = delivery;
    this.openFiles = openFiles;
    this.reads = reads;
    this.writes = writes;
    this.saves = saves;
    this.creates = creates;
    this.removals = removals;
    this.renames = renames;
    this.claims = claims;
    this.attachments = attachments;
    this.attributes = attributes;
    this.control = new ControlDir(c, { delivery, bodies });
    this.special = new SpecialFiles(c, { attributes, claims });
    this.kernel = new VfsKernelView(c, { control: this.control, attributes, reads, saves, writes });
  }

  get tree() {
    return this.c.tree;
  }
  get cache() {
    return this.c.cache;
  }
  get pins() {
    return this.c.pins;
  }
  /** Why nothing may change through this mount (said when it is mounted); undefined when it may. */
  get readOnlyBecause(): string | undefined {
    return this.c.access.readOnlyBecause;
  }

  /** Conflict copies made (paths), newest last. */
  get conflicts(): readonly string[] {
    return this.c.conflictCopies;
  }
  /** Saves the service refused for good (newest last, bounded). */
  get refused(): readonly RefusedSave[] {
    return this.c.reports.refused;
  }

  /** Loads the whole listing and the local files, then follows the change feed. */
  async start(onProgress?: (message: string) => void): Promise<void> {
    const c = this.c;
    onProgress?.("listing the account...");
    // Read in batches as it arrives, each record kept only in part (tree.records.keep): a listing of
    // 100,000 notes is never held whole, as text nor parsed.
    const files: NoteMeta[] = [];
    const index = await c.client.flatIndexInBatches((batch) => {
      for (const f of batch) files.push(c.tree.records.keep(f));
    });
    for (const o of index.owners ?? []) c.tree.setOwner(o.id, o.email);
    c.access.learn(index.scopes);
    c.tree.load(index.folders, files);
    const { cursor } = index;
    const notes = files.length;
    const folders = index.folders.length;
    c.times.load();
    await this.attachments.load();
    onProgress?.(`${notes} notes in ${folders} folders`);
    // Folders made here first (journal), then what is kept locally inside them.
    const journalled = await c.journal.load();
    this.delivery.restoreJournal(journalled);
    this.attachments.restoreJournal(journalled);
    const damaged = c.journal.health().damaged;
    if (damaged)
      c.log.error(
        { keptAs: damaged.keptAs, recovered: damaged.recovered, dropped: describeDamage(damaged) },
        "the journal was damaged: the saves that could be read were recovered, the rest is named here and the damaged log kept aside",
      );
    const kept = await c.local.init();
    // Local folders before what is in them.
    kept.sort((a, b) => Number(!a.dir) - Number(!b.dir) || a.path.length - b.path.length);
    for (const entry of kept) {
      if (this.attachments.restored(entry)) continue;
      const node = c.localNodes.restore(this.attachments.freeName(entry));
      if (node) this.attachments.restoredNode(node);
    }
    await this.attachments.started();
    this.attributes.restoreKept();
    await this.claims.adoptKeptText();
    // From now on a change inside a folder moves its times (what was restored above is none).
    c.tree.followsFolderTimes = true;
    await c.pins.init();
    // The service's record of this device's states wins (fetched after the mount is up: no delay).
    void c.pins.loadRemote().finally(() =>
      c.pins.startRefreshing(
        () => c.tree.files.values(),
        () => this.attachments.keepPinned(),
      ),
    );
    if (this.attachments.supported) c.follower.attachments = this.attachments;
    c.follower.start(cursor);
  }

  /** Flushes every pending write (to the service, or to the journal when it is unreachable). */
  async stop(): Promise<void> {
    const c = this.c;
    c.follower.stop();
    await this.attachments.saveFresh().catch((err) => c.log.error({ err }, "could not save new attachments"));
    this.attachments.stop();
    await c.pins.stop();
    for (const { open } of [...c.notes.open()]) {
      if (open?.dirty)
        await this.saves.upload(open).catch((err) => c.log.error({ err }, "final upload failed"));
    }
    await this.delivery.drain();
    c.stopped = true;
    try {
      c.local.flush();
    } catch (err) {
      c.log.error({ err }, "could not save the local-files manifest");
    }
    this.delivery.stopTimers();
    c.times.flush();
    c.journal.close();
    c.cache.close();
    if (c.journal.size)
      c.log.warn({ pending: c.journal.size }, "writes still journalled; they are sent at the next mount");
  }

  /** Counters for `txtfs status` and benchmarks. */
  stats() {
    const c = this.c;
    return {
      notes: c.tree.files.size,
      folders: c.tree.dirs.size,
      cacheBytes: c.cache.bytes,
      cacheEntries: c.cache.entries,
      requests: c.client.requests,
      /** Of them, the change feed's long-polls (how many depends on when others' changes come). */
      feedPolls: c.client.requestsByKind["GET /api/v1/changes"] ?? 0,
      cursor: c.follower.cursor,
      dirty: [...c.notes.open()].filter((n) => n.open?.dirty).length + c.journal.size,
      conflicts: c.conflictCopies.length,
      localFiles: [...c.tree.locals].filter((n) => !n.attachment).length,
      keptOffline: c.pins.keptBodies,
    };
  }

  /**
   * What a monitoring script reads (`txtfs status --json`, over the control socket; like rclone's
   * `rc vfs/stats`): the cache's hits and misses, requests by kind, pending saves and the age of
   * the oldest, the change feed's position and lag.
   */
  metrics(now = this.c.clock.now()) {
    const c = this.c;
    const journalled = c.journal.pending();
    const open = [...c.notes.open()].filter((n) => n.open?.dirty).length;
    const oldest = Math.min(...journalled.map((e) => Date.parse(e.savedAt)).filter(Number.isFinite));
    const served = c.cache.served;
    const reads = served.hits + served.misses;
    return {
      at: new Date(now).toISOString(),
      cache: {
        ...served,
        hitRatio: reads ? served.hits / reads : null,
        bytes: c.cache.bytes,
        entries: c.cache.entries,
        keptOnDisk: c.pins.keptBodies,
      },
      requests: {
        total: c.client.requests,
        byKind: { ...c.client.requestsByKind },
        bytesSent: c.client.bytesSent,
        bytesReceived: c.client.bytesReceived,
      },
      saves: {
        pending: journalled.length + open + this.attachments.freshWaiting,
        journalled: journalled.length,
        unsavedOpen: open,
        oldestPendingSeconds: Number.isFinite(oldest) ? Math.max(0, (now - oldest) / 1000) : null,
        refused: c.reports.refused.length,
        conflicts: c.conflictCopies.length,
      },
      feed: { ...c.follower.position(now), unreachableSince: this.unreachableSince() },
      journal: c.journal.health(),
    };
  }

  /** Why the journal cannot be written now (the cache dir's disk full, read-only), and damage found at start. */
  journalHealth() {
    return this.c.journal.health();
  }

  /** Since when the service cannot be reached (ISO time), or null while it answers. */
  unreachableSince(): string | null {
    const since = this.c.reports.unreachableSince;
    return since === undefined ? null : new Date(since).toISOString();
  }

  /** The last refused metadata write per path, oldest first (`txtfs status`). */
  refusedMetadata(): { path: string; reason: string; at: string }[] {
    return [...this.c.reports.refusedMeta].map(([path, r]) => ({ path, ...r }));
  }

  /** What the service refused since the last call (`txtfs sync` reports each once, and fails). */
  takeRefused(): RefusedSave[] {
    return this.c.reports.unreported.splice(0);
  }

  /** Every local-only file and why it is not a note on the service (`txtfs status`). */
  localOnly(): { path: string; why: string }[] {
    return [...this.c.tree.locals].flatMap((node) => {
      if (this.attachments.goesUp(node)) return []; // on the service (or on its way), as an attachment
      const path = this.c.tree.pathOf(node);
      const excluded = () => this.c.excludes.match(path, false)?.pattern;
      let why: string;
      if (excluded() !== undefined) why = `excluded by ${excluded()}`;
      else if (node.parent.localOnly === "always") why = "inside a folder whose content stays local";
      else if (node.link !== undefined) why = "a symbolic link: the service has none";
      else if (node.special)
        why = `a ${node.special === "device" ? "device node" : node.special}: the service has none`;
      else if (isNoteName(node.name)) why = "not valid UTF-8 (a note is text)";
      else why = "not a .md or .txt name";
      return [{ path, why }];
    });
  }

  /** The `.txtfsignore` lines that are not patterns (skipped), for `txtfs status`. */
  excludeProblems(): string[] {
    this.c.excludes.match("/", true); // reads the file again if it changed
    return [...this.c.excludes.problems];
  }

  /**
   * Registers who must hear when a path shows what no program here wrote: a remote edit, a note
   * created, renamed or moved elsewhere, our save kept as a conflict copy (the kernel may still
   * hold that path's previous size: staleWindow.ts). No path: any path may.
   */
  onRemoteChange(listener: (path?: string) => void): void {
    this.c.tree.onRemoteChange = (changed) =>
      listener(changed?.parent ? this.c.tree.pathOf(changed) : undefined);
  }

  /** SIGHUP: the listing is fetched again and every cached attribute dropped. */
  relist(): void {
    this.c.follower.requestRelist();
    this.c.tree.onChange?.(undefined);
  }

  /** Waits until every save is on the service, or it is found unreachable: the saves still journalled. */
  async drain(): Promise<number> {
    await this.saves.releasesDone(); // a closed file's save may be made at its release
    await this.attachments.saveFresh();
    return this.delivery.drain();
  }

  // ---------------------------------------------------------------- what is there (memory only)

  getattr(path: string): Promise<Stat> {
    if (ControlDir.owns(path)) return this.control.getattr(path);
    return this.attributes.getattr(path);
  }
  /** A folder of the tree (synchronous); paths below `.txtfs/` go to `readdirControl`. */
  readdir(path: string): string[] {
    const names = this.attributes.readdir(path);
    if (path !== "/") return names;
    // `.txtfs` is the control directory's name at the root, whatever else is named so.
    const shown = names.filter((n) => n !== CONTROL_DIR);
    return this.c.opts.showControlDir ? [...shown, CONTROL_DIR] : shown;
  }
  /** Whether a path is in the control directory (`.txtfs/`): its listings are asynchronous. */
  isControl(path: string): boolean {
    return ControlDir.owns(path);
  }
  readdirControl(path: string): Promise<string[]> {
    return this.control.readdir(path);
  }
  readlink(path: string): Promise<string> {
    if (ControlDir.owns(path)) return this.control.readlink(path);
    return this.now(() => this.special.readlink(path));
  }
  /** In `.txtfs/` a link is a verb (tags, related notes); elsewhere a link kept on this device. */
  symlink(target: string, path: string, owner?: Owner): Promise<void> {
    if (ControlDir.owns(path)) return this.control.symlink(target, path);
    return this.durably(async () => this.special.symlink(target, path, owner));
  }
  /** A fifo, socket or device node (`mode` with its type bits), kept on this device. */
  mknod(path: string, mode: number, rdev: number, owner?: Owner): Promise<void> {
    if (ControlDir.owns(path)) return Promise.reject(new VfsError("EPERM"));
    return this.durably(async () => this.special.mknod(path, mode, rdev, owner));
  }
  statfs(): ReturnType<Attributes["statfs"]> {
    return this.attributes.statfs();
  }
  // ---------------------------------------------------------------- open files

  open(path: string, flags: number): Promise<number> {
    if (ControlDir.owns(path)) return this.control.open(path, flags);
    // The kernel follows links and opens fifos and sockets itself: only a name it still remembers
    // as something else comes here.
    if (isSpecial(this.c.tree.lookup(path))) return Promise.reject(new VfsError("ELOOP"));
    return this.openFiles.open(path, flags);
  }
  /**
   * fstat: the open file's own attributes, wherever its name went since it was opened (moved,
   * removed, its note removed under its sidecar). Undefined for a control file or a folder: by path.
   */
  fstat(fd: number): Stat | undefined {
    if (this.control.ownsFd(fd)) return undefined;
    const h = this.openFiles.handle(fd);
    if (h.kind === "sidecar") return this.attributes.sidecarStat(h.open.sidecar, h.open.content);
    if (h.kind === "note") return this.attributes.statOf(h.open.node);
    if (h.kind === "local") return this.attributes.statOf(h.node);
    return undefined;
  }
  read(fd: number, length: number, position: number): Promise<Buffer> {
    if (this.control.ownsFd(fd)) return this.control.read(fd, length, position);
    return this.reads.read(fd, length, position);
  }
  write(fd: number, data: Buffer, position: number): Promise<number> {
    if (this.control.ownsFd(fd)) return this.control.write(fd, data);
    return this.writes.write(fd, data, position);
  }
  ftruncate(fd: number, size: number): Promise<void> {
    if (this.control.ownsFd(fd)) return Promise.reject(new VfsError("EINVAL"));
    return this.writes.ftruncate(fd, size);
  }
  truncate(path: string, size: number): Promise<void> {
    if (ControlDir.owns(path)) return this.control.truncate(path);
    return this.writes.truncate(path, size);
  }
  flush(fd: number): Promise<void> {
    if (this.control.ownsFd(fd)) return this.control.flush(fd);
    return this.saves.flush(fd);
  }
  fsync(fd: number): Promise<void> {
    if (this.control.ownsFd(fd)) return Promise.resolve();
    return this.saves.fsync(fd);
  }
  release(fd: number): Promise<void> {
    if (this.control.ownsFd(fd)) return this.control.release(fd);
    return this.saves.release(fd);
  }

  // ---------------------------------------------------------------- names

  async create(path: string, mode: number, owner?: Owner): Promise<number> {
    if (ControlDir.owns(path)) throw new VfsError("EROFS");
    const made = this.c.tree.lookup(path) === undefined; // else it is opened and emptied: its mode stays
    const fd = await this.creates.create(path, mode);
    if (made) this.attributes.madeWith(path, mode, owner);
    return fd;
  }
  // What these change among local-only files and folders is on disk before they return, as a
  // close of a written file is: `sed -i.bak` then a kill -9 of the daemon keeps `a.md.bak`, an `rm`
  // does not come back.
  mkdir(path: string, mode = 0o755, owner?: Owner): Promise<void> {
    if (ControlDir.owns(path)) return this.control.mkdir(path);
    return this.durably(async () => {
      await this.creates.mkdir(path);
      this.attributes.madeWith(path, mode, owner);
    });
  }
  rmdir(path: string): Promise<void> {
    if (ControlDir.owns(path)) return this.control.rmdir(path);
    return this.durably(() => this.removals.rmdir(path));
  }
  unlink(path: string): Promise<void> {
    if (ControlDir.owns(path)) return this.control.unlink(path);
    return this.durably(() => this.removals.unlink(path));
  }
  rename(from: string, to: string): Promise<void> {
    if (ControlDir.owns(from) || ControlDir.owns(to)) return Promise.reject(new VfsError("EPERM"));
    return this.durably(() => this.renames.rename(from, to));
  }

  /** A synchronous step's outcome as a promise (its VfsError a rejection). */
  private now<T>(step: () => T): Promise<T> {
    try {
      return Promise.resolve(step());
    } catch (err) {
      return Promise.reject(err);
    }
  }

  private async durably(op: () => Promise<void>): Promise<void> {
    try {
      await op();
    } finally {
      this.c.localNodes.flush(); // nothing to write unless local files changed
    }
  }

  // ---------------------------------------------------------------- attributes

  /** Sets the times a program asked for (undefined: UTIME_OMIT, that one stays). */
  utimens(path: string, atime: number | undefined, mtime: number | undefined): Promise<void> {
    if (ControlDir.owns(path)) return Promise.reject(new VfsError("EROFS"));
    return this.attributes.utimens(path, atime, mtime);
  }
  chmod(path: string, mode: number): Promise<void> {
    if (ControlDir.owns(path)) return Promise.reject(new VfsError("EROFS"));
    return this.attributes.chmod(path, mode);
  }
  /** uid or gid -1: that one stays. */
  chown(path: string, uid = -1, gid = -1): Promise<void> {
    if (ControlDir.owns(path)) return Promise.reject(new VfsError("EROFS"));
    return this.attributes.chown(path, uid, gid);
  }
  getxattr(path: string, name: string): Promise<Buffer | null> {
    if (ControlDir.owns(path)) return this.control.getxattr(path, name);
    return this.attributes.getxattr(path, name);
  }
  listxattr(path: string): string[] {
    if (ControlDir.owns(path)) return this.control.listxattr(path);
    return this.attributes.listxattr(path);
  }
  setxattr(path: string, name: string, value: Buffer): Promise<void> {
    if (ControlDir.owns(path)) return this.control.setxattr(path, name, value);
    // user.txtfs.restore and user.txtfs.commit on a note: the service's verbs (control/).
    if (this.control.isNoteVerb(name)) return this.control.noteVerb(path, name, value);
    return this.attributes.setxattr(path, name, value);
  }
}

export { VfsError };

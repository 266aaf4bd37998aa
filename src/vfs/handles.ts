// Open files: handles, the bodies being read and written, and what a flush, fsync and close do. A
// note's handles share one buffer (OpenNote), so writes through two descriptors agree; a save goes
// to the journal (delivery/) and is shown at once.
import { isUtf8 } from "node:buffer";
import { constants as fsc } from "node:fs";
import { NOTE_CONTENT_BYTES } from "../lib/limits.ts";
import { handlingBody } from "../lib/memoryMode.ts";
import { type Base, baseOf } from "./base.ts";
import type { Bodies } from "./bodies.ts";
import type { VfsCore } from "./core.ts";
import type { Delivery } from "./delivery/deliver.ts";
import { journalKey } from "./delivery/journalKeys.ts";
import { fail, isTransient, toVfsError, type VfsError } from "./errors.ts";
import { ExpectedReleases } from "./expectedReleases.ts";
import type { Claims } from "./local/claims.ts";
import { LocalHandle } from "./local/localFiles.ts";
import type { Attributes } from "./meta/attributes.ts";
import type { SidecarNode } from "./meta/sidecars.ts";
import type { OpenFile, OpenNote, OpenSidecar } from "./openFile.ts";
import type { FileNode } from "./tree.ts";

function splice(content: Buffer, data: Buffer, at: number): Buffer {
  const end = at + data.length;
  const next = end > content.length ? Buffer.alloc(end) : content;
  if (next !== content) content.copy(next);
  data.copy(next, at);
  return next;
}

function writeInto(open: OpenNote, data: Buffer, at: number): void {
  const current = open.content ?? Buffer.alloc(0);
  const length = Math.max(current.length, at + data.length);
  handlingBody(length);
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

function touched(node: FileNode, at = Date.now()): void {
  node.localMtimeMs = at;
  node.localCtimeMs = at;
}

function resize(content: Buffer, size: number): Buffer {
  const next = Buffer.alloc(size);
  content.copy(next, 0, 0, Math.min(size, content.length));
  return next;
}

/** The parts open files call: saves handed to delivery, sidecars and times, claims of rewritten names. */
export interface OpenFilesParts {
  attributes: Pick<
    Attributes,
    "applySidecar" | "paging" | "renderSidecar" | "showRemoteVersion" | "sidecar" | "sidecarRefused"
  >;
  bodies: Pick<Bodies, "body" | "bodyPiece">;
  claims: Pick<Claims, "adoptLocal" | "becomeLocal">;
  delivery: Pick<Delivery, "drain" | "journalAppend" | "journalSave" | "onItsWay" | "send">;
}

/** What open files use of the mount's shared state. */
export type OpenFilesCore = Pick<
  VfsCore,
  | "attrsChanged"
  | "checkWritable"
  | "find"
  | "flushLocal"
  | "handles"
  | "journal"
  | "keptLocal"
  | "local"
  | "log"
  | "nextFd"
  | "notes"
  | "openSidecars"
  | "pins"
  | "saveLocal"
  | "sidecars"
  | "tree"
  | "writeBehind"
>;

export class OpenFiles {
  private readonly attributes: OpenFilesParts["attributes"];
  private readonly bodies: OpenFilesParts["bodies"];
  private readonly claims: OpenFilesParts["claims"];
  private readonly delivery: OpenFilesParts["delivery"];
  readonly c: OpenFilesCore;
  /**
   * Releases still at work. close(2) returns before the kernel's RELEASE is answered, and a local
   * file that is text again goes up as a note only then: `txtfs sync` right after `printf … > f`
   * waits for them (Vfs.drain), else it could say "every save is on the service" before that one
   * is journalled.
   */
  private readonly releasing = new Set<Promise<void>>();
  /** Written local files flushed (closed, probably) whose release the kernel has yet to deliver. */
  private readonly expectedReleases = new ExpectedReleases();

  constructor(c: OpenFilesCore, parts: OpenFilesParts) {
    this.c = c;
    this.attributes = parts.attributes;
    this.bodies = parts.bodies;
    this.claims = parts.claims;
    this.delivery = parts.delivery;
  }

  async openSidecar(sidecar: SidecarNode): Promise<number> {
    let open = this.c.openSidecars.get(sidecar.target);
    if (!open) {
      open = { sidecar, refs: 0, content: await this.attributes.renderSidecar(sidecar.target), dirty: false };
      this.c.openSidecars.set(sidecar.target, open);
    }
    open.refs++;
    return this.addHandle({ kind: "sidecar", open });
  }

  /**
   * Writes an edited sidecar back; EINVAL (and no change at all) when it is not acceptable. A
   * refused edit stays in the buffer (shells flush before they write), so a later flush retries.
   */
  async applySidecar(open: OpenSidecar): Promise<void> {
    const text = open.content.toString("utf8");
    open.dirty = false; // before the wait: an edit made meanwhile is applied by the next flush
    try {
      await this.attributes.applySidecar(open.sidecar, text);
    } catch (err) {
      open.dirty = true;
      throw err;
    }
  }

  addHandle(h: OpenFile): number {
    const fd = this.c.nextFd++;
    this.c.handles.set(fd, h);
    return fd;
  }

  handle(fd: number): OpenFile {
    const h = this.c.handles.get(fd);
    if (!h) throw fail("EBADF");
    return h;
  }

  openNote(node: FileNode, appendOnly = false, shown?: Buffer): OpenNote {
    let open = node.note?.open;
    if (!open) {
      open = {
        node,
        refs: 0,
        content: null,
        base: this.baseAtOpen(node),
        dirty: false,
        created: false,
        ...(appendOnly ? { tail: Buffer.alloc(0) } : {}),
      };
      this.c.notes.of(node).opened(open);
    } else if (!open.dirty && open.content === null) {
      // Close-to-open: an edit is based on the version there was when its file was opened. A
      // remote change after that makes the save a conflict (both kept), never a silent overwrite.
      open.base = this.baseAtOpen(node);
    }
    // A descriptor of a local file going on with the note it became: it reads what it showed.
    if (shown) open.content ??= Buffer.from(shown);
    open.refs++;
    return open;
  }

  /**
   * A note made by create(): empty, and saved at release even if nothing is written (touch).
   * `claimed`: the version of the note it continues (a name claimed): its content is now this
   * empty body, saved over that version.
   */
  openCreated(node: FileNode, claimed: Base | undefined): OpenNote {
    const open = this.openNote(node);
    open.content = Buffer.alloc(0);
    open.created = true;
    if (claimed) {
      open.dirty = true;
      open.base = claimed;
    }
    return open;
  }

  /** `node` opened to have its whole content replaced by `content`: the old body is not fetched. */
  openReplaced(node: FileNode, content: Buffer): OpenNote {
    const open = this.openNote(node);
    open.content = Buffer.from(content);
    open.dirty = true;
    return open;
  }

  /** One holder of `open` lets go of it; the last one closes it. */
  letGo(open: OpenNote): void {
    if (--open.refs <= 0) this.closedNote(open);
  }

  /**
   * The version an edit opened now builds on: with a save of ours waiting, the base of that line of
   * saves (the note's record may already be a remote version the waiting save will conflict with);
   * otherwise the version the service has.
   */
  baseAtOpen(node: FileNode): Base {
    const waiting = this.c.journal.get(journalKey(node));
    if (waiting && !waiting.delete && waiting.baseEtag)
      return { etag: waiting.baseEtag, hash: waiting.baseHash ?? "" };
    return baseOf(node.meta);
  }

  async open(path: string, flags: number): Promise<number> {
    const writable = (flags & 3) !== fsc.O_RDONLY;
    const node = this.c.tree.lookup(path);
    if (!node) {
      const sidecar = this.attributes.sidecar(path);
      if (!sidecar) throw fail("ENOENT");
      if (writable) this.c.checkWritable(sidecar.target);
      return this.openSidecar(sidecar);
    }
    if (node.kind === "dir") return this.addHandle({ kind: "dir" });
    if (writable) this.c.checkWritable(node);
    this.attributes.paging(path, node);
    const append = (flags & fsc.O_APPEND) !== 0;
    if (node.kind === "local") {
      return this.addHandle({ kind: "local", node, fh: LocalHandle.open(node.blob, writable), append });
    }
    const appendOnly = append && (flags & 3) === fsc.O_WRONLY && this.appendsBlind(node);
    return this.addHandle({ kind: "note", open: this.openNote(node, appendOnly), append, writable });
  }

  /**
   * Whether appends to `node` go as the appended bytes alone (`file.append`), whatever version the
   * service has by then, as O_APPEND writes land at the end of the file as it is: it is on the
   * service, nothing else of it is open, and nothing but other appends is on its way. Its body is
   * never loaded for them (`>>` to a note not read since the mount never fetches it); a read sends
   * them first (VfsCore.body), and when they went onto the cached version, the one they made is
   * cached (no download).
   */
  appendsBlind(node: FileNode): boolean {
    if (!node.id || !this.c.writeBehind || node.note?.open) return false;
    if (this.c.pins.stateOf(node) !== "online-only") return false; // kept on this device: its copy there goes with whole saves
    const pending = this.c.journal.get(journalKey(node));
    if (pending && !pending.append) return false;
    return !node.note?.journalled;
  }

  /**
   * An append-only note is needed whole (read, written elsewhere, truncated): its body is loaded
   * (after the appends already saved have reached the service) and what was appended since goes on
   * it. Unreachable service: EIO, as for any note whose body is not here.
   */
  materialize(open: OpenNote): Promise<void> {
    open.materializing ??= (async () => {
      try {
        // body() sends the journalled appends first; one journalled meanwhile (a flush through
        // another descriptor) is not in what it fetched: fetch again after it.
        let body = await this.bodies.body(open.node);
        while (this.c.journal.get(journalKey(open.node))?.append) body = await this.bodies.body(open.node);
        open.base = baseOf(open.node.meta);
        const tail = open.tail ?? Buffer.alloc(0);
        open.content = Buffer.concat([body, tail]);
        if (tail.length) open.dirty = true;
        open.tail = undefined;
      } finally {
        open.materializing = undefined;
      }
    })();
    return open.materializing;
  }

  async read(fd: number, length: number, position: number): Promise<Buffer> {
    const h = this.handle(fd);
    if (h.kind === "dir") throw fail("EISDIR");
    if (h.kind === "sidecar") return h.open.content.subarray(position, position + length);
    if (h.kind === "local") return h.fh.read(length, position);
    // A reader keeps the body it read, so a large note reads consistently across calls, until the
    // note changes (a remote edit, another process's save): then it reads what stat now reports
    // (`tail -f` shows remote appends).
    if (h.open.tail) await this.materialize(h.open);
    if (!h.open.content) {
      const version = this.versionOf(h.open.node);
      if (!h.snapshot || h.snapshotOf !== version) {
        const base = this.baseAtOpen(h.open.node);
        h.snapshot = await this.bodies.body(h.open.node);
        h.snapshotOf = version;
        h.snapshotBase = base;
      }
    }
    const content = h.open.content ?? h.snapshot!;
    return content.subarray(position, position + length);
  }

  /**
   * What a read-only open of `path` made now would read (the FUSE adapter answered the open
   * natively: no handle here). Also after an unlink while open: the path is then libfuse's
   * `.fuse_hidden*` name, a local file.
   */
  async readPath(path: string, length: number, position: number): Promise<Buffer> {
    const node = this.c.tree.lookup(path);
    if (!node) throw fail("ENOENT");
    if (node.kind === "dir") throw fail("EISDIR");
    this.attributes.paging(path, node);
    if (node.kind === "local") return this.c.local.readAt(node.blob, length, position);
    const open = node.note?.open;
    if (open?.tail) await this.materialize(open);
    if (open?.content) return open.content.subarray(position, position + length);
    // The first piece goes through `body` (it counts the cache hit and starts the folder's
    // readahead); the rest are read alone, not the whole body again for each 128 KiB.
    const piece = position > 0 ? this.bodies.bodyPiece(node, position, length) : undefined;
    return piece ?? (await this.bodies.body(node)).subarray(position, position + length);
  }

  /** fsync(2) by path (a read-only open answered natively): the note's saves made durable. */
  async fsyncPath(path: string): Promise<void> {
    const node = this.c.tree.lookup(path);
    if (!node || node.kind === "dir") return;
    if (node.kind === "local") {
      this.c.local.flush();
      const fh = LocalHandle.open(node.blob, false);
      try {
        return await fh.sync();
      } finally {
        fh.close();
      }
    }
    return this.syncNote(node, node.note?.open);
  }

  async write(fd: number, data: Buffer, position: number): Promise<number> {
    const h = this.handle(fd);
    if (h.kind === "dir") throw fail("EISDIR");
    if (h.kind === "sidecar") return this.writeSidecar(h, data, position);
    if (h.kind === "local") {
      this.expectedReleases.settle(fd); // written on: that flush was not its close
      const { written, size } = h.fh.write(data, position, h.append);
      h.written = true;
      h.node.size = size;
      h.node.mtimeMs = h.node.ctimeMs = Date.now();
      return written;
    }
    if (!h.writable) throw fail("EBADF");
    if (h.oversize) throw fail("EFBIG");
    const open = h.open;
    if (open.tail && h.append) return this.appendBlind(open, data);
    this.buildOnRead(h);
    const content = await this.editable(open);
    // O_APPEND writes arrive at the kernel's idea of the size: append to the real end instead.
    const at = h.append ? content.length : position;
    if (at + data.length > NOTE_CONTENT_BYTES) throw this.refuseOversize(open);
    writeInto(open, data, at);
    open.dirty = true;
    this.c.notes.of(open.node).wrote(open.content!.length);
    touched(open.node);
    return data.length;
  }

  /**
   * A write to a sidecar. One its writer goes on from at the end is checked there: when no text
   * starting as the sidecar now would can be applied (not JSON, not an object, a whole object with
   * a bad value) it fails with EINVAL, so `echo bad > n.md.meta.json` fails in the shell (which
   * ignores the close, where the rest is checked). The edit is dropped then: the close applies
   * nothing and fails too.
   */
  private async writeSidecar(
    h: Extract<OpenFile, { kind: "sidecar" }>,
    data: Buffer,
    position: number,
  ): Promise<number> {
    if (h.refused) throw fail("EINVAL", "this sidecar edit was refused");
    const open = h.open;
    const next = splice(Buffer.from(open.content), data, position);
    if (position + data.length >= open.content.length) {
      try {
        this.c.sidecars.checkWrite(open.sidecar.target, next);
      } catch (err) {
        h.refused = true;
        this.attributes.sidecarRefused(open.sidecar, err);
        open.content = await this.attributes.renderSidecar(open.sidecar.target);
        open.dirty = false;
        throw err;
      }
    }
    open.content = next;
    open.dirty = true;
    return data.length;
  }

  /** Vfs.writesCannotFail: `write` below then reaches neither the service nor the disk. */
  writesCannotFail(fd: number, bytes: number): boolean {
    const h = this.c.handles.get(fd);
    if (h?.kind !== "note" || !h.writable || h.oversize) return false;
    const { content, tail, node } = h.open;
    if (!h.append) return content !== null && !tail;
    // Appended at the end (appendBlind, or the content's end): refused only past the largest note.
    const size = tail ? (this.c.notes.appendedSize(node) ?? node.meta?.size) : content?.length;
    return size !== undefined && size + bytes <= NOTE_CONTENT_BYTES;
  }

  handlesWhoseWritesCannotFail(path: string, bytes: number): number[] {
    const node = this.c.tree.lookup(path);
    if (node?.kind !== "file" || !node.note?.open) return [];
    const fds: number[] = [];
    for (const [fd, h] of this.c.handles)
      if (h.kind === "note" && h.open.node === node && this.writesCannotFail(fd, bytes)) fds.push(fd);
    return fds;
  }

  /** What identifies a note's current content: its pending local save, or the service's version. */
  versionOf(node: FileNode): unknown {
    return node.note?.journalled ?? node.meta?.etag;
  }

  /**
   * The first write to a note (nothing written yet) through a handle that read it builds on what
   * that handle read, not on a version another open of the note found since: a program that read
   * version 1, then wrote, saved over version 1 (a remote version 2 meanwhile makes it a conflict
   * copy), whatever was opened after it.
   */
  buildOnRead(h: Extract<OpenFile, { kind: "note" }>): void {
    const open = h.open;
    if (open.content || open.dirty || open.tail || !h.snapshot || !h.snapshotBase) return;
    open.content = Buffer.from(h.snapshot);
    open.base = h.snapshotBase;
  }

  /** An O_APPEND write to a note whose body is not here: kept as bytes to append. */
  appendBlind(open: OpenNote, data: Buffer): number {
    const size = this.c.notes.appendedSize(open.node) ?? open.node.meta?.size ?? 0; // with what is appended so far
    if (size + data.length > NOTE_CONTENT_BYTES) throw this.refuseOversize(open);
    open.tail = Buffer.concat([open.tail!, data]);
    open.dirty = true;
    this.c.notes.of(open.node).wrote(size + data.length);
    touched(open.node);
    return data.length;
  }

  /**
   * A write that would take the note past NOTE_CONTENT_BYTES (the service refuses a larger one):
   * the save it belongs to is refused whole, never cut at the limit, so no note the program did
   * not write reaches the service. What was written since the last save is dropped (the note shows
   * that save again, an fsync through this open included; one made by it and never saved is
   * empty), and every handle writing into the buffer answers EFBIG from now on, its close
   * included: none of them is told its bytes were kept.
   */
  refuseOversize(open: OpenNote): VfsError {
    for (const h of this.c.handles.values())
      if (h.kind === "note" && h.open === open && h.writable) h.oversize = true;
    const node = open.node;
    this.c.log.warn(
      { path: this.c.tree.pathOf(node), limit: NOTE_CONTENT_BYTES },
      "save refused: the note would pass its largest size (EFBIG); it keeps its last save",
    );
    open.backing = undefined;
    if (open.tail) open.tail = Buffer.alloc(0);
    // Back to its last save (one made through this very open, an fsync, included); a note made
    // by this open and never saved stays what its create made: empty.
    const saved = node.id !== null || this.c.journal.get(journalKey(node)) !== undefined;
    open.content = saved ? null : Buffer.alloc(0);
    open.dirty = !saved;
    this.c.notes.of(node).refreshSize();
    // Its times move: the kernel drops the pages those writes left in its cache.
    touched(node);
    this.c.attrsChanged(node);
    return fail("EFBIG", "a note holds at most 5 MiB");
  }

  /** Loads the body an edit starts from (once), remembering its ETag for If-Match. */
  async editable(open: OpenNote): Promise<Buffer> {
    if (open.tail) await this.materialize(open);
    if (open.content) return open.content;
    // The base stays what it was at open (close-to-open), whatever the body is by now.
    const body = await this.bodies.body(open.node);
    // Another handle's write or truncate may have filled the buffer meanwhile: that one stays.
    open.content ??= Buffer.from(body);
    return open.content;
  }

  async truncateOpen(h: OpenFile, size: number): Promise<void> {
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
    this.buildOnRead(h);
    // Appends through a handle of this note come first (an `>>` whose close is still on its way
    // shares this buffer): loaded after the truncate, they would fill it again under the writes
    // that follow (`>> n; > n` kept the old body's end).
    if (open.tail) await this.materialize(open);
    // A truncate only changes the buffer: the upload happens at flush, never an empty body by itself.
    const content = size === 0 ? Buffer.alloc(0) : await this.editable(open);
    open.content = resize(content, size);
    open.dirty = true;
    this.c.notes.of(open.node).wrote(size);
    touched(open.node);
  }

  async ftruncate(fd: number, size: number): Promise<void> {
    await this.truncateOpen(this.handle(fd), size);
  }

  async truncate(path: string, size: number): Promise<void> {
    const sidecar = this.c.tree.lookup(path) ? undefined : this.attributes.sidecar(path);
    const openSidecar = sidecar && this.c.openSidecars.get(sidecar.target);
    if (openSidecar) return this.truncateOpen({ kind: "sidecar", open: openSidecar }, size);
    if (sidecar) throw fail("EINVAL", "open a sidecar to rewrite it");
    const node = this.c.find(path);
    if (node.kind === "dir") throw fail("EISDIR");
    this.c.checkWritable(node);
    if (node.kind === "local") {
      this.c.local.truncate(node.blob, size);
      node.size = size;
      node.mtimeMs = node.ctimeMs = Date.now();
      return;
    }
    const existing = node.note?.open;
    if (existing) {
      // `echo x > note` may come as open, truncate(path, 0), write: mark the open note.
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
    if (h.kind === "note" && h.oversize) throw fail("EFBIG");
    if (h.kind === "sidecar" && h.refused) throw fail("EINVAL", "this sidecar edit was refused");
    // A local file that may go up as a note at its release: `txtfs sync` waits for that release.
    if (
      h.kind === "local" &&
      h.written &&
      !this.c.keptLocal(h.node.parent, h.node.name) &&
      this.c.tree.locals.has(h.node)
    )
      this.expectedReleases.expect(fd);
    // Only what was written: shells flush a new file once before writing to it, and uploading the
    // empty note then would cost a second request per new note.
    // Saves are delivered a moment later (deliverSoon): `echo x > note` is open, truncate, flush,
    // write, flush, and its empty step is replaced before it is sent.
    if (h.kind === "note" && h.open.dirty) await this.upload(h.open);
    if (h.kind === "sidecar" && h.open.dirty) {
      // Emptied and not written yet (`> n.md.meta.json`: bash flushes the descriptor it opened
      // before echo writes): refused, but not reported, as the writes to come decide. An empty
      // sidecar closed at last is reported (release).
      if (h.open.content.toString("latin1").trim() === "") throw fail("EINVAL", "sidecar: empty");
      await this.applySidecar(h.open);
    }
  }

  async fsync(fd: number): Promise<void> {
    const h = this.handle(fd);
    if (h.kind === "local") {
      this.c.local.flush(); // the file's place in the manifest too
      return h.fh.sync();
    }
    if (h.kind !== "note") return this.flush(fd);
    if (h.oversize) throw fail("EFBIG");
    return this.syncNote(h.open.node, h.open);
  }

  /** A note's saves made durable: on the service if it can be reached, else in the journal until it can. */
  private async syncNote(node: FileNode, open: OpenNote | undefined): Promise<void> {
    if (open?.dirty) await this.upload(open);
    await this.delivery.drain();
    const key = journalKey(node);
    if (this.c.journal.get(key)) await this.c.journal.sync(key);
  }

  async release(fd: number): Promise<void> {
    const done = this.releaseHandle(fd);
    this.releasing.add(done);
    try {
      await done;
    } finally {
      this.releasing.delete(done);
      this.expectedReleases.settle(fd);
    }
  }

  /** Once every release begun so far, and every one a flush announced, has ended (whatever its outcome). */
  async releasesDone(): Promise<void> {
    await this.expectedReleases.arrived();
    await Promise.allSettled([...this.releasing]);
  }

  private async releaseHandle(fd: number): Promise<void> {
    const h = this.handle(fd);
    this.c.handles.delete(fd);
    if (h.kind === "local") {
      h.fh.close();
      this.c.saveLocal();
      // What a program wrote and closed survives a kill -9 of the daemon: recorded now, not later.
      if (h.written) this.c.flushLocal();
      // A note that was kept local (not UTF-8) and is text again goes up as that note.
      const node = h.node;
      const lastHandle = ![...this.c.handles.values()].some((o) => o.kind === "local" && o.node === node);
      const kept = node.parent.localOnly === "always";
      if (
        h.written &&
        lastHandle &&
        !kept &&
        !this.c.keptLocal(node.parent, node.name) &&
        this.c.tree.locals.has(node)
      ) {
        await this.claims.adoptLocal(node, node.ghostOf);
      }
      return;
    }
    if (h.kind === "sidecar") {
      try {
        if (h.refused) throw fail("EINVAL", "this sidecar edit was refused");
        if (h.open.dirty) await this.applySidecar(h.open);
      } finally {
        if (--h.open.refs <= 0) this.c.openSidecars.delete(h.open.sidecar.target);
      }
      return;
    }
    if (h.kind !== "note") return;
    const open = h.open;
    try {
      if (this.needsUpload(open)) await this.upload(open);
    } finally {
      this.letGo(open);
    }
    if (h.oversize) throw fail("EFBIG");
  }

  /** The last handle of a note closed: stat shows the note's own body again. */
  closedNote(open: OpenNote): void {
    const node = open.node;
    this.c.notes.of(node).closed();
    if (open.detached && !this.c.journal.get(journalKey(node))) this.attributes.showRemoteVersion(node);
  }

  /**
   * Saves a dirty note. When the service cannot be reached (or fails), the write goes to the
   * on-disk journal instead and is replayed later: the save still succeeds, nothing is lost.
   */
  async upload(open: OpenNote): Promise<void> {
    const node = open.node;
    if (open.tail) {
      const pending = this.c.journal.get(journalKey(node));
      // Appended bytes go as an append, unless they are not text or the note was changed here
      // meanwhile (renamed: its appends go first): then as a whole body.
      if (isUtf8(open.tail) && (!pending || pending.append)) {
        // Taken out of the buffer first: stat counts the journal's bytes and the buffer's.
        const tail = open.tail;
        open.tail = Buffer.alloc(0);
        open.dirty = false;
        try {
          await this.delivery.journalAppend(node, tail);
        } catch (err) {
          open.tail = Buffer.concat([tail, open.tail]);
          open.dirty = true;
          throw err;
        }
        return;
      }
      await this.materialize(open);
    }
    let content = open.content ?? (await this.bodies.body(node));
    if (!isUtf8(content)) return this.claims.becomeLocal(open, content);
    // A note with a journalled write waits its turn behind it, so saves reach the service in order.
    const queued = this.c.journal.get(journalKey(node));
    if (!queued && !this.c.writeBehind) {
      const sent = content.toString("utf8");
      // Clean before the request: a write through another handle meanwhile makes it dirty again
      // and stays in the buffer (building on this save when it landed as sent); its flush sends it.
      open.dirty = false;
      try {
        const { meta, body } = await this.delivery.send(node, sent, open.base, node.note?.placeUnsent);
        node.note?.placeSent();
        if (!open.dirty) open.content = Buffer.from(body!, "utf8");
        if (!open.dirty || body === sent) open.base = baseOf(meta);
        return;
      } catch (err) {
        open.dirty = true;
        if (!isTransient(err)) {
          this.c.log.error({ err, path: this.c.tree.pathOf(node) }, "upload failed");
          throw toVfsError(err);
        }
        this.c.log.warn(
          { path: this.c.tree.pathOf(node), err: (err as Error).message },
          "service unreachable: journalling the write",
        );
      }
      // Journalled with what was written meanwhile.
      const now = open.content ?? content;
      if (!isUtf8(now)) return this.claims.becomeLocal(open, now);
      content = now;
    }
    // Clean before the wait: a write that comes meanwhile (the journal's lock may be held by a
    // delivery's answer) makes it dirty again, and the next flush saves its bytes.
    open.dirty = false;
    try {
      await this.delivery.journalSave(node, content, open.base);
    } catch (err) {
      open.dirty = true;
      throw err;
    }
  }

  /** Whether closing it now saves something (lifecycle.ts: dirty, or made here and never sent). */
  needsUpload(open: OpenNote): boolean {
    const action = this.c.notes.of(open.node).close();
    return action === "save" || (action === "save-empty" && open.created);
  }
}

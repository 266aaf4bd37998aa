// Writes and truncates through open files: into the buffer a note's descriptors share (saved at
// flush or close, saves.ts), appends kept as bytes when the body is not here, and the refusal of
// a write past the largest note (EFBIG, the save refused whole).
import { constants as fsc } from "node:fs";
import { NOTE_CONTENT_BYTES } from "../../lib/limits.ts";
import type { Attachments } from "../attachments/attachments.ts";
import type { Bodies } from "../bodies.ts";
import type { VfsCore } from "../core.ts";
import { journalKey } from "../delivery/journalKeys.ts";
import { fail, type VfsError } from "../errors.ts";
import type { Attributes } from "../meta/attributes.ts";
import type { OpenFile } from "../openFile.ts";
import type { OpenNote } from "../openNote.ts";
import type { OpenFiles } from "./openFiles.ts";
import type { Reads } from "./reads.ts";
import type { Saves } from "./saves.ts";

function splice(content: Buffer, data: Buffer, at: number): Buffer {
  const end = at + data.length;
  const next = end > content.length ? Buffer.alloc(end) : content;
  if (next !== content) content.copy(next);
  data.copy(next, at);
  return next;
}

function resize(content: Buffer, size: number): Buffer {
  const next = Buffer.alloc(size);
  content.copy(next, 0, 0, Math.min(size, content.length));
  return next;
}

export interface WritesParts {
  attachments: Pick<Attachments, "checkSize" | "ensureBytes" | "saved">;
  attributes: Pick<Attributes, "renderSidecar" | "sidecar" | "sidecarRefused">;
  bodies: Pick<Bodies, "body">;
  openFiles: Pick<OpenFiles, "handle" | "open">;
  reads: Pick<Reads, "materialize">;
  saves: Pick<Saves, "release" | "wroteOn">;
}

export type WritesCore = Pick<
  VfsCore,
  | "attrsChanged"
  | "checkWritable"
  | "clock"
  | "find"
  | "handles"
  | "journal"
  | "local"
  | "log"
  | "notes"
  | "openSidecars"
  | "sidecars"
  | "tree"
>;

export class Writes {
  private readonly attachments: WritesParts["attachments"];
  private readonly attributes: WritesParts["attributes"];
  private readonly bodies: WritesParts["bodies"];
  private readonly openFiles: WritesParts["openFiles"];
  private readonly reads: WritesParts["reads"];
  private readonly saves: WritesParts["saves"];
  private readonly c: WritesCore;

  constructor(c: WritesCore, parts: WritesParts) {
    this.c = c;
    this.attachments = parts.attachments;
    this.attributes = parts.attributes;
    this.bodies = parts.bodies;
    this.openFiles = parts.openFiles;
    this.reads = parts.reads;
    this.saves = parts.saves;
  }

  async write(fd: number, data: Buffer, position: number): Promise<number> {
    const h = this.openFiles.handle(fd);
    if (h.kind === "dir") throw fail("EISDIR");
    if (h.kind === "sidecar") return this.writeSidecar(h, data, position);
    if (h.kind === "local") {
      const end = (h.append ? h.node.size : position) + data.length;
      this.attachments.checkSize(h.node, Math.max(h.node.size, end));
      this.saves.wroteOn(fd); // that flush was not its close
      const { written, size } = h.fh.write(data, position, h.append);
      h.written = h.unsaved = true;
      h.node.size = size;
      h.node.mtimeMs = h.node.ctimeMs = this.c.clock.now();
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
    this.c.notes.of(open.node).write(open.writeAt(data, at));
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

  /**
   * The first write to a note (nothing written yet) through a handle that read it builds on what
   * that handle read, not on a version another open of the note found since: a program that read
   * version 1, then wrote, saved over version 1 (a remote version 2 in between makes it a conflict
   * copy), whatever was opened after it.
   */
  buildOnRead(h: Extract<OpenFile, { kind: "note" }>): void {
    if (h.snapshot && h.snapshotBase) h.open.buildOn(h.snapshot, h.snapshotBase);
  }

  /** An O_APPEND write to a note whose body is not here: kept as bytes to append. */
  appendBlind(open: OpenNote, data: Buffer): number {
    const size = this.c.notes.appendedSize(open.node) ?? open.node.meta?.size ?? 0; // with what is appended so far
    if (size + data.length > NOTE_CONTENT_BYTES) throw this.refuseOversize(open);
    open.append(data);
    this.c.notes.of(open.node).write(size + data.length);
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
    // Back to its last save (one made through this very open, an fsync, included); a note made
    // by this open and never saved stays what its create made: empty.
    open.dropUnsaved(node.id !== null || this.c.journal.get(journalKey(node)) !== undefined);
    this.c.notes.of(node).refreshSize();
    // Its times move: the kernel drops the pages those writes left in its cache.
    this.c.notes.of(node).touched();
    this.c.attrsChanged(node);
    return fail("EFBIG", "a note holds at most 5 MiB");
  }

  /** Loads the body an edit starts from (once), remembering its ETag for If-Match. */
  async editable(open: OpenNote): Promise<Buffer> {
    if (open.tail) await this.reads.materialize(open);
    if (open.content) return open.content;
    // The base stays what it was at open (close-to-open), whatever the body is by now.
    const body = await this.bodies.body(open.node);
    // Another handle's write or truncate across the await may have filled the buffer: that one stays (note.ts: the rule for await).
    return open.loaded(body);
  }

  async truncateOpen(h: OpenFile, size: number): Promise<void> {
    if (h.kind === "dir") throw fail("EISDIR");
    if (h.kind === "sidecar") {
      h.open.content = resize(h.open.content, size);
      h.open.dirty = true;
      return;
    }
    if (h.kind === "local") {
      this.attachments.checkSize(h.node, size);
      h.fh.truncate(size);
      h.written = h.unsaved = true;
      h.node.size = size;
      h.node.mtimeMs = h.node.ctimeMs = this.c.clock.now();
      return;
    }
    const open = h.open;
    if (size > NOTE_CONTENT_BYTES) throw fail("EFBIG");
    this.buildOnRead(h);
    // Appends through a handle of this note come first (an `>>` whose close is still on its way
    // shares this buffer): loaded after the truncate, they would fill it again under the writes
    // that follow (`>> n; > n` kept the old body's end).
    if (open.tail) await this.reads.materialize(open);
    // A truncate only changes the buffer: the upload happens at flush, never an empty body by itself.
    if (size > 0) await this.editable(open);
    open.truncate(size);
    this.c.notes.of(open.node).write(size);
  }

  async ftruncate(fd: number, size: number): Promise<void> {
    await this.truncateOpen(this.openFiles.handle(fd), size);
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
      this.attachments.checkSize(node, size);
      await this.attachments.ensureBytes(node, size === 0);
      this.c.local.truncate(node.blob, size);
      node.size = size;
      node.mtimeMs = node.ctimeMs = this.c.clock.now();
      // `echo x > f.png`: open, then this truncate: the close saves what was written after it.
      const writing = [...this.c.handles.values()].filter(
        (h) => h.kind === "local" && h.node === node && h.fh.writable,
      );
      for (const h of writing) if (h.kind === "local") h.unsaved = true;
      if (writing.length === 0) await this.attachments.saved(node);
      return;
    }
    const existing = node.note?.open;
    if (existing) {
      // `echo x > note` may come as open, truncate(path, 0), write: mark the open note.
      await this.truncateOpen({ kind: "note", open: existing, append: false, writable: true }, size);
      return;
    }
    const fd = await this.openFiles.open(path, fsc.O_RDWR);
    try {
      await this.ftruncate(fd, size);
    } finally {
      await this.saves.release(fd);
    }
  }
}

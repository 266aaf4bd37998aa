// Reads through open files (and by path, for an open the kernel adapter answered itself): a
// reader keeps the body it read until the note changes, and a note only appended to is loaded
// whole when it is needed whole (materialize).
import type { Attachments } from "../attachments/attachments.ts";
import { baseOf } from "../base.ts";
import type { Bodies } from "../bodies.ts";
import type { VfsCore } from "../core.ts";
import { journalKey } from "../delivery/journalKeys.ts";
import { fail } from "../errors.ts";
import type { Attributes } from "../meta/attributes.ts";
import type { OpenNote } from "../openNote.ts";
import type { FileNode } from "../tree.ts";
import type { OpenFiles } from "./openFiles.ts";

export interface ReadsParts {
  attachments: Pick<Attachments, "ensureBytes">;
  attributes: Pick<Attributes, "paging">;
  bodies: Pick<Bodies, "body" | "bodyPiece">;
  openFiles: Pick<OpenFiles, "baseAtOpen" | "handle">;
}

export type ReadsCore = Pick<VfsCore, "journal" | "local" | "tree">;

export class Reads {
  private readonly attachments: ReadsParts["attachments"];
  private readonly attributes: ReadsParts["attributes"];
  private readonly bodies: ReadsParts["bodies"];
  private readonly openFiles: ReadsParts["openFiles"];
  private readonly c: ReadsCore;

  constructor(c: ReadsCore, parts: ReadsParts) {
    this.c = c;
    this.attachments = parts.attachments;
    this.attributes = parts.attributes;
    this.bodies = parts.bodies;
    this.openFiles = parts.openFiles;
  }

  /**
   * An append-only note is needed whole (read, written elsewhere, truncated): its body is loaded
   * (after the appends already saved have reached the service) and what was appended since goes on
   * it. Unreachable service: EIO, as for any note whose body is not here.
   */
  materialize(open: OpenNote): Promise<void> {
    return open.materialize(async () => {
      // body() sends the journalled appends first; one journalled across its await (a flush
      // through another descriptor; note.ts: the rule for await) is not in what it fetched: fetch again after it.
      let body = await this.bodies.body(open.node);
      while (this.c.journal.get(journalKey(open.node))?.append) body = await this.bodies.body(open.node);
      return { body, base: baseOf(open.node.meta) };
    });
  }

  async read(fd: number, length: number, position: number): Promise<Buffer> {
    const h = this.openFiles.handle(fd);
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
        const base = this.openFiles.baseAtOpen(h.open.node);
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
    if (node.kind === "local") {
      await this.attachments.ensureBytes(node);
      return this.c.local.readAt(node.blob, length, position);
    }
    const open = node.note?.open;
    if (open?.tail) await this.materialize(open);
    if (open?.content) return open.content.subarray(position, position + length);
    // The first piece goes through `body` (it counts the cache hit and starts the folder's
    // readahead); the rest are read alone, not the whole body again for each 128 KiB.
    const piece = position > 0 ? this.bodies.bodyPiece(node, position, length) : undefined;
    return piece ?? (await this.bodies.body(node)).subarray(position, position + length);
  }

  /** What identifies a note's current content: its pending local save, or the service's version. */
  versionOf(node: FileNode): unknown {
    return node.note?.journalled ?? node.meta?.etag;
  }
}

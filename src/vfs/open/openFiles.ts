// The table of open files: a descriptor number for each open file, and the buffer a note's
// descriptors share (OpenNote), made at its first open and let go at its last close. Reading,
// writing and saving through them are reads.ts, writes.ts and saves.ts.
import { constants as fsc } from "node:fs";
import type { Attachments } from "../attachments/attachments.ts";
import { type Base, baseOf } from "../base.ts";
import type { VfsCore } from "../core.ts";
import { journalKey } from "../delivery/journalKeys.ts";
import { fail } from "../errors.ts";
import { LocalHandle } from "../local/localFiles.ts";
import type { Attributes } from "../meta/attributes.ts";
import type { SidecarNode } from "../meta/sidecars.ts";
import type { OpenFile } from "../openFile.ts";
import type { OpenNote } from "../openNote.ts";
import type { FileNode } from "../tree.ts";

/** What opening calls of the parts: sidecars, paging, the note shown again at its last close. */
export interface OpenFilesParts {
  attachments: Pick<Attachments, "ensureBytes" | "saveFresh">;
  attributes: Pick<Attributes, "paging" | "renderSidecar" | "showRemoteVersion" | "sidecar">;
}

/** What the table of open files uses of the mount's shared state. */
export type OpenFilesCore = Pick<
  VfsCore,
  | "checkWritable"
  | "handles"
  | "journal"
  | "nextFd"
  | "notes"
  | "openSidecars"
  | "pins"
  | "tree"
  | "writeBehind"
>;

export class OpenFiles {
  private readonly attachments: OpenFilesParts["attachments"];
  private readonly attributes: OpenFilesParts["attributes"];
  private readonly c: OpenFilesCore;

  constructor(c: OpenFilesCore, parts: OpenFilesParts) {
    this.c = c;
    this.attachments = parts.attachments;
    this.attributes = parts.attributes;
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
    // Close-to-open: an edit is based on the version there was when its file was opened. A
    // remote change after that makes the save a conflict (both kept), never a silent overwrite.
    if (!open) open = this.c.notes.of(node).opened(this.baseAtOpen(node), appendOnly);
    else open.reopened(this.baseAtOpen(node));
    // A descriptor of a local file going on with the note it became: it reads what it showed.
    if (shown) open.showing(shown);
    open.hold();
    return open;
  }

  /**
   * A note made by create(): empty, and saved at release even if nothing is written (touch).
   * `claimed`: the version of the note it continues (a name claimed): its content is now this
   * empty body, saved over that version.
   */
  openCreated(node: FileNode, claimed: Base | undefined): OpenNote {
    const open = this.openNote(node);
    open.madeEmpty(claimed);
    return open;
  }

  /** `node` opened to have its whole content replaced by `content`: the old body is not fetched. */
  openReplaced(node: FileNode, content: Buffer): OpenNote {
    const open = this.openNote(node);
    open.replaced(content);
    return open;
  }

  /** One holder of `open` lets go of it; the last one closes it. */
  letGo(open: OpenNote): void {
    if (open.letGo()) this.closedNote(open);
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
      // An attachment only listed so far: its bytes are read now (none when the open empties it).
      await this.attachments.ensureBytes(node, (flags & fsc.O_TRUNC) !== 0 && writable);
      // A save still to come from its last close goes first: the bytes it closed with, not a write half made.
      if (writable) await this.attachments.saveFresh(node);
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

  /** The last handle of a note closed: stat shows the note's own body again. */
  closedNote(open: OpenNote): void {
    const node = open.node;
    this.c.notes.of(node).closed();
    if (open.detached && !this.c.journal.get(journalKey(node))) this.attributes.showRemoteVersion(node);
  }
}

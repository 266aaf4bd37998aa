// Saves through open files: flush, fsync and close (release) of a descriptor, and the save of a
// note's buffer they make (to the journal, delivered a moment later; sent at once when
// write-through), an edited sidecar applied, a local file gone back to text going up as its note.
import { isUtf8 } from "node:buffer";
import { attachmentKey } from "../attachments/attachmentPlaces.ts";
import type { Attachments } from "../attachments/attachments.ts";
import { baseOf } from "../base.ts";
import type { Bodies } from "../bodies.ts";
import type { VfsCore } from "../core.ts";
import type { Delivery } from "../delivery/deliver.ts";
import { journalKey } from "../delivery/journalKeys.ts";
import { fail, isTransient, toVfsError } from "../errors.ts";
import type { Claims } from "../local/claims.ts";
import { LocalHandle } from "../local/localFiles.ts";
import type { Attributes } from "../meta/attributes.ts";
import type { OpenFile, OpenSidecar } from "../openFile.ts";
import type { OpenNote } from "../openNote.ts";
import type { FileNode, LocalNode } from "../tree.ts";
import { ExpectedReleases } from "./expectedReleases.ts";
import type { OpenFiles } from "./openFiles.ts";
import type { Reads } from "./reads.ts";

export interface SavesParts {
  attachments: Pick<Attachments, "closed" | "saveFresh" | "saved">;
  attributes: Pick<Attributes, "applySidecar">;
  bodies: Pick<Bodies, "body">;
  claims: Pick<Claims, "adoptLocal" | "becomeLocal" | "createOnItsWay">;
  delivery: Pick<Delivery, "drain" | "journalAppend" | "journalSave" | "send">;
  openFiles: Pick<OpenFiles, "handle" | "letGo">;
  reads: Pick<Reads, "materialize">;
}

export type SavesCore = Pick<
  VfsCore,
  | "localNodes"
  | "handles"
  | "journal"
  | "keptLocal"
  | "local"
  | "log"
  | "notes"
  | "openSidecars"
  | "tree"
  | "writeBehind"
>;

export class Saves {
  private readonly attachments: SavesParts["attachments"];
  private readonly attributes: SavesParts["attributes"];
  private readonly bodies: SavesParts["bodies"];
  private readonly claims: SavesParts["claims"];
  private readonly delivery: SavesParts["delivery"];
  private readonly openFiles: SavesParts["openFiles"];
  private readonly reads: SavesParts["reads"];
  private readonly c: SavesCore;
  /**
   * Releases still at work. close(2) returns before the kernel's RELEASE is answered, and a local
   * file that is text again goes up as a note only then: `txtfs sync` right after `printf … > f`
   * waits for them (Vfs.drain), else it could say "every save is on the service" before that one
   * is journalled.
   */
  private readonly releasing = new Set<Promise<void>>();
  /** Written local files flushed (closed, probably) whose release the kernel has yet to deliver. */
  private readonly expectedReleases = new ExpectedReleases();

  constructor(c: SavesCore, parts: SavesParts) {
    this.c = c;
    this.attachments = parts.attachments;
    this.attributes = parts.attributes;
    this.bodies = parts.bodies;
    this.claims = parts.claims;
    this.delivery = parts.delivery;
    this.openFiles = parts.openFiles;
    this.reads = parts.reads;
  }

  /** A local file was written on through `fd`: the flush before was not its close. */
  wroteOn(fd: number): void {
    this.expectedReleases.settle(fd);
  }

  /**
   * Writes an edited sidecar back; EINVAL (and no change at all) when it is not acceptable. A
   * refused edit stays in the buffer (shells flush before they write), so a later flush retries.
   */
  async applySidecar(open: OpenSidecar): Promise<void> {
    const text = open.content.toString("utf8");
    open.dirty = false; // before the await: an edit made across it is applied by the next flush (note.ts: the rule for await)
    try {
      await this.attributes.applySidecar(open.sidecar, text);
    } catch (err) {
      open.dirty = true;
      throw err;
    }
  }

  /** fsync(2) by path (a read-only open answered natively): the note's saves made durable. */
  async fsyncPath(path: string): Promise<void> {
    const node = this.c.tree.lookup(path);
    if (!node || node.kind === "dir") return;
    if (node.kind === "local") {
      this.c.local.flush();
      const fh = LocalHandle.open(node.blob, false);
      try {
        await fh.sync();
      } finally {
        fh.close();
      }
      return this.syncAttachment(node);
    }
    return this.syncNote(node, node.note?.open);
  }

  async flush(fd: number): Promise<void> {
    const h = this.openFiles.handle(fd);
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
    if (h.kind === "local") await this.saveLocal(h);
    if (h.kind === "sidecar" && h.open.dirty) {
      // Emptied and not written yet (`> n.md.meta.json`: bash flushes the descriptor it opened
      // before echo writes): refused, but not reported, as the writes to come decide. An empty
      // sidecar closed at last is reported (release).
      if (h.open.content.toString("latin1").trim() === "") throw fail("EINVAL", "sidecar: empty");
      await this.applySidecar(h.open);
    }
  }

  async fsync(fd: number): Promise<void> {
    const h = this.openFiles.handle(fd);
    if (h.kind === "local") {
      this.c.local.flush(); // the file's place in the manifest too
      await h.fh.sync();
      await this.saveLocal(h, true);
      return this.syncAttachment(h.node);
    }
    if (h.kind !== "note") return this.flush(fd);
    if (h.oversize) throw fail("EFBIG");
    return this.syncNote(h.open.node, h.open);
  }

  /**
   * What was written through a local file's descriptor since its last flush goes up, if it is an
   * attachment (close(2) returns at the flush: a save the program was told of is journalled then).
   */
  private async saveLocal(h: Extract<OpenFile, { kind: "local" }>, now = false): Promise<void> {
    if (!h.unsaved) {
      if (now) await this.attachments.saveFresh(h.node); // closed before, its save still to come
      return;
    }
    h.unsaved = false;
    try {
      await (now ? this.attachments.saved(h.node) : this.attachments.closed(h.node));
    } catch (err) {
      h.unsaved = true; // the next flush tries again; this one fails (ENOSPC)
      throw toVfsError(err);
    }
  }

  /** An attachment's saves made durable: on the service if it can be reached, else in the journal. */
  private async syncAttachment(node: LocalNode): Promise<void> {
    const b = node.attachment;
    if (!b) return;
    await this.delivery.drain();
    const key = attachmentKey(b);
    if (this.c.journal.get(key)) await this.c.journal.sync(key);
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
    const h = this.openFiles.handle(fd);
    this.c.handles.delete(fd);
    if (h.kind === "local") {
      h.fh.close();
      // Made and closed with nothing written (`touch`), or written after the last flush.
      if (h.unsaved || (h.made && !h.node.attachment)) {
        h.unsaved = true;
        await this.saveLocal(h);
      }
      this.c.localNodes.save();
      // What a program wrote and closed survives a kill -9 of the daemon: recorded now, not later.
      if (h.written) this.c.localNodes.flush();
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
      this.openFiles.letGo(open);
    }
    if (h.oversize) throw fail("EFBIG");
  }

  /**
   * Saves a dirty note. When the service cannot be reached (or fails), the write goes to the
   * on-disk journal instead and is replayed later: the save still succeeds, nothing is lost.
   */
  async upload(open: OpenNote): Promise<void> {
    const node = open.node;
    if (open.tail) {
      const pending = this.c.journal.get(journalKey(node));
      // Appended bytes go as an append, unless they are not text or a save or rename of the note
      // is journalled (its appends go first): then as a whole body.
      if (isUtf8(open.tail) && (!pending || pending.append)) {
        // Taken out of the buffer first: stat counts the journal's bytes and the buffer's.
        const tail = open.takeAppended();
        try {
          await this.delivery.journalAppend(node, tail);
        } catch (err) {
          open.appendedBack(tail);
          throw err;
        }
        return;
      }
      await this.reads.materialize(open);
    }
    let content = open.content ?? (await this.bodies.body(node));
    if (!isUtf8(content)) return this.keptAsBytes(open, content);
    // A note with a journalled write waits its turn behind it, so saves reach the service in order.
    const queued = this.c.journal.get(journalKey(node));
    if (!queued && !this.c.writeBehind) {
      const sent = content.toString("utf8");
      // Clean before the await: a write across it makes it dirty again (note.ts: the rule for await); that write stays
      // in the buffer, building on this save when it landed as sent, and its flush sends it.
      open.saving();
      try {
        const { meta, body } = await this.delivery.send(node, sent, open.base, node.note?.placeUnsent);
        node.note?.placeSent();
        open.sent(sent, body!, baseOf(meta));
        return;
      } catch (err) {
        open.saveFailed();
        if (!isTransient(err)) {
          this.c.log.error({ err, path: this.c.tree.pathOf(node) }, "upload failed");
          throw toVfsError(err);
        }
        this.c.log.warn(
          { path: this.c.tree.pathOf(node), err: (err as Error).message },
          "service unreachable: journalling the write",
        );
      }
      // Journalled with what was written while the request was out.
      const now = open.content ?? content;
      if (!isUtf8(now)) return this.keptAsBytes(open, now);
      content = now;
    }
    // Clean before the await (the journal's lock may be held by a delivery's answer): a write
    // across it makes it dirty again and the next flush saves it (note.ts: the rule for await).
    open.saving();
    try {
      await this.delivery.journalSave(node, content, open.base);
    } catch (err) {
      open.saveFailed();
      throw err;
    }
  }

  /**
   * A note's bytes are not UTF-8 now: they stay exact in a local file (Claims.becomeLocal). One that
   * never was a note on the service goes up as an attachment of that name; a note the service has
   * keeps its id, tags and last text there, and its file waits here until it is text again.
   */
  private async keptAsBytes(open: OpenNote, content: Buffer): Promise<void> {
    const local = await this.claims.becomeLocal(open, content);
    if (local.keptNote && !this.claims.createOnItsWay(local)) await this.attachments.saved(local);
  }

  /** Whether closing it now saves something (lifecycle.ts: dirty, or made here and never sent). */
  needsUpload(open: OpenNote): boolean {
    const action = this.c.notes.of(open.node).close();
    return action === "save" || (action === "save-empty" && open.created);
  }
}

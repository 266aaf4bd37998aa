// The buffer a note's open descriptors share, from its first open to its last close: the body
// being edited, the version it builds on, and whether it holds writes not yet saved. Its Note
// (note.ts) makes it and holds it; its fields change only through the methods below, each one
// step of an open, write, truncate or save (open/), so no caller leaves it half changed.

import { handlingBody } from "../lib/memoryMode.ts";
import type { Base } from "./base.ts";
import type { FileNode } from "./tree.ts";

export class OpenNote {
  readonly node: FileNode;
  /** Descriptors (and renames going on with it) holding it. */
  private holders = 0;
  /** The body being edited; null until something needs it. */
  private body: Buffer | null = null;
  /** The version the edit is based on: If-Match on upload, and how to tell a real conflict. */
  private basedOn: Base;
  /** Written since its last save. */
  private unsaved = false;
  /**
   * The note shows another version than this buffer (our save became a conflict copy while the
   * file was open): once the last handle closes, its times move so no stale page is read again.
   */
  private apart = false;
  /** Made by create(): uploaded at release even if nothing was written (touch). */
  private madeHere = false;
  /** Spare capacity behind `body`, so a file written 4 KiB at a time is not copied each time. */
  private backing: Buffer | undefined;
  /**
   * Append-only (opened O_WRONLY|O_APPEND, body not here): the bytes appended since the last save,
   * the body never loaded. Saved as an append; anything else done with the note loads the body
   * first and turns this into `content` (open/reads.ts, materialize).
   */
  private appended: Buffer | undefined;
  private loading: Promise<void> | undefined;

  constructor(node: FileNode, base: Base, appendOnly: boolean) {
    this.node = node;
    this.basedOn = base;
    if (appendOnly) this.appended = Buffer.alloc(0);
  }

  get refs(): number {
    return this.holders;
  }

  get content(): Buffer | null {
    return this.body;
  }

  get base(): Base {
    return this.basedOn;
  }

  get dirty(): boolean {
    return this.unsaved;
  }

  get detached(): boolean {
    return this.apart;
  }

  get created(): boolean {
    return this.madeHere;
  }

  get tail(): Buffer | undefined {
    return this.appended;
  }

  /** One more descriptor holds it. */
  hold(): void {
    this.holders++;
  }

  /** One holder lets go of it: true when that was the last. */
  letGo(): boolean {
    return --this.holders <= 0;
  }

  /**
   * Opened again with nothing read or written into it: the edit builds on `base`, the version
   * there is now (close-to-open: a remote change after this open makes its save a conflict).
   */
  reopened(base: Base): void {
    if (!this.unsaved && this.body === null) this.basedOn = base;
  }

  /** A descriptor of a local file going on with the note it became: the body it showed. */
  showing(shown: Buffer): void {
    this.body ??= Buffer.from(shown);
  }

  /** Made by create(): empty; `claimed`, the version of a note it continues, is replaced by that empty body. */
  madeEmpty(claimed: Base | undefined): void {
    this.body = Buffer.alloc(0);
    this.madeHere = true;
    if (!claimed) return;
    this.unsaved = true;
    this.basedOn = claimed;
  }

  /** Its whole content is `content` now (the old body never fetched). */
  replaced(content: Buffer): void {
    this.body = Buffer.from(content);
    this.unsaved = true;
  }

  /** The body an edit starts from, fetched (`body`) when none was here; one another write put here meanwhile stays. */
  loaded(body: Buffer): Buffer {
    this.body ??= Buffer.from(body);
    return this.body;
  }

  /**
   * The first write through a descriptor that read `snapshot` (version `base`) builds on what it
   * read, when nothing is loaded or written here yet.
   */
  buildOn(snapshot: Buffer, base: Base): void {
    if (this.body || this.unsaved || this.appended) return;
    this.body = Buffer.from(snapshot);
    this.basedOn = base;
  }

  /**
   * An append-only buffer is needed whole: `load` fetches the body (and says the version it is),
   * and what was appended since goes on it. Concurrent callers share the one load.
   */
  materialize(load: () => Promise<{ body: Buffer; base: Base }>): Promise<void> {
    this.loading ??= (async () => {
      try {
        const { body, base } = await load();
        this.basedOn = base;
        const tail = this.appended ?? Buffer.alloc(0);
        this.body = Buffer.concat([body, tail]);
        if (tail.length) this.unsaved = true;
        this.appended = undefined;
      } finally {
        this.loading = undefined;
      }
    })();
    return this.loading;
  }

  /** `data` written at `at` (a hole of zeros before it, past the end); returns the new size. */
  writeAt(data: Buffer, at: number): number {
    const current = this.body ?? Buffer.alloc(0);
    const length = Math.max(current.length, at + data.length);
    handlingBody(length);
    let backing = this.backing;
    const isView =
      backing !== undefined && current.buffer === backing.buffer && current.byteOffset === backing.byteOffset;
    if (!backing || !isView || length > backing.length) {
      backing = Buffer.alloc(Math.max(length, Math.min(length * 2, length + 64 * 1024 * 1024), 16 * 1024));
      current.copy(backing);
      this.backing = backing;
    } else if (at > current.length) {
      backing.fill(0, current.length, at);
    }
    data.copy(backing, at);
    this.body = backing.subarray(0, length);
    this.unsaved = true;
    return length;
  }

  /** Cut or extended (with zeros) to `size`. */
  truncate(size: number): void {
    const content = this.body ?? Buffer.alloc(0);
    const next = Buffer.alloc(size);
    content.copy(next, 0, 0, Math.min(size, content.length));
    this.body = next;
    this.unsaved = true;
  }

  /** Bytes appended through an append-only descriptor (the body still not here). */
  append(data: Buffer): void {
    this.appended = Buffer.concat([this.appended ?? Buffer.alloc(0), data]);
    this.unsaved = true;
  }

  /** Its appended bytes go to be saved: taken out, so stat counts them once (in the journal). */
  takeAppended(): Buffer {
    const tail = this.appended ?? Buffer.alloc(0);
    this.appended = Buffer.alloc(0);
    this.unsaved = false;
    return tail;
  }

  /** Their save failed: they come back before any appended since. */
  appendedBack(tail: Buffer): void {
    this.appended = Buffer.concat([tail, this.appended ?? Buffer.alloc(0)]);
    this.unsaved = true;
  }

  /**
   * Its body goes to be saved: clean from now, so a write while the save is out makes it dirty
   * again and the next flush saves that (note.ts: the rule for await).
   */
  saving(): void {
    this.unsaved = false;
  }

  /** The save failed: its writes are unsaved again. */
  saveFailed(): void {
    this.unsaved = true;
  }

  /**
   * The service took `sent` (through write-through) and answered `body`, version `base`: with no
   * write since, the buffer is what the service has; a write since builds on it when it landed as sent.
   */
  sent(sent: string, body: string, base: Base): void {
    if (!this.unsaved) this.body = Buffer.from(body, "utf8");
    if (!this.unsaved || body === sent) this.basedOn = base;
  }

  /**
   * A write would take it past the largest note: what was written since its last save is
   * dropped; `saved`: it has one (on the service or journalled), read again from there; else it
   * stays what its create made, empty and unsaved.
   */
  dropUnsaved(saved: boolean): void {
    this.backing = undefined;
    if (this.appended) this.appended = Buffer.alloc(0);
    this.body = saved ? null : Buffer.alloc(0);
    this.unsaved = !saved;
  }

  /** Its descriptors went on with a local file: nothing left to save; `released`: nothing holds it either. */
  handedAway(released: boolean): void {
    this.unsaved = false;
    if (released) this.holders = 0;
  }

  /** Its save became a conflict copy: it goes on with `body` (its own, or the save journalled). */
  detach(journalled: Buffer | undefined): void {
    this.body ??= journalled ?? null;
    this.apart = true;
  }

  /** A save of ours landed as `base`: the next save builds on it. */
  rebase(base: Base): void {
    this.basedOn = base;
  }

  /** A save of ours landed as `base` and the note shows it: the buffer is the note's again. */
  reattach(base: Base): void {
    this.basedOn = base;
    this.apart = false;
  }
}

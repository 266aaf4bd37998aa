// One note's local state, in one object: its open buffer, the body of its save waiting in the
// journal, its renames whose journal entry is not written yet, the size and times stat shows, the
// context and tags set before the service had it, and whether its place still has to be sent.
// Every field is private: the parts read them through the getters (tree.ts FileNode.note,
// attached by Notes.of) and change them only through its events (`opened`, `write`, `close`,
// `rename`, `unlink`, `journalledSave`, `delivered`, `refused`, `forgotten`; the tree's remote
// events through Notes). Where it stands (`state`) and what `close`, `unlink` and the remote events
// do there come from lifecycle.ts's table, run here; the caller does the I/O the action names.
//
// The rule for await (the JavaScript side runs one operation at a time between awaits):
//   - every method here is synchronous, so a note's fields change in one step, never half;
//   - a caller that reads a note, awaits, and then acts on what it read reads again after the
//     await (a write, a delivery or a remote change may have come between); a "nothing unsaved"
//     flag is cleared before the await, so a write across it sets it again;
//   - one operation changes things in this order: the tree (a name shows at once), the note, the
//     journal (its put awaited: the save is on disk before the program is answered), and last the
//     delivery (deliverSoon). A delivery answered does the reverse: journal, note, tree.
// Where an await matters, the line before it points here ("note.ts: the rule for await").
//
// Attachments (issue 48; designed, not built: docs/mount-internals.md, "Attachments through the
// journal") are to be Notes of another kind, not siblings: the same owner of the open buffer,
// journalled bytes, size, times and renames, the same table, their bytes journalled by reference.
import type { Base } from "./base.ts";
import { type Clock, systemClock } from "./clock.ts";
import type { Journal } from "./delivery/journal.ts";
import { journalKey } from "./delivery/journalKeys.ts";
import { type Action, decide, type NoteEvent, type NoteState } from "./lifecycle.ts";
import { OpenNote } from "./openNote.ts";
import type { FileNode, NoteMeta, PendingMeta, RemoteEvents } from "./tree.ts";

/**
 * What a note reads of the rest of the mount: the journal (its saves waiting), whether the
 * delivery has its entry on the way, and whom to tell of a size change.
 */
export interface NoteSurroundings {
  readonly journal: Pick<Journal, "get">;
  /** Whether the journal entry `key` may be on its way to the service right now (delivery/runningRound.ts). */
  onItsWay(key: string): boolean;
  /** Its attributes changed (the kernel's cached size must go). */
  changed(node: FileNode): void;
  /** The times this device kept for its current content (meta/noteTimes.ts), if any. */
  keptTimes(node: FileNode): { mtimeMs: number; atimeMs?: number } | undefined;
  /** The wall clock its times are read from (clock.ts; default: the machine's). */
  readonly clock?: Clock;
}

/** The times a note shows where this mount set them (undefined: the service's). */
export interface TimesShown {
  readonly mtimeMs?: number;
  readonly ctimeMs?: number;
  readonly atimeMs?: number;
}

export class Note {
  readonly node: FileNode;
  private readonly notes: Notes;
  /** The buffer its open descriptors share, from the first open to the last close. */
  private openBuffer: OpenNote | undefined;
  /** The body of its newest save in the journal, not yet delivered: what reads must see. */
  private journalledBody: Buffer | undefined;
  /** Renames of it shown already whose journal entry waits for the journal (e.g. an fdatasync). */
  private renamesWaiting = 0;
  /** The size stat shows while saves are on their way (undefined: the service's). */
  private sizeShown: number | undefined;
  /** It continues a note left under a name (a claim): its next save sends its name and folder too. */
  private placeNotSent = false;
  /**
   * The mtime shown, once anything here set it: a local write or truncate (now), utimens (what the
   * program asked), a remote metadata-only change (pinned to what was shown). Our own deliveries
   * never change it: a program that stat()s a note around its save (vim's "changed since reading"
   * check) must see the same time. Cleared only when the content changes remotely.
   */
  private mtimeShown: number | undefined;
  /** The ctime shown once anything here changed the note (content, times, name, mode, owner). */
  private ctimeShown: number | undefined;
  /** The atime a program set (utimens); otherwise the mtime. */
  private atimeShown: number | undefined;
  /** Context and tags set on it before the service had it: they go with its create (or next save). */
  private metaNotSent: PendingMeta | undefined;

  constructor(node: FileNode, notes: Notes) {
    this.node = node;
    this.notes = notes;
  }

  get open(): OpenNote | undefined {
    return this.openBuffer;
  }

  get journalled(): Buffer | undefined {
    return this.journalledBody;
  }

  /** A rename of it is shown but not yet in the journal. */
  get renaming(): boolean {
    return this.renamesWaiting > 0;
  }

  get dirtySize(): number | undefined {
    return this.sizeShown;
  }

  get placeUnsent(): boolean {
    return this.placeNotSent;
  }

  /** The mtime shown (undefined: the service's updatedAt). */
  get mtimeMs(): number | undefined {
    return this.mtimeShown;
  }

  get ctimeMs(): number | undefined {
    return this.ctimeShown;
  }

  get atimeMs(): number | undefined {
    return this.atimeShown;
  }

  /** Context and tags set here that the service has not received yet. */
  get pendingMeta(): PendingMeta | undefined {
    return this.metaNotSent;
  }

  /** Where it stands now (lifecycle.ts: the states and the table). */
  get state(): NoteState {
    return this.notes.stateOf(this.node);
  }

  /** A descriptor on it flushes or closes: `save` or `save-empty` when that journals a body. */
  close(): Action {
    return decide(this.state, "close");
  }

  /** Its name is unlinked: `forget` when it never left this mount (no request at all). */
  unlink(): Action {
    return decide(this.state, "unlink");
  }

  /** Its first descriptor opens: the buffer every descriptor on it shares, based on `base`. */
  opened(base: Base, appendOnly: boolean): OpenNote {
    const open = new OpenNote(this.node, base, appendOnly);
    this.openBuffer = open;
    this.notes.track(this, true);
    return open;
  }

  /** Its last descriptor closed (or its descriptors went on with a local file): stat shows its own body again. */
  closed(): void {
    this.openBuffer = undefined;
    this.notes.track(this, false);
    this.refreshSize();
  }

  /**
   * Its descriptors went on with a local file it became (renamed aside, kept as bytes): `open`
   * has nothing left to save; `released`: no descriptor holds it any more either.
   */
  handedAway(open: OpenNote, released: boolean): void {
    open.handedAway(released);
    this.openBuffer = undefined;
    this.notes.track(this, false);
  }

  /**
   * Its save became a conflict copy while it is open: its descriptors go on with the body they
   * were opened on (the kernel may hold its pages), and a write through them builds on it.
   */
  private openDetached(): void {
    this.openBuffer?.detach(this.journalledBody);
  }

  /** A save of ours landed as `base`: the open buffer's next save builds on it. */
  private openRebased(base: Base): void {
    this.openBuffer?.rebase(base);
  }

  /** A save of ours landed as `base` and the note shows it: the open buffer is the note's again. */
  private openReattached(base: Base): void {
    this.openBuffer?.reattach(base);
  }

  /** Written through a descriptor (or truncated, or appended to): stat shows `size` now, and times move. */
  write(size: number, at = this.notes.clock.now()): void {
    this.sizeShown = size;
    this.touched(at);
  }

  /** Its content changed here (or what the kernel holds of it must go): mtime and ctime move. */
  touched(at = this.notes.clock.now()): void {
    this.mtimeShown = at;
    this.ctimeShown = at;
  }

  /** Made here now: its times (those of the local file it continues, if any) and the tags it claimed. */
  made(times: { mtimeMs: number; atimeMs?: number }, meta: PendingMeta | undefined): void {
    this.mtimeShown = times.mtimeMs;
    this.atimeShown = times.atimeMs;
    this.ctimeShown = this.notes.clock.now();
    this.metaNotSent = meta;
  }

  /** Times a program set (utimens). */
  timesSet(mtimeMs: number, atimeMs: number, at = this.notes.clock.now()): void {
    this.mtimeShown = mtimeMs;
    this.atimeShown = atimeMs;
    this.ctimeShown = at;
  }

  /** Times this device kept for its content (meta/noteTimes.ts), applied when its Note is made. */
  timesKept(mtimeMs: number, atimeMs: number | undefined): void {
    this.mtimeShown = mtimeMs;
    this.atimeShown = atimeMs;
  }

  /** Its mtime moved past `mtimeMs`: another file showed that very time and size under its name. */
  shownApart(mtimeMs: number): void {
    this.mtimeShown = mtimeMs;
  }

  /** Something of it changed here besides its content (mode, owner, name): ctime moves. */
  changedHere(at = this.notes.clock.now()): void {
    this.ctimeShown = at;
  }

  /** It shows the service's version again (its save became a conflict copy): the service's times. */
  timesFromService(): void {
    this.mtimeShown = undefined;
    this.ctimeShown = undefined;
  }

  /**
   * The feed's version `next` of it is shown: mtime follows the content (a remote edit shows its
   * own time, so auto_cache drops stale pages; a metadata-only change keeps the time shown so far).
   */
  remoteShown(shown: NoteMeta, next: NoteMeta): void {
    if (shown.contentHash !== next.contentHash) this.mtimeShown = undefined;
    else this.mtimeShown ??= Date.parse(shown.updatedAt);
    if (shown.etag !== next.etag) this.ctimeShown = undefined; // ctime: the service's change
  }

  /**
   * The service answered a change of ours (a save, a rename, tags): no news to a program that read
   * it, so the time it showed stays, though the service's updatedAt moved.
   */
  ownAnswerShown(shown: NoteMeta): void {
    this.mtimeShown ??= Date.parse(shown.updatedAt);
  }

  /** Context or tags set on it before the service has it (an xattr, a temp file's going with it). */
  metaSet(patch: PendingMeta): void {
    this.metaNotSent = { ...this.metaNotSent, ...patch };
  }

  /** The pending context and tags `sent` went to the service (a later change of them stays). */
  metaDelivered(sent: PendingMeta | undefined): void {
    if (this.metaNotSent === sent) this.metaNotSent = undefined;
  }

  /** A save of it is in the journal: reads see `body` until it is delivered; its place went with it. */
  journalledSave(body: Buffer): void {
    this.placeNotSent = false;
    this.journalledBody = body;
    this.sizeShown = body.length;
    this.notes.trackJournalled(this, true);
  }

  /** Its save found in the journal at start: shown as it was written. */
  restoredSave(body: Buffer): void {
    this.journalledBody = body;
    this.sizeShown = body.length;
    this.notes.trackJournalled(this, true);
  }

  /** Appends to it found in the journal at start: the service's size plus theirs. */
  restoredAppends(): void {
    this.sizeShown = this.notes.appendedSize(this.node);
  }

  /**
   * Event `delivered`: its journal entry reached the service. `newerWaits`: a later save of it is
   * still in the journal (reads go on seeing that one). `conflict`: the service had moved on and
   * ours became a conflict copy (open descriptors go on with the body they opened on). `landed`:
   * the version ours made, which the open buffer's next save builds on; `reattach`: and the open
   * buffer is the note's again.
   */
  delivered(outcome: { newerWaits: boolean; conflict?: boolean; landed?: Base; reattach?: boolean }): void {
    if (outcome.conflict) this.openDetached();
    if (!outcome.newerWaits) this.saveLeftJournal();
    this.refreshSize();
    if (!outcome.landed) return;
    if (outcome.reattach) this.openReattached(outcome.landed);
    else this.openRebased(outcome.landed);
  }

  /** Event `refused`: the service refused its save for good (its bytes are kept aside): stat shows the service's. */
  refused(): void {
    this.saveLeftJournal();
    this.refreshSize();
  }

  /** Its journalled save was dropped unsent (unlink's `forget`, or made moot): reads go to its version again. */
  forgotten(): void {
    this.saveLeftJournal();
  }

  private saveLeftJournal(): void {
    this.journalledBody = undefined;
    this.notes.trackJournalled(this, false);
  }

  /** Its place was sent to the service (a save of it through write-through). */
  placeSent(): void {
    this.placeNotSent = false;
  }

  /** Made to continue a note left under a name (a claim). */
  continuesClaim(): void {
    this.placeNotSent = true;
  }

  /** Event `rename`: a rename of it is shown; its journal entry is being written (renameJournalled follows). */
  rename(): void {
    this.renamesWaiting++;
  }

  /** A rename's journal entry is written (or failed): the journal answers for its place now. */
  renameJournalled(): void {
    this.renamesWaiting--;
  }

  /**
   * The size stat shows while it has saves on their way: its newest local body (an open buffer,
   * else the last journalled save), or nothing once the service has the newest.
   */
  refreshSize(): void {
    const open = this.openBuffer;
    // An open buffer with unsaved writes, or one the note no longer shows (detached): every read
    // of the note goes to that buffer while it is open.
    const buffer = open?.content && (open.dirty || open.detached) ? open.content : undefined;
    this.sizeShown = buffer?.length ?? this.journalledBody?.length ?? this.notes.appendedSize(this.node);
    this.notes.changed(this.node);
  }
}

/**
 * Every note's Note, made on first need; and the notes open now or with a save journalled. It
 * answers the tree's remote events for any note, with a Note or without one (nothing of it is
 * open or journalled then, but a rename or metadata change of it may wait in the journal).
 */
export class Notes implements RemoteEvents {
  readonly journal: Pick<Journal, "get">;
  readonly clock: Clock;
  private readonly surroundings: NoteSurroundings;
  private readonly openNow = new Set<Note>();
  private readonly journalledNow = new Set<Note>();

  constructor(surroundings: NoteSurroundings) {
    this.surroundings = surroundings;
    this.journal = surroundings.journal;
    this.clock = surroundings.clock ?? systemClock;
  }

  /** Where `node` stands now, from its open buffer, its journal entry and the delivery. */
  stateOf(node: FileNode): NoteState {
    if (node.note?.open?.dirty) return "dirty";
    const key = journalKey(node);
    const entry = this.journal.get(key);
    if (entry && !entry.delete) {
      if (this.surroundings.onItsWay(key)) return "in-flight";
      return node.id ? "pending-update" : "pending-create";
    }
    return node.id ? "clean" : "new";
  }

  /**
   * The change feed brings `next`, a version of `node` made elsewhere: `apply-remote` (its times
   * follow it now) or `keep-local`.
   */
  remoteChange(node: FileNode, next: NoteMeta): Action {
    const action = this.decide(node, "remote-change");
    const shown = node.meta;
    // A note with no Note shows the service's times: only a metadata-only change pins one.
    if (action === "apply-remote" && shown && (node.note || shown.contentHash === next.contentHash))
      this.of(node).remoteShown(shown, next);
    return action;
  }

  ownAnswer(node: FileNode): void {
    if (node.meta) this.of(node).ownAnswerShown(node.meta);
  }

  /** The change feed says `node` was deleted elsewhere: `remove`, or `keep-and-recreate` for a save waiting. */
  remoteDelete(node: FileNode): Action {
    return this.decide(node, "remote-delete");
  }

  private decide(node: FileNode, event: NoteEvent): Action {
    return decide(this.stateOf(node), event);
  }

  /**
   * `node`'s Note (made now if it had none). A new one starts from the times this device kept for
   * its content: applied here, not at start, so a mount of 100,000 notes with kept times (rsync -a)
   * makes no Note for a note nothing touches.
   */
  of(node: FileNode): Note {
    if (node.note) return node.note;
    const note = new Note(node, this);
    const kept = this.surroundings.keptTimes(node);
    if (kept) note.timesKept(kept.mtimeMs, kept.atimeMs);
    node.note = note;
    return note;
  }

  /** The times `node` shows where this mount set them: its Note's, else those kept for its content. */
  timesOf(node: FileNode): TimesShown | undefined {
    return node.note ?? this.surroundings.keptTimes(node);
  }

  /** The notes with descriptors open on them. */
  open(): IterableIterator<Note> {
    return this.openNow.values();
  }

  /** The note made here whose journalled save is the create `createKey` (its node has no id yet). */
  journalledCreate(createKey: string): Note | undefined {
    for (const note of this.journalledNow) if (note.node.createKey === createKey) return note;
    return undefined;
  }

  /** Called by a Note when a save of it enters or leaves the journal. */
  trackJournalled(note: Note, journalled: boolean): void {
    if (journalled) this.journalledNow.add(note);
    else this.journalledNow.delete(note);
  }

  /** The size of a note only appended to (its body never loaded): the service's plus what is on its way. */
  appendedSize(node: FileNode): number | undefined {
    const entry = this.journal.get(journalKey(node));
    const journalled = entry?.append ? Buffer.byteLength(entry.content ?? "", "utf8") : 0;
    const open = node.note?.open?.tail?.length ?? 0;
    return journalled || open ? (node.meta?.size ?? 0) + journalled + open : undefined;
  }

  /** Whether appends to `node` wait in the journal or in an open descriptor (their place is the service's end). */
  appendsOnTheirWay(node: FileNode): boolean {
    return this.journal.get(journalKey(node))?.append === true || node.note?.open?.tail !== undefined;
  }

  /** Called by a Note when it opens or closes. */
  track(note: Note, open: boolean): void {
    if (open) this.openNow.add(note);
    else this.openNow.delete(note);
  }

  changed(node: FileNode): void {
    this.surroundings.changed(node);
  }
}

// A journal entry: one note's (or folder's) saves waiting for the service, and how a newer save
// of the same note is laid over one still waiting (journal.ts keeps them, in order, on disk).
import { contentHash } from "../../lib/contentHash.ts";

export type Saved = Omit<JournalEntry, "seq" | "savedAt" | "rev">;

/**
 * One line of saves made of `older` and then `newer` (of the same note): a body replaces what came
 * before it, appends go on top of a body or of appends, a rename stays. A delete replaces all.
 */
export function savedOver(older: Saved, newer: JournalEntry): Saved {
  if (newer.delete || older.delete) return newer;
  const appended = newer.append === true && newer.content !== undefined;
  const content = appended ? (older.content ?? "") + newer.content : (newer.content ?? older.content);
  return {
    ...newer,
    content,
    // Appends stay appends only on appends (or on nothing): on a body they make a longer body.
    append: appended
      ? older.append === true || older.content === undefined
        ? true
        : undefined
      : newer.content === undefined
        ? older.append
        : newer.append,
    move: older.move || newer.move || undefined,
    blob: newer.blob ?? older.blob,
    // The line begins where the older save's did (what was delivered), as `laidOver` keeps the first base.
    baseEtag: older.append ? newer.baseEtag : older.baseEtag,
    baseHash: older.append ? newer.baseHash : older.baseHash,
  };
}

/**
 * The entry a save makes over `previous`, the same note's entry still pending (none: a new line),
 * at revision `rev` and place `seq` in line, saved at `savedAt` (the mount's clock).
 */
export function laidOver(
  entry: Saved,
  previous: JournalEntry | undefined,
  rev: number,
  seq: number,
  savedAt: string,
): JournalEntry {
  // A delete replaces whatever was pending for the note (a rename of a deleted note is moot), as
  // a line of its own: an answer about a save sent before it never stands for it.
  if (entry.delete) return { ...entry, seq, savedAt, rev, line: rev };
  return {
    ...entry,
    // A rename keeps a pending body, a save keeps a pending rename; appends add up.
    content:
      entry.append && previous?.append
        ? (previous.content ?? "") + (entry.content ?? "")
        : (entry.content ?? previous?.content),
    append: entry.content === undefined ? previous?.append : entry.append,
    move: entry.move || previous?.move || undefined,
    // An attachment's bytes: the newest snapshot, or the one a rename leaves waiting.
    blob: entry.blob ?? previous?.blob,
    // Keep the first base: the remote never saw the saves in between. A whole body over
    // appends still waiting supersedes them (it was written after them: `> note` after
    // `>> note`, or built on them, open/reads.ts materialize) on the base it was given: the
    // version they were going onto.
    baseEtag: previous && !previous.append ? previous.baseEtag : entry.baseEtag,
    baseHash: previous && !previous.append ? previous.baseHash : entry.baseHash,
    seq,
    savedAt,
    rev,
    line: previous && !previous.delete ? (previous.line ?? 0) : rev,
    superseded: supersededBy(previous, entry),
  };
}

/** A body written over another body still waiting: the line remembers the older one's hash. */
export function supersededBy(previous: JournalEntry | undefined, entry: Saved): string[] | undefined {
  const kept = previous && !previous.delete ? previous.superseded : undefined;
  if (!previous || previous.delete || previous.append || previous.content === undefined) return kept;
  if (entry.content === undefined || entry.append) return kept;
  return [...(kept ?? []), contentHash(previous.content)].slice(-SUPERSEDED_KEPT);
}

export interface JournalEntry {
  seq: number;
  /** Remote id (a folder's for a folder delete), or null for a note not created yet. */
  fileId: string | null;
  /** Idempotency-Key of the create: a replay after a lost response cannot make two notes. */
  createKey: string;
  name: string;
  folderId: string | null;
  /** The body to save; absent when only the note's place changed. With `append`: bytes to add. */
  content?: string;
  /**
   * `content` is to be added at the end of whatever version the service has (`file.append`): a
   * note only appended to (`>>`) is never read. Later appends add to it; it always goes in bulk
   * (its request is kept on disk until answered: an append is never applied twice).
   */
  append?: true;
  /** The note was renamed or moved here: `name` and `folderId` are to be sent too. */
  move?: boolean;
  /**
   * An attachment's entry (attachments/), not a note's: its bytes are in the snapshot `blob` names
   * (never in `content`), and it goes on its own, never in bulk.
   */
  attachment?: true;
  /** The SHA-256 of the attachment's bytes to save: the name of their snapshot (attachmentBytes.ts). */
  blob?: string;
  /** The note (or folder) was deleted here: that is all there is to send. */
  delete?: "file" | "folder";
  /** A folder made here (mkdir): `name` in `folderId` (or in the pending folder `parentKey`). */
  folder?: true;
  /**
   * The folder it goes in is itself on its way (made here, no id yet): that folder's key. Its
   * entry comes first; `folderId` is filled in once it exists (rebind).
   */
  parentKey?: string;
  /** The ETag the edit was based on (If-Match on replay), and that version's content hash. */
  baseEtag: string | null;
  baseHash?: string | null;
  path: string;
  savedAt: string;
  /**
   * The journal's revision of this entry: every write takes the next one, never reused (also
   * across restarts: a bulk request on its way holds revisions too). A delivery of revision n
   * leaves a newer one in line.
   */
  rev?: number;
  /**
   * The revision this line of saves began at: its first save, or the rest left after a delivery.
   * An answer to a request made before it (rev < line) is not about this entry: that line was done
   * (delivered, or replaced by a delete), and this one holds saves made after (absent: as old).
   */
  line?: number;
  /**
   * The content hashes of bodies this line held before its current one, newest last (a few). One
   * of them may have reached the service with its answer lost (a kill -9 of the daemon while it
   * was on its way): a 412 that meets exactly such a version, one past the base, met our own save,
   * not an edit made elsewhere (conflicts.ts).
   */
  superseded?: string[];
}

/** How many superseded bodies a line remembers: only the one on its way when the daemon died matters. */
const SUPERSEDED_KEPT = 8;

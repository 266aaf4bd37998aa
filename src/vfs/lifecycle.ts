// A note's lifecycle: the states a note of this mount can be in, and — in one table — what each
// event does in each state. A note's Note answers where it stands (note.ts `state`, from its open
// buffer, its journal entry and the delivery) and runs the table for each event (`close`,
// `unlink`, `remoteChange`, `remoteDelete`); the parts carry out the action it names, none keeps
// its own idea of where a note stands. (After rclone's vfscache/item.go, which owns one cached
// item's whole life, and mountpoint-s3's upload states.)
//
// The promises this table keeps (docs/architecture.md, "the write path's invariants"):
//   1. the bytes a program saw written are what every later read returns, here and (once
//      delivered) on the service, until a newer local write or a remote change kept as a conflict;
//   2. every acknowledged save has a journal entry until the service confirmed it;
//   3. a remote change never overwrites an undelivered local save; our own saves are never taken
//      for remote ones;
//   4. a pending note is a note (xattrs, renames, deletes, pins work at once, delivered in order);
//   5. a note keeps its identity through rewrites: a name it leaves behind is claimed (claims.ts).

/**
 * - `new`: made here (create), nothing written or flushed yet: nothing to send.
 * - `dirty`: an open handle holds writes not yet saved (they are saved at flush/close).
 * - `pending-create`: saved here, its create waits in the journal.
 * - `pending-update`: on the service; a save, rename or metadata change waits in the journal.
 * - `in-flight`: its journal entry may be on its way right now (a delivery is running).
 * - `clean`: on the service, nothing of it waiting here.
 *
 * What a note leaves behind when it loses its name is not a note but a claim (tree.ts `Claim`):
 * renamed away to a non-note name (a ghost), kept local as bytes that are not UTF-8, or deleted
 * while the delete still waits in the journal (a tombstone).
 */
export type NoteState = "new" | "dirty" | "pending-create" | "pending-update" | "in-flight" | "clean";

export type NoteEvent =
  /** flush or close of a handle (a save, if anything was written). */
  | "close"
  /** unlink of its name. */
  | "unlink"
  /** the change feed brings a version of it made elsewhere (content or metadata). */
  | "remote-change"
  /** the change feed says it was deleted elsewhere. */
  | "remote-delete";

export type Action =
  /** nothing to do. */
  | "none"
  /** journal the handle's content (write-behind save). */
  | "save"
  /** journal an empty body: `touch new.md` makes a note. */
  | "save-empty"
  /** it never left: forget it (and its journal entry), no request. */
  | "forget"
  /** its create may be on its way: wait for it, then delete it on the service. */
  | "settle-then-delete"
  /** journal the delete (If-Match its last version) and leave a tombstone for its name. */
  | "delete-later"
  /** show the remote version (times follow the content). */
  | "apply-remote"
  /** keep showing the local save; the delivery's If-Match decides (conflict copy if both changed). */
  | "keep-local"
  /** remove it from the tree. */
  | "remove"
  /** keep showing it: its pending save re-creates it when delivered (the service answers 404). */
  | "keep-and-recreate";

type Table = Record<NoteState, Record<NoteEvent, Action>>;

/**
 * The table. Rows: states; columns: events. (`dirty` is checked before the journal: a note with
 * an open unsaved buffer is dirty whatever waits for it in the journal.)
 */
export const TRANSITIONS: Table = {
  //                  close           unlink                 remote-change   remote-delete
  new: { close: "save-empty", unlink: "forget", "remote-change": "apply-remote", "remote-delete": "remove" },
  dirty: {
    close: "save",
    unlink: "settle-then-delete",
    "remote-change": "keep-local",
    "remote-delete": "keep-and-recreate",
  },
  "pending-create": {
    close: "none",
    unlink: "forget",
    "remote-change": "keep-local",
    "remote-delete": "keep-and-recreate",
  },
  "pending-update": {
    close: "none",
    unlink: "delete-later",
    "remote-change": "keep-local",
    "remote-delete": "keep-and-recreate",
  },
  "in-flight": {
    close: "none",
    unlink: "settle-then-delete",
    "remote-change": "keep-local",
    "remote-delete": "keep-and-recreate",
  },
  clean: {
    close: "none",
    unlink: "delete-later",
    "remote-change": "apply-remote",
    "remote-delete": "remove",
  },
};

/** What `event` does to a note in `state`. */
export function decide(state: NoteState, event: NoteEvent): Action {
  return TRANSITIONS[state][event];
}

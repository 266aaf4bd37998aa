// The nodes of the in-memory namespace (tree.ts): notes, local-only files and folders, and the
// claims a note leaves behind under a name. Only types: what each field means is said here once.
import type { TxtFile, TxtFolder } from "../lib/apiTypes.ts";
import type { AttachmentBinding } from "./attachments/binding.ts";
import type { Note } from "./note.ts";

/** What the mount keeps of a note's record: all but its URLs (`endpoint`, `raw`), never read here. */
export type NoteMeta = Omit<TxtFile, "endpoint" | "raw">;

/** Context and tags set here that the service has not received yet. */
export interface PendingMeta {
  context?: string;
  tags?: string[];
}

export interface FileNode {
  kind: "file";
  name: string;
  parent: DirNode;
  /** Remote id; null until a newly created note is first uploaded. */
  id: string | null;
  meta: NoteMeta | null;
  /** The name to store remotely (what the user typed, or the remote name). */
  remoteName: string;
  /** Idempotency key of the create, so a retried upload never makes two notes. */
  createKey: string;
  /** Permission bits set here (chmod, the create's mode): this device's (meta/deviceAttrs.ts); else 0644. */
  mode?: number;
  /** Its owner on this device, when not the mount's (made by another user, chown). */
  uid?: number;
  gid?: number;
  /** Its local state (note.ts: times shown, tags waiting, what is open or journalled): made on first need, by Notes.of only. */
  note?: Note;
}

export interface LocalNode {
  kind: "local";
  name: string;
  parent: DirNode;
  /** Where the bytes live in the cache dir ("" for a symbolic link: it has only its target). */
  blob: string;
  /** A symbolic link's target (local/specialFiles.ts). */
  link?: string;
  /** A fifo, socket or device node (local/specialFiles.ts). */
  special?: "fifo" | "socket" | "device";
  /** A device node's type bits (character or block) and number. */
  rdev?: { type: number; dev: number };
  mode: number;
  /** Its owner, when not the mount's (a program of another user made it, or chown). */
  uid?: number;
  gid?: number;
  size: number;
  mtimeMs: number;
  atimeMs?: number;
  ctimeMs?: number;
  /** Context and tags set on the file (`rsync -X`, `cp --preserve=all` set them on a temp file): they go with it when it becomes a note. */
  pendingMeta?: PendingMeta;
  /** A note renamed to a non-note name (vim's `note~`, `.fuse_hidden*`): still bound to its remote id. */
  ghostOf?: Claim;
  /**
   * A note made here and kept local before the service had it (its bytes stopped being UTF-8):
   * a note, not a temp file, so renamed over another note it brings none of its tags
   * (namespace/replacements.ts), as one the service had would not.
   */
  keptNote?: true;
  /** An attachment: a file that is not a note, on the service too (attachments/binding.ts). */
  attachment?: AttachmentBinding;
}

/**
 * A note's identity left behind under a name: by a rename to a non-note name (a ghost: vim's
 * `note~`, `sed -i.bak`'s backup, libfuse's `.fuse_hidden*` for a note held open), by content that
 * cannot be a note (not UTF-8), or by a delete still in the journal. Whatever next takes the name
 * `shownAs` in that folder (a create, a rename onto it) continues the note: same id, tags, history.
 */
export interface Claim {
  id: string;
  /** The version the note's next save is based on (If-Match). */
  etag: string;
  hash?: string;
  /** Its name on the service, and the name it had here (what a create or rename must take). */
  name: string;
  shownAs: string;
  /** Its record, so a pending claimant shows its attributes (tags, context) at once. */
  meta?: NoteMeta;
  /** Tags or context set here that the note has not received yet (set while it was a local file). */
  pendingMeta?: PendingMeta;
}

export interface DirNode {
  kind: "dir";
  name: string;
  parent: DirNode | null;
  /** null: the root, a folder of the mount only (`Shared with me/`), or one not created remotely yet. */
  id: string | null;
  meta: TxtFolder | null;
  children: Map<string, Node>;
  /** Set while a folder made here (mkdir) is on its way to the service: its create's key. */
  createKey?: string;
  /**
   * A folder kept on this machine only (see localDirs.ts): "until-note" while it holds no note (a
   * dot-folder: it is created on the service with the first note put inside), "always" for the
   * folders tools keep their own state in (.git, node_modules: what is inside stays local).
   */
  localOnly?: "until-note" | "always";
  /** Names two or more children want: all but one show it with a suffix (folderLayout.ts). */
  namedApart?: Set<string>;
  /** Permission bits set here (chmod, mkdir's mode): this device's (meta/deviceAttrs.ts); else 0755. */
  mode?: number;
  /** Its owner on this device, when not the mount's (made by another user, chown). */
  uid?: number;
  gid?: number;
  /**
   * Times shown instead of the record's: set by a program (`touch -d`, `rsync -a`), kept on this
   * device; or moved by a change made inside since the mount started (a create, a removal, a rename).
   */
  localMtimeMs?: number;
  localAtimeMs?: number;
  localCtimeMs?: number;
  /** Its times were set by a program: kept on this device (also as they move on). */
  timesKept?: true;
}

export type Node = FileNode | LocalNode | DirNode;

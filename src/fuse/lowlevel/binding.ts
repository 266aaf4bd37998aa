// Loads txtfs's libfuse3 low-level binding (native/fuse3, built by scripts/setup) and types it.

import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

/** A request being answered: whoever holds it must answer it exactly once. */
export type Handle = number;

/** Numbers of the operations the binding hands over (native/fuse3/txtfs_fuse3.c has the same). */
export const Op = {
  LOOKUP: 1,
  FORGET: 2,
  GETATTR: 3,
  SETATTR: 4,
  READLINK: 5,
  MKDIR: 6,
  UNLINK: 7,
  RMDIR: 8,
  SYMLINK: 9,
  RENAME: 10,
  OPEN: 11,
  READ: 12,
  WRITE: 13,
  FLUSH: 14,
  RELEASE: 15,
  FSYNC: 16,
  READDIRPLUS: 17,
  STATFS: 18,
  SETXATTR: 19,
  GETXATTR: 20,
  LISTXATTR: 21,
  REMOVEXATTR: 22,
  CREATE: 23,
  /** Writes held in C (native/fuse3/held.c), handed over: (fh, bytes, offset), nothing to answer. */
  HELD: 24,
  /** A fifo, socket or device node. */
  MKNOD: 25,
} as const;

/** What an open or create answer may ask of the kernel. */
export const OPEN_DIRECT_IO = 1;
export const OPEN_KEEP_CACHE = 2;
/** No FLUSH at close (FOPEN_NOFLUSH, Linux 5.16): for handles that cannot have written. */
export const OPEN_NO_FLUSH = 4;
/** The handle's writes may be held in C (Vfs.writesCannotFail). */
export const OPEN_HOLD_WRITES = 8;

export type Dispatch = (op: number, handle: Handle | undefined, ino: number, ...args: unknown[]) => void;

export interface Fuse3Binding {
  mount(mountpoint: string, options: string[], dispatch: Dispatch, onLoopEnd: () => void): void;
  close(): void;
  exitNow(code: number): never;
  inFlight(): number;
  replyErr(h: Handle, errno: number): void;
  replyEntry(h: Handle, ino: number, stat: object | null, entryTimeout: number, attrTimeout: number): void;
  replyCreate(
    h: Handle,
    ino: number,
    stat: object,
    entryTimeout: number,
    attrTimeout: number,
    fh: number,
    openFlags: number,
  ): void;
  replyAttr(h: Handle, ino: number, stat: object, attrTimeout: number): void;
  replyOpen(h: Handle, fh: number, openFlags: number): void;
  replyBuf(h: Handle, data: Buffer, length: number): void;
  replyWrite(h: Handle, count: number): void;
  replyReadlink(h: Handle, target: string): void;
  replyXattrSize(h: Handle, size: number): void;
  replyStatfs(h: Handle, stat: object): void;
  /** Answers a listing from `offset`; returns how many of `names` it holds (from max(0, offset - 2)). */
  replyDir(
    h: Handle,
    size: number,
    offset: number,
    dirIno: number,
    parentIno: number,
    names: string[],
    inos: number[],
    stats: object[],
    entryTimeout: number,
    attrTimeout: number,
  ): number;
  notifyInode(ino: number, offset: number, length: number): void;
  notifyEntry(folderIno: number, name: string): void;
  /** Name invalidations of that folder's name still waiting are dropped (a rename onto it answered them). */
  dropEntryNotes(folderIno: number, name: string): void;

  // Read-only opens answered in C (native/fuse3/opens.c): handles NATIVE_FH | n (ops.ts).
  /**
   * Opens and stats of the note are answered in C once `afterMs` passed; `afterMs` < 0: not any
   * more. `attrs`: mtime (ms), size, mode, atime, ctime, nlink, uid, gid, and how long the kernel
   * may keep them (s), as the kernel is shown them.
   */
  openable(ino: number, afterMs: number, attrs?: Float64Array): void;
  /** No note is opened in C until marked again. */
  openableNone(): void;
  /** JavaScript opens the note (not direct I/O): whether the kernel's pages are of that version. */
  opened(ino: number, mtimeMs: number, size: number): boolean;
  /** Handles of the note made in C, still open. */
  nativeOpens(ino: number): number;
  /** The last release of a handle made in C comes to JavaScript (a removed note kept while open). */
  watchReleases(ino: number, on: boolean): void;
  /** The kernel forgot the node: C drops what it keeps of it. */
  forgetNode(ino: number): void;

  // Writes held in C (native/fuse3/held.c).
  /** Writes are held from now on, up to `maxBytes` at once, none past `limit`; 0: none from now on. */
  holdWrites(maxBytes: number, limit: number): void;
  /** The handle's writes may be held (it was emptied by a truncate through it). */
  holdable(fh: number, on: boolean): void;
  /** What is held, now JavaScript's (a daemon stopping). */
  takeHeld(): [fh: number, offset: number, bytes: Buffer] | undefined;

  // Lookups of names a folder does not have, answered in C (native/fuse3/names.c).
  /** The folder's names, all of them: a name not among them (nor added) is answered absent in C. */
  putNames(folderIno: number, names: string[]): void;
  /** `name` may exist in the folder from now on. */
  addName(folderIno: number, name: string): void;
  /** Lookups in the folder go to JavaScript until its names are put again. */
  dropNames(folderIno: number): void;
  dropAllNames(): void;
  /** Names ending so (sidecars) resolve without being among their folder's: never answered in C. */
  unlistedSuffix(suffix: string): void;
}

// TXTFS_FUSE3_BINDING: another build of the same sources (scripts/sanitize's ASan/UBSan one).
export const BINDING_PATH =
  process.env.TXTFS_FUSE3_BINDING ||
  fileURLToPath(new URL("../../../native/fuse3/build/Release/txtfs_fuse3.node", import.meta.url));

export function loadFuse3(): Fuse3Binding {
  if (!existsSync(BINDING_PATH))
    throw new Error(
      `the FUSE binding is not built (${BINDING_PATH}): install libfuse3-dev, pkg-config, gcc and make, then run scripts/setup in a clone, or install txtfs again`,
    );
  return createRequire(import.meta.url)(BINDING_PATH) as Fuse3Binding;
}

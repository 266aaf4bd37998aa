// Loads txtfs's libfuse3 low-level binding (native/fuse3, built by scripts/setup) and types it:
// every function native/fuse3 exports, documented here once (its C comments point here).

import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

/**
 * A request of the kernel on its way to an answer (the binding's pointer to it): whoever holds it
 * answers it exactly once, through one of the reply functions.
 */
export type Request = number;

/** Every request, by its operation (protocol.ts: Op); FORGET and HELD come without one to answer. */
export type Dispatch = (op: number, request: Request | undefined, ino: number, ...args: unknown[]) => void;

export interface Fuse3Binding {
  mount(mountpoint: string, options: string[], dispatch: Dispatch, onLoopEnd: () => void): void;
  close(): void;
  exitNow(code: number): never;
  inFlight(): number;
  replyErr(request: Request, errno: number): void;
  replyEntry(
    request: Request,
    ino: number,
    stat: object | null,
    entryTimeout: number,
    attrTimeout: number,
  ): void;
  replyCreate(
    request: Request,
    ino: number,
    stat: object,
    entryTimeout: number,
    attrTimeout: number,
    fh: number,
    openFlags: number,
  ): void;
  replyAttr(request: Request, ino: number, stat: object, attrTimeout: number): void;
  replyOpen(request: Request, fh: number, openFlags: number): void;
  replyBuf(request: Request, data: Buffer, length: number): void;
  replyWrite(request: Request, count: number): void;
  replyReadlink(request: Request, target: string): void;
  replyXattrSize(request: Request, size: number): void;
  replyStatfs(request: Request, stat: object): void;
  /** Answers a listing from `offset`; returns how many of `names` it holds (from max(0, offset - 2)). */
  replyDir(
    request: Request,
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

  // Read-only opens answered in C (native/fuse3/opens.c): handles NATIVE_FH | n (protocol.ts).
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
  /** The handle's writes may be held from now on (a truncate through it emptied it), or no longer (`on` false). */
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
  fileURLToPath(new URL("../../native/fuse3/build/Release/txtfs_fuse3.node", import.meta.url));

export function loadFuse3(): Fuse3Binding {
  if (!existsSync(BINDING_PATH))
    throw new Error(
      `the FUSE binding is not built (${BINDING_PATH}): install libfuse3-dev, pkg-config, gcc and make, then run scripts/setup in a clone, or install txtfs again`,
    );
  return createRequire(import.meta.url)(BINDING_PATH) as Fuse3Binding;
}

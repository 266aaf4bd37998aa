// Loads txtfs's libfuse3 low-level binding (native/fuse3, built by scripts/setup) and types it.
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
} as const;

/** What an open or create answer may ask of the kernel. */
export const OPEN_DIRECT_IO = 1;
export const OPEN_KEEP_CACHE = 2;
/** No FLUSH at close (FOPEN_NOFLUSH, Linux 5.16): for handles that cannot have written. */
export const OPEN_NO_FLUSH = 4;

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
}

export const BINDING_PATH = fileURLToPath(
  new URL("../../../native/fuse3/build/Release/txtfs_fuse3.node", import.meta.url),
);

export function loadFuse3(): Fuse3Binding {
  return createRequire(import.meta.url)(BINDING_PATH) as Fuse3Binding;
}

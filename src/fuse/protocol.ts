// The numbers the libfuse3 binding (native/fuse3) and this adapter exchange, defined once: the C
// header native/fuse3/ops.h is generated from this file (`npm run gen:fuse-ops`), and
// test/fuse/opsHeader.test.ts fails while the committed header says otherwise.

/** The operations the binding hands over: dispatch(op, request, ino, ...args). */
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

export type OpNumber = (typeof Op)[keyof typeof Op];

/** An operation's name in logs ("lookup", "rename"), by its number. */
export const OP_NAMES: Readonly<Record<number, string>> = Object.fromEntries(
  Object.entries(Op).map(([name, n]) => [n, name.toLowerCase()]),
);

/** The bits of an open or create answer (replyOpen, replyCreate): what it asks of the kernel. */
export const OpenFlag = {
  /** Reads and writes bypass the kernel's page cache. */
  DIRECT_IO: 1,
  /** The kernel keeps the note's pages from an earlier open (auto_cache: mtime and size stayed). */
  KEEP_CACHE: 2,
  /** No FLUSH at close (FOPEN_NOFLUSH, Linux 5.16): for handles that cannot have written. */
  NO_FLUSH: 4,
  /** The handle's writes may be held in C (KernelView.writesCannotFail). */
  HOLD_WRITES: 8,
} as const;

/**
 * Handles of read-only opens answered in C (native/fuse3/opens.c) carry this bit; JavaScript's own
 * are small numbers. No handle of JavaScript's stands behind them: their reads come by path.
 */
export const NATIVE_FH = 0x80000000;

/**
 * setattr's `to_set` bits, libfuse's FUSE_SET_ATTR_* (fuse_lowlevel.h): libfuse defines them, the
 * generated header asserts at compile time that these are its values.
 */
export const SetAttr = {
  MODE: 1,
  UID: 2,
  GID: 4,
  SIZE: 8,
  ATIME: 16,
  MTIME: 32,
  ATIME_NOW: 128,
  MTIME_NOW: 256,
} as const;

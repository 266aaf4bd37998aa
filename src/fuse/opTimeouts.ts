// fuse-native answers an operation ETIMEDOUT by itself once JavaScript has not answered it for 15 s,
// but the operation goes on, and what it changes lands after the program was told that it failed:
// `mv` of a folder whose saves were still being delivered (26,000 of them, after working offline)
// failed with "Connection timed out", and the folder moved a few seconds later. So an operation
// that changes something, or hands out a handle (one answered late would never be released), is
// answered only with its own outcome. Each step it waits for has a deadline of its own (a request
// 10 s, a bulk delivery 60 s), so it ends; a long one is logged (ops.ts). Operations that only
// read keep the backstop: a stuck read cannot hang `ls` for good, and nothing lands after it.

/** fuse-native's own per-operation timeout, kept for the operations that only read. */
const READ_BACKSTOP_MS = 15_000;

/** fuse-native's names of the operations that change something or open a handle. */
const ANSWERED_ONLY_WITH_OUTCOME = [
  "open",
  "opendir",
  "create",
  "write",
  "flush",
  "fsync",
  "fsyncdir",
  "release",
  "releasedir",
  "truncate",
  "ftruncate",
  "utimens",
  "chmod",
  "chown",
  "mknod",
  "setxattr",
  "removexattr",
  "unlink",
  "rename",
  "link",
  "symlink",
  "mkdir",
  "rmdir",
] as const;

/** fuse-native's `timeout` option: the backstop for reads, none for the rest. */
export function operationTimeouts(): Record<string, number | false> {
  return {
    default: READ_BACKSTOP_MS,
    ...Object.fromEntries(ANSWERED_ONLY_WITH_OUTCOME.map((op) => [op, false])),
  };
}

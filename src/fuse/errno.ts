// The errno an operation answers with, decided in one place: the vfs's errno names, the local
// disk's own codes for local-only files, and EIO (logged) for anything unexpected.
import { constants } from "node:os";
import type { Logger } from "../lib/logger.ts";
import { VfsError } from "../vfs/errors.ts";

const { EIO } = constants.errno;

/** An answer the adapter itself decided on (a positive errno): sent as it is, nothing logged. */
export class Errno extends Error {
  readonly errno: number;
  constructor(errno: number) {
    super(`errno ${errno}`);
    this.errno = errno || EIO;
  }
}

/** The (positive) errno `err` answers an operation with; `op` and `path` say where in the log. */
export function errnoOf(err: unknown, log: Logger, op: string, path: string | undefined): number {
  if (err instanceof Errno) return err.errno;
  if (err instanceof VfsError) {
    if (err.errno === "EIO") log.warn({ op, path, err: err.message }, "I/O error");
    return constants.errno[err.errno] ?? EIO;
  }
  // The local disk's own answer for local-only files (EFBIG past its largest file, ENOSPC, EDQUOT).
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const local = code ? constants.errno[code as keyof typeof constants.errno] : undefined;
  if (local !== undefined) {
    log.warn({ op, path, err: (err as Error).message }, "local file error");
    return local;
  }
  log.error({ op, path, err }, "unexpected error in a filesystem operation");
  return EIO;
}

// Filesystem errors as errno names; the FUSE adapter turns them into numbers. Mapping API failures
// here keeps one rule for every operation: what a program on a local disk would expect.
import { ApiError, NetworkError } from "../client/api.ts";

export type Errno =
  | "ENOENT"
  | "EEXIST"
  | "ENOTDIR"
  | "EISDIR"
  | "ENOTEMPTY"
  | "EACCES"
  | "EPERM"
  | "EROFS"
  | "EINVAL"
  | "EFBIG"
  | "EDQUOT"
  | "E2BIG"
  | "EIO"
  | "ESTALE"
  | "ENODATA"
  | "ENOTSUP"
  | "EBADF"
  | "ERANGE"
  | "ENAMETOOLONG"
  | "EXDEV"
  | "ELOOP";

export class VfsError extends Error {
  readonly errno: Errno;

  constructor(errno: Errno, message?: string, options?: { cause?: unknown }) {
    super(message ?? errno, options);
    this.name = "VfsError";
    this.errno = errno;
  }
}

export const fail = (errno: Errno, message?: string) => new VfsError(errno, message);

/** API and network failures -> errno. Anything unknown becomes EIO (and is logged by the caller). */
export function toVfsError(err: unknown): VfsError {
  if (err instanceof VfsError) return err;
  if (err instanceof ApiError) {
    switch (err.status) {
      case 400:
        return new VfsError("EINVAL", err.message, { cause: err });
      case 401:
      case 403:
        return new VfsError("EACCES", err.message, { cause: err });
      case 404:
        return new VfsError("ENOENT", err.message, { cause: err });
      case 409:
        return new VfsError(conflictErrno(err.code), err.message, { cause: err });
      case 412:
        return new VfsError("ESTALE", err.message, { cause: err });
      case 413:
        return new VfsError("EFBIG", err.message, { cause: err });
      case 507: // the account's attachments over its quota
        return new VfsError("EDQUOT", err.message, { cause: err });
      default:
        return new VfsError("EIO", err.message, { cause: err });
    }
  }
  if (err instanceof NetworkError) return new VfsError("EIO", err.message, { cause: err });
  return new VfsError("EIO", err instanceof Error ? err.message : String(err), { cause: err });
}

/**
 * A 409's errno by its code. A tag the note's own text declares cannot be removed by anyone
 * through metadata (only by editing the text): EPERM, "Operation not permitted", as for an
 * attribute the file itself forbids changing; not EACCES (no permission would help) nor EBUSY
 * (retrying never helps). Tags that would not all show are a value refused: EINVAL.
 */
function conflictErrno(code: string | undefined): Errno {
  if (code === "tag_declared_by_note") return "EPERM";
  if (code === "folder_cycle" || code === "too_many_tags") return "EINVAL";
  return "EIO";
}

/**
 * A failure that may pass: the service unreachable, overloaded or failing for now. A full quota
 * (507) is the account's state, not the service's failure: sent again, it is refused again.
 */
export function isTransient(err: unknown): boolean {
  if (err instanceof NetworkError) return true;
  return err instanceof ApiError && ((err.status >= 500 && err.status !== 507) || err.status === 429);
}

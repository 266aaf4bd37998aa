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
        return new VfsError(err.code === "folder_cycle" ? "EINVAL" : "EIO", err.message, { cause: err });
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
 * A failure that may pass: the service unreachable, overloaded or failing for now. A full quota
 * (507) is the account's state, not the service's failure: sent again, it is refused again.
 */
export function isTransient(err: unknown): boolean {
  if (err instanceof NetworkError) return true;
  return err instanceof ApiError && ((err.status >= 500 && err.status !== 507) || err.status === 429);
}

// A WebDAV answer that ends a request early: its status and, for a precondition, the element the
// client is told (RFC 4918 section 16: e.g. <D:lock-token-submitted>).
export class DavError extends Error {
  readonly status: number;
  readonly condition?: string;

  constructor(status: number, message?: string, condition?: string) {
    super(message ?? String(status));
    this.name = "DavError";
    this.status = status;
    this.condition = condition;
  }
}

/** A back end's errno (the vfs's names) as the status a WebDAV client expects for it. */
export function statusOfErrno(errno: string): number {
  switch (errno) {
    case "ENOENT":
      return 404;
    case "EEXIST":
      return 405;
    case "ENOTDIR":
    case "ENOTEMPTY":
      return 409;
    case "EISDIR":
      return 405;
    case "EACCES":
    case "EPERM":
    case "EROFS":
      return 403;
    case "EFBIG":
    case "E2BIG":
      return 413;
    case "ENOSPC":
      return 507;
    case "ENAMETOOLONG":
      return 414;
    case "EXDEV":
      return 502;
    case "EINVAL":
      return 400;
    default:
      return 500;
  }
}

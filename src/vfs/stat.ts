/** What stat answers for a path: the fields a POSIX `struct stat` needs here. */
export interface Stat {
  mode: number;
  size: number;
  mtime: Date;
  atime: Date;
  ctime: Date;
  nlink: number;
  uid: number;
  gid: number;
  blocks: number;
  /** A device node's number. */
  rdev?: number;
}

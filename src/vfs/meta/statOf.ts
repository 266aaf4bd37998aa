// What stat(2) shows of an item: its kind and permission bits (a reader's role and a read-only mount
// take the write bits away), size and times, from what this mount holds of it.
import type { VfsCore } from "../core.ts";
import { S_IFDIR, S_IFLNK, S_IFREG } from "../fileModes.ts";
import { specialType } from "../local/specialFiles.ts";
import type { Stat } from "../stat.ts";
import type { Node } from "../tree.ts";

/** The permission bits shown when none were set here. */
export const NOTE_MODE = 0o644;
export const FOLDER_MODE = 0o755;
/** A reader's items and a read-only mount's: no write bits, whatever was set. */
const NO_WRITE = ~0o222;

export type StatCore = Pick<VfsCore, "access" | "notes" | "opts" | "tree">;

export function statOf(c: StatCore, node: Node): Stat {
  const { uid, gid } = c.opts;
  const ro = c.access.readOnly;
  let mode: number;
  let size: number;
  let mtimeMs: number;
  let ctimeMs: number;
  let atimeMs: number | undefined;
  if (node.kind === "dir") {
    const reader = node.meta?.role === "reader";
    const bits = node.mode ?? FOLDER_MODE;
    mode = S_IFDIR | (ro || reader ? bits & NO_WRITE : bits);
    size = 4096;
    // The mount's root has no record of its own: its times are the account's newest change.
    const own = node === c.tree.root ? c.tree.newestChangeMs : 0;
    mtimeMs = node.localMtimeMs ?? (node.meta ? Date.parse(node.meta.updatedAt) : own);
    // A change made elsewhere moves the root on past a time kept here (a local change inside it).
    if (node === c.tree.root) mtimeMs = Math.max(mtimeMs, own);
    ctimeMs = node.localCtimeMs ?? (node.meta ? Date.parse(node.meta.createdAt) : own);
    atimeMs = node.localAtimeMs;
  } else if (node.kind === "local" && specialType(node) !== undefined) {
    // A link's own permissions are never checked (Linux): always 0777, as on a disk.
    mode = node.link !== undefined ? S_IFLNK | 0o777 : specialType(node)! | node.mode;
    size = node.size;
    mtimeMs = node.mtimeMs;
    ctimeMs = node.ctimeMs ?? node.mtimeMs;
    atimeMs = node.atimeMs;
  } else if (node.kind === "local") {
    mode = S_IFREG | (ro ? node.mode & 0o555 : node.mode);
    size = node.size;
    mtimeMs = node.mtimeMs;
    ctimeMs = node.ctimeMs ?? node.mtimeMs;
    atimeMs = node.atimeMs;
  } else {
    const reader = node.meta?.role === "reader";
    const bits = node.mode ?? NOTE_MODE;
    mode = S_IFREG | (ro || reader ? bits & NO_WRITE : bits);
    size = node.note?.dirtySize ?? node.meta?.size ?? 0;
    const times = c.notes.timesOf(node);
    // The time shown is this mount's (see Note.mtimeShown); a remote edit shows the service's
    // updatedAt, so the kernel's auto_cache drops stale pages exactly then.
    const updated = node.meta ? Date.parse(node.meta.updatedAt) : 0;
    mtimeMs = times?.mtimeMs ?? updated;
    ctimeMs = times?.ctimeMs ?? updated;
    atimeMs = times?.atimeMs;
  }
  return {
    mode,
    size,
    mtime: new Date(mtimeMs),
    atime: new Date(atimeMs ?? mtimeMs),
    ctime: new Date(ctimeMs),
    nlink: node.kind === "dir" ? 2 : 1,
    uid: node.uid ?? uid,
    gid: node.gid ?? gid,
    rdev: node.kind === "local" ? node.rdev?.dev : undefined,
    blocks: Math.ceil(size / 512),
  };
}

// Path-based filesystem operations -> Vfs calls, answered through a callback (errno first, negative):
// lowlevel/dispatch.ts turns the kernel's node-based requests into these. Errors become negative
// errno numbers; anything unexpected is logged and becomes EIO.
import { constants } from "node:os";
import type { Logger } from "../lib/logger.ts";
import { fail, VfsError } from "../vfs/errors.ts";
import type { Owner } from "../vfs/local/specialFiles.ts";
import type { Vfs } from "../vfs/vfs.ts";

type Cb = (result: number, ...rest: unknown[]) => void;

export function toErrno(err: unknown, log: Logger, op: string, path: string): number {
  if (err instanceof VfsError) {
    if (err.errno === "EIO") log.warn({ op, path, err: err.message }, "I/O error");
    return -(constants.errno[err.errno] ?? constants.errno.EIO);
  }
  // The local disk's own answer for local-only files (EFBIG past its largest file, ENOSPC, EDQUOT).
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const local = code ? constants.errno[code as keyof typeof constants.errno] : undefined;
  if (local !== undefined) {
    log.warn({ op, path, err: (err as Error).message }, "local file error");
    return -local;
  }
  log.error({ op, path, err }, "unexpected error in a filesystem operation");
  return -constants.errno.EIO;
}

/**
 * Opens `path`. The kernel opens by a name it still remembers (it keeps names for a second); when
 * that name is gone here, ESTALE has it look the name up again and go on with what it finds, as on
 * a local disk: `> n.md.meta.json` right after n.md left creates the file instead of failing with
 * ENOENT. Any other ENOENT stands (the kernel retries once; a second ESTALE would reach the program).
 */
async function openByName(vfs: Vfs, path: string, flags: number): Promise<number> {
  try {
    return await vfs.open(path, flags);
  } catch (err) {
    if (!(err instanceof VfsError) || err.errno !== "ENOENT") throw err;
    const gone = await vfs.getattr(path).then(
      () => false,
      (e: unknown) => e instanceof VfsError && e.errno === "ENOENT",
    );
    throw gone ? fail("ESTALE", "the kernel remembered a name that is gone") : err;
  }
}

/** The most bytes held in C at once (native/fuse3/held.c): a 1 MB note written in 128 KiB pieces crosses once. */
export const HELD_WRITES_MAX_BYTES = 1024 * 1024;

/** An operation answered after this long is logged (a program waited that long for it). */
const SLOW_OPERATION_MS = 10_000;

const omitted = (ms: number): number | undefined => (ms > Number.MAX_SAFE_INTEGER ? undefined : ms);

export interface FuseOpsOptions {
  /** Log every operation (debug). */
  trace?: boolean;
  /** Whether an open of `path` (with `flags`) must bypass the kernel's page cache (staleWindow.ts). */
  directIo?: (path: string, flags: number) => boolean;
  /**
   * Set when writes are held in C (native/fuse3/held.c): the writes of a handle whose writes cannot
   * fail (Vfs.writesCannotFail) may be held there. Open and create answers say so of their handle;
   * this marks one that became so later (emptied by a truncate through it), and `on` false
   * unmarks one whose writes are refused from now on (a save past the largest note).
   */
  holdable?: (fd: number, on?: boolean) => void;
}

/**
 * Handles of read-only opens answered in C (native/fuse3/opens.c): this bit set, no handle here;
 * their reads come by path, their flush and release never come.
 */
export const NATIVE_FH = 0x80000000;
const isNative = (fd: number) => fd >= NATIVE_FH;

/** The open and create answers' flags: direct I/O; writes may be held in C. */
const OPEN_DIRECT_IO = 1;
const OPEN_HOLD_WRITES = 2;

export function fuseOps(vfs: Vfs, log: Logger, { trace = false, directIo, holdable }: FuseOpsOptions = {}) {
  const holdFlag = (fd: number) =>
    holdable && vfs.writesCannotFail(fd, HELD_WRITES_MAX_BYTES) ? OPEN_HOLD_WRITES : 0;
  const run = <T>(
    op: string,
    path: string,
    cb: Cb,
    fn: () => T | Promise<T>,
    ok: (v: T) => unknown[] = () => [],
  ) => {
    if (trace) log.debug({ op, path }, "fuse op");
    const started = Date.now();
    Promise.resolve()
      .then(fn)
      .then(
        (v) => cb(0, ...ok(v)),
        (err) => cb(toErrno(err, log, op, path)),
      )
      .then(() => {
        // Answered only with its outcome, however long that took (never a timeout while it goes
        // on: what it changes would land after the program was told it failed): say so.
        const ms = Date.now() - started;
        if (ms >= SLOW_OPERATION_MS) log.warn({ op, path, ms }, "a filesystem operation took long");
      });
  };
  /** An operation answered synchronously from the tree: traced too, marked `sync`. */
  const answered = (op: string, path: string, cb: Cb, ...values: unknown[]) => {
    if (trace) log.debug({ op, path, sync: true }, "fuse op");
    cb(0, ...values);
  };
  return {
    statfs: (path: string, cb: Cb) =>
      run(
        "statfs",
        path,
        cb,
        () => vfs.statfs(),
        (s) => [s],
      ),
    // The hot path (every stat of ls -l, find, make): answered synchronously from the tree.
    getattr: (path: string, cb: Cb) => {
      const st = vfs.nativeStat(path);
      // The tree's answers (the kernel keeps them until told: sidecars' it may not).
      if (st) return answered("getattr", path, cb, st);
      run(
        "getattr",
        path,
        cb,
        () => vfs.getattr(path),
        (s) => [s],
      );
    },
    fgetattr: (path: string, _fd: number, cb: Cb) => {
      const st = vfs.nativeStat(path);
      if (st) return answered("fgetattr", path, cb, st);
      run(
        "fgetattr",
        path,
        cb,
        () => vfs.getattr(path),
        (s) => [s],
      );
    },
    // The folder's names (the binding adds `.` and `..`).
    readdir: (path: string, cb: Cb) => {
      if (vfs.isControl(path))
        return run(
          "readdir",
          path,
          cb,
          () => vfs.readdirControl(path),
          (names) => [names],
        );
      try {
        answered("readdir", path, cb, vfs.readdir(path));
      } catch (err) {
        cb(toErrno(err, log, "readdir", path));
      }
    },
    open: (path: string, flags: number, cb: Cb) =>
      run(
        "open",
        path,
        cb,
        () => openByName(vfs, path, flags),
        (fd) => [fd, (directIo?.(path, flags) ? OPEN_DIRECT_IO : 0) | holdFlag(fd)],
      ),
    create: (path: string, mode: number, owner: Owner | undefined, cb: Cb) =>
      run(
        "create",
        path,
        cb,
        () => vfs.create(path, mode, owner),
        // The new file's stat comes along: the answer carries it.
        (fd) => [fd, vfs.nativeStat(path), holdFlag(fd)],
      ),
    read: (path: string, fd: number, buf: Buffer, len: number, pos: number, cb: Cb) => {
      if (trace) log.debug({ op: "read", path, len, pos }, "fuse op");
      (isNative(fd) ? vfs.readPath(path, len, pos) : vfs.read(fd, len, pos)).then(
        (data) => {
          data.copy(buf, 0, 0, Math.min(len, data.length));
          cb(Math.min(len, data.length));
        },
        (err) => cb(toErrno(err, log, "read", path)),
      );
    },
    write: (path: string, fd: number, buf: Buffer, len: number, pos: number, cb: Cb) => {
      if (trace) log.debug({ op: "write", path, len, pos }, "fuse op");
      if (isNative(fd)) return cb(-constants.errno.EBADF); // read-only (the kernel says so first)
      const data = Buffer.from(buf.subarray(0, len)); // the native buffer dies with the callback
      vfs.write(fd, data, pos).then(
        (n) => cb(n),
        (err) => {
          // A refused save (past the largest note) refuses the handle's later writes too: C must
          // not answer them as kept.
          if (holdable && !vfs.writesCannotFail(fd, HELD_WRITES_MAX_BYTES)) holdable(fd, false);
          cb(toErrno(err, log, "write", path));
        },
      );
    },
    flush: (path: string, fd: number, cb: Cb) =>
      run("flush", path, cb, () => (isNative(fd) ? undefined : vfs.flush(fd))),
    fsync: (path: string, _datasync: number, fd: number, cb: Cb) =>
      run("fsync", path, cb, () => (isNative(fd) ? vfs.fsyncPath(path) : vfs.fsync(fd))),
    release: (path: string, fd: number, cb: Cb) =>
      run("release", path, cb, () => (isNative(fd) ? undefined : vfs.release(fd))),
    // `echo x > note`: the kernel opens, then truncates (by path): the note's handles may hold writes then.
    truncate: (path: string, size: number, cb: Cb) =>
      run("truncate", path, cb, async () => {
        await vfs.truncate(path, size);
        if (holdable)
          for (const fd of vfs.handlesWhoseWritesCannotFail(path, HELD_WRITES_MAX_BYTES)) holdable(fd);
      }),
    // A native handle's: open(O_RDONLY | O_TRUNC) truncates (Linux), through the handle it made.
    ftruncate: (path: string, fd: number, size: number, cb: Cb) =>
      run("ftruncate", path, cb, async () => {
        if (isNative(fd)) return vfs.truncate(path, size);
        await vfs.ftruncate(fd, size);
        if (holdable && vfs.writesCannotFail(fd, HELD_WRITES_MAX_BYTES)) holdable(fd);
      }),
    // UTIME_OMIT comes as a time past 2^53 (dispatch.ts: infinity): that time stays.
    utimens: (path: string, atime: number, mtime: number, cb: Cb) =>
      run("utimens", path, cb, () => vfs.utimens(path, omitted(atime), omitted(mtime))),
    chmod: (path: string, mode: number, cb: Cb) => run("chmod", path, cb, () => vfs.chmod(path, mode)),
    chown: (path: string, uid: number, gid: number, cb: Cb) =>
      run("chown", path, cb, () => vfs.chown(path, uid, gid)),
    unlink: (path: string, cb: Cb) => run("unlink", path, cb, () => vfs.unlink(path)),
    rename: (src: string, dest: string, cb: Cb) => run("rename", src, cb, () => vfs.rename(src, dest)),
    mkdir: (path: string, mode: number, owner: Owner | undefined, cb: Cb) =>
      run("mkdir", path, cb, () => vfs.mkdir(path, mode, owner)),
    rmdir: (path: string, cb: Cb) => run("rmdir", path, cb, () => vfs.rmdir(path)),
    getxattr: (path: string, name: string, _position: number, cb: Cb) => {
      // ls -l asks every file for its SELinux label and ACL, the kernel asks security.capability
      // before every write: only user.txtfs.* exists. Other namespaces are unsupported (EOPNOTSUPP:
      // ls remembers that per device and stops asking), other user.* names simply absent.
      // (native/fuse3 answers both in C; kept here for any caller that asks anyway.)
      if (!name.startsWith("user.")) return cb(-constants.errno.EOPNOTSUPP);
      if (!name.startsWith("user.txtfs.")) return cb(-constants.errno.ENODATA);
      run(
        "getxattr",
        path,
        cb,
        () => vfs.getxattr(path, name),
        (v) => [v],
      );
    },
    setxattr: (path: string, name: string, value: Buffer, _position: number, _flags: number, cb: Cb) => {
      const copy = Buffer.from(value);
      run("setxattr", path, cb, () => vfs.setxattr(path, name, copy));
    },
    listxattr: (path: string, cb: Cb) =>
      run(
        "listxattr",
        path,
        cb,
        () => vfs.listxattr(path),
        (l) => [l],
      ),
    removexattr: (_path: string, _name: string, cb: Cb) => cb(-constants.errno.ENOTSUP),
    // Hard links have no counterpart here (an item has one name): refused clearly. Symlinks are
    // kept on this device (vfs/local/specialFiles.ts), or verbs in `.txtfs/`.
    link: (_src: string, _dest: string, cb: Cb) => cb(-constants.errno.EPERM),
    symlink: (target: string, path: string, owner: Owner | undefined, cb: Cb) =>
      run("symlink", path, cb, () => vfs.symlink(target, path, owner)),
    readlink: (path: string, cb: Cb) =>
      run(
        "readlink",
        path,
        cb,
        () => vfs.readlink(path),
        (target) => [target],
      ),
    // Fifos, sockets and device nodes are kept on this device (the mount is nodev: a device node
    // cannot be opened through it).
    mknod: (path: string, mode: number, rdev: number, owner: Owner | undefined, cb: Cb) =>
      run("mknod", path, cb, () => vfs.mknod(path, mode, rdev, owner)),
  };
}

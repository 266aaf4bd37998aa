# A seeded random generator of filesystem calls for the FUSE boundary fuzzer (test/mount/fuzz.test.ts):
# open with random flags, read, write, pread/pwrite at random offsets, ftruncate/truncate, lseek
# (SEEK_DATA/SEEK_HOLE too), mmap reads and writes, fsync, rename, unlink, mkdir, rmdir, listdir,
# stat, chmod, utime, link, symlink and the xattr calls, on random paths from a small pool that
# also holds invalid ones (too long, through a file, a sidecar, the control folder, not UTF-8).
# Run several at once in the same folder. Each call either succeeds or fails with an errno from
# that call's allowed set; anything else (EIO, ENOTCONN, a hang ended by the test's timeout, a
# crash of the daemon: ENOTCONN/ECONNABORTED) is a failure, printed with the seed and the last calls.
#
#   fuzzfs.py DIR --seed N --ops N [--worker K]
#
# Prints one JSON line: {"seed", "worker", "ops", "ok", "errnos": {"op errno": count}, "known": {...}};
# exit 1 on a failure.
import argparse, errno, json, mmap, os, random, sys

p = argparse.ArgumentParser()
p.add_argument("dir")
p.add_argument("--seed", type=int, required=True)
p.add_argument("--ops", type=int, default=500)
p.add_argument("--worker", type=int, default=0)
p.add_argument("--strict", action="store_true", help="the known wrong answers (KNOWN) fail too")
a = p.parse_args()
rng = random.Random(a.seed * 1000 + a.worker)
os.chdir(a.dir)

E = errno
# What any path-taking call may say about a path: it names nothing, something of the other kind,
# something a folder's rule forbids, or is too long or not a name the mount keeps.
PATHS = {E.ENOENT, E.ENOTDIR, E.ENAMETOOLONG, E.EINVAL, E.EACCES, E.EPERM, E.EILSEQ, E.ELOOP, E.EROFS}
ALLOWED = {
    "open": PATHS | {E.EEXIST, E.EISDIR, E.ENXIO, E.ETXTBSY, E.EROFS},
    "read": {E.EBADF, E.EISDIR, E.EINVAL},
    "write": {E.EBADF, E.EFBIG, E.ENOSPC, E.EINVAL, E.EPERM},
    "ftruncate": {E.EBADF, E.EINVAL, E.EFBIG, E.EPERM, E.ENOSPC},
    "truncate": PATHS | {E.EISDIR, E.EFBIG, E.ENOSPC},
    "lseek": {E.ENXIO, E.EINVAL, E.EBADF},
    "fstat": set(),
    # The mapping's flush (msync) reports the writeback's errors as fsync does: a note past the
    # largest one has every later write refused (EFBIG), the cache dir's disk full (ENOSPC).
    "mmap": {E.EACCES, E.EINVAL, E.ENODEV, E.EBADF, E.EFBIG, E.ENOSPC, E.EIO},
    # A save refused (past the largest note: EFBIG), or a write acknowledged from C before the vfs
    # refused it (dispatch.ts tells that as EIO at the next fsync or close, as writeback errors are).
    "fsync": {E.EBADF, E.EINVAL, E.ENOSPC, E.EFBIG, E.EIO},
    "close": {E.ENOSPC, E.EFBIG, E.EIO},
    "rename": PATHS | {E.EEXIST, E.EISDIR, E.ENOTEMPTY, E.EBUSY, E.EXDEV},
    "unlink": PATHS | {E.EISDIR, E.EBUSY},
    "mkdir": PATHS | {E.EEXIST},
    "rmdir": PATHS | {E.ENOTEMPTY, E.EBUSY, E.EEXIST},
    "listdir": PATHS,
    "stat": PATHS,
    "chmod": PATHS | {E.EOPNOTSUPP},
    "utime": PATHS,
    "link": PATHS | {E.EEXIST, E.EXDEV, E.EMLINK, E.EOPNOTSUPP, E.ENOSYS},
    "symlink": PATHS | {E.EEXIST, E.EOPNOTSUPP, E.ENOSYS},
    "getxattr": PATHS | {E.ENODATA, E.ERANGE, E.EOPNOTSUPP, E.ENOTSUP},
    "setxattr": PATHS | {E.EEXIST, E.ENODATA, E.E2BIG, E.ERANGE, E.EOPNOTSUPP, E.ENOTSUP, E.ENOSPC},
    "listxattr": PATHS | {E.ERANGE, E.EOPNOTSUPP},
    "removexattr": PATHS | {E.ENODATA, E.EOPNOTSUPP, E.ENOTSUP},
}

# Answers known to be wrong, counted apart and failing only with --strict: the mount stats an open
# descriptor by its path (src/fuse/ops.ts fgetattr), so fstat, and lseek from the end, answer
# ENOENT when another process renames or removes the file at that moment.
# A sidecar's descriptor reads and writes its note's metadata by path too.
KNOWN = {op: {E.ENOENT} for op in ("fstat", "lseek", "read", "write", "ftruncate")}
# A sidecar (NAME.meta.json) whose written text is not the JSON it takes is refused at close.
SIDECAR_CLOSE = {E.EINVAL}

NAMES = ["a.md", "b.txt", "c.md", "d", "d/e.md", "d/f.txt", "d/g", "d/g/h.md", "x.bin", "notes.txt~", ".a.md.swp"]
INVALID = [
    "n" * 256 + ".md",  # longer than NAME_MAX
    "a.md/inside.md",  # through a file
    "missing/deep/z.md",
    "a.md.meta.json",  # a sidecar
    ".txtfs/README",  # the control folder
    ".txtfs/versions/a.md",
    b"\xff\xfe.md",  # not UTF-8
    "d/" + "m" * 255,  # exactly NAME_MAX, no extension
    "sp ace\nline.md",
]
XATTRS = ["user.txtfs.tags", "user.txtfs.context", "user.other", "user." + "k" * 250, "trusted.x", "security.x"]


def path():
    # bytes: rename and link take two paths of one kind, and some names are not UTF-8
    return os.fsencode(rng.choice(INVALID) if rng.random() < 0.2 else rng.choice(NAMES))


def data(n):
    return bytes(rng.choice(b"abcdefgh ijklm\n") for _ in range(n))


fds = []  # (fd, path) opened by this worker
counts = {}
known = {}
recent = []
ok = 0


def fail(msg):
    sys.stderr.write(f"fuzzfs: seed {a.seed} worker {a.worker}: {msg}\nlast calls:\n")
    for line in recent[-20:]:
        sys.stderr.write(f"  {line}\n")
    sys.exit(1)


def call(op, what, fn):
    global ok
    recent.append(f"{op} {what!r}")
    del recent[:-40]
    try:
        r = fn()
        ok += 1
        return r
    except OSError as e:
        name = errno.errorcode.get(e.errno, str(e.errno))
        allowed = ALLOWED[op] | (SIDECAR_CLOSE if op == "close" and what.endswith(b".meta.json") else set())
        if not a.strict and e.errno in KNOWN.get(op, ()):
            known[f"{op} {name}"] = known.get(f"{op} {name}", 0) + 1
            return None
        counts[f"{op} {name}"] = counts.get(f"{op} {name}", 0) + 1
        if e.errno not in allowed:
            fail(f"{op} {what!r}: {e} (errno {errno.errorcode.get(e.errno, e.errno)} is not one {op} may answer)")
        return None


def some_fd():
    return rng.choice(fds) if fds else None


def op_open():
    if len(fds) > 6:
        fd, p = fds.pop(rng.randrange(len(fds)))
        call("close", p, lambda: os.close(fd))
    p = path()
    flags = rng.choice([os.O_RDONLY, os.O_WRONLY, os.O_RDWR])
    for f in (os.O_CREAT, os.O_TRUNC, os.O_APPEND, os.O_EXCL, os.O_DIRECTORY, os.O_NOFOLLOW):
        if rng.random() < 0.25:
            flags |= f
    fd = call("open", (p, flags), lambda: os.open(p, flags, 0o644))
    if fd is not None:
        fds.append((fd, p))


def op_read():
    f = some_fd()
    if f:
        n, off = rng.choice([0, 1, 100, 4096, 70000]), rng.choice([0, 0, 5, 4095, 1 << 20])
        call("read", (f[1], n, off), lambda: os.pread(f[0], n, off) if rng.random() < 0.7 else os.read(f[0], n))


def op_write():
    f = some_fd()
    if f:
        buf, off = data(rng.choice([0, 1, 50, 4096, 9000])), rng.choice([0, 3, 4096, 100000])
        call("write", (f[1], len(buf), off), lambda: os.pwrite(f[0], buf, off) if rng.random() < 0.6 else os.write(f[0], buf))


def op_ftruncate():
    f = some_fd()
    if f:
        n = rng.choice([0, 1, 10, 5000, 300000])
        call("ftruncate", (f[1], n), lambda: os.ftruncate(f[0], n))


def op_truncate():
    p, n = path(), rng.choice([0, 7, 4096])
    call("truncate", (p, n), lambda: os.truncate(p, n))


def op_lseek():
    f = some_fd()
    if f:
        how = rng.choice([os.SEEK_SET, os.SEEK_END, os.SEEK_CUR, os.SEEK_DATA, os.SEEK_HOLE])
        off = rng.choice([0, 1, 4096, 1 << 30])
        call("lseek", (f[1], off, how), lambda: os.lseek(f[0], off, how))


def op_mmap():
    f = some_fd()
    if not f:
        return
    st = call("fstat", f[1], lambda: os.fstat(f[0]))
    if not st or st.st_size == 0:
        return
    size, write = st.st_size, rng.random() < 0.4
    at = rng.randrange(size)

    # In a child: another process may shrink the file under the mapping, and a touch past its end
    # is SIGBUS, as POSIX says (counted, not a failure).
    def run():
        pid = os.fork()
        if pid == 0:
            try:
                m = mmap.mmap(f[0], size, mmap.MAP_SHARED, mmap.PROT_READ | (mmap.PROT_WRITE if write else 0))
                m[at]
                if write:
                    m[0:1] = b"m"
                    m.flush()
                m.close()
                os._exit(0)
            except OSError as e:
                os._exit(100 + e.errno)
            except ValueError:  # shrunk since the fstat: Python's own check, before mmap(2)
                os._exit(99)
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status) and os.WTERMSIG(status) == 7:  # SIGBUS
            counts["mmap SIGBUS"] = counts.get("mmap SIGBUS", 0) + 1
        elif os.WEXITSTATUS(status) == 99:
            counts["mmap shrunk"] = counts.get("mmap shrunk", 0) + 1
        elif os.WEXITSTATUS(status) >= 100:
            raise OSError(os.WEXITSTATUS(status) - 100, "mmap")
        elif os.WIFSIGNALED(status) or os.WEXITSTATUS(status) != 0:
            fail(f"mmap {f[1]!r}: the child ended with status {status}")

    call("mmap", f[1], run)


def op_fsync():
    f = some_fd()
    if f:
        call("fsync", f[1], lambda: os.fsync(f[0]))


def op_rename():
    s, t = path(), path()
    call("rename", (s, t), lambda: os.rename(s, t))


def op_unlink():
    p = path()
    call("unlink", p, lambda: os.unlink(p))


def op_mkdir():
    p = path()
    call("mkdir", p, lambda: os.mkdir(p))


def op_rmdir():
    p = path()
    call("rmdir", p, lambda: os.rmdir(p))


def op_listdir():
    p = rng.choice([".", "d", "d/g", "missing", "a.md", ".txtfs"])
    call("listdir", p, lambda: os.listdir(p))


def op_stat():
    p = path()
    call("stat", p, lambda: os.lstat(p) if rng.random() < 0.5 else os.stat(p))


def op_chmod():
    p, mode = path(), rng.choice([0o600, 0o644, 0o755, 0o400])
    call("chmod", (p, mode), lambda: os.chmod(p, mode))


def op_utime():
    p = path()
    call("utime", p, lambda: os.utime(p, (rng.randrange(1 << 31), rng.randrange(1 << 31))))


def op_link():
    s, t = path(), path()
    call("link", (s, t), lambda: os.link(s, t))


def op_symlink():
    s, t = path(), path()
    call("symlink", (s, t), lambda: os.symlink(s, t))


def op_getxattr():
    p, n = path(), rng.choice(XATTRS)
    call("getxattr", (p, n), lambda: os.getxattr(p, n))


def op_setxattr():
    p, n = path(), rng.choice(XATTRS)
    v = rng.choice([b"", b"tag1,tag2", b"x" * 70000, data(30)])
    call("setxattr", (p, n, len(v)), lambda: os.setxattr(p, n, v, rng.choice([0, 0, os.XATTR_CREATE, os.XATTR_REPLACE])))


def op_listxattr():
    p = path()
    call("listxattr", p, lambda: os.listxattr(p))


def op_removexattr():
    p, n = path(), rng.choice(XATTRS)
    call("removexattr", (p, n), lambda: os.removexattr(p, n))


OPS = [
    (op_open, 8), (op_read, 6), (op_write, 6), (op_ftruncate, 2), (op_truncate, 1), (op_lseek, 2),
    (op_mmap, 2), (op_fsync, 1), (op_rename, 3), (op_unlink, 2), (op_mkdir, 2), (op_rmdir, 1),
    (op_listdir, 3), (op_stat, 3), (op_chmod, 1), (op_utime, 1), (op_link, 1), (op_symlink, 1),
    (op_getxattr, 2), (op_setxattr, 2), (op_listxattr, 1), (op_removexattr, 1),
]
choices = [fn for fn, weight in OPS for _ in range(weight)]
for _ in range(a.ops):
    rng.choice(choices)()
for fd, p in fds:
    call("fsync", p, lambda: os.fsync(fd))
    call("close", p, lambda: os.close(fd))
print(json.dumps({"seed": a.seed, "worker": a.worker, "ops": a.ops, "ok": ok, "errnos": counts, "known": known}))

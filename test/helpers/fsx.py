# An fsx-style random I/O exerciser (after xfstests' fsx): random pread, pwrite, ftruncate, mmap
# reads and writes on one file, closed and reopened every few operations, every read and every
# size compared with an in-memory copy. Run in a child process against a file in the mount.
#
#   fsx.py FILE --seed N --ops N [--data text|bytes] [--maxlen N] [--no-mmap] [--reopen N]
#
# Exit 0: the file matched the copy after every operation (and at the end, read through a fresh
# descriptor). Exit 1: the first mismatch, with the last operations, is printed on stderr.
import argparse, mmap, os, random, sys

p = argparse.ArgumentParser()
p.add_argument("file")
p.add_argument("--seed", type=int, default=1)
p.add_argument("--ops", type=int, default=1000)
p.add_argument("--data", choices=["text", "bytes"], default="text")
p.add_argument("--maxlen", type=int, default=256 * 1024)
p.add_argument("--maxop", type=int, default=4096, help="largest read/write")
p.add_argument("--no-mmap", action="store_true")
p.add_argument("--reopen", type=int, default=10, help="close and reopen about every N operations")
p.add_argument("--inject", type=int, default=-1, help="self-test: change one byte behind the copy's back at this operation")
a = p.parse_args()

rng = random.Random(a.seed)
TEXT = b"abcdefghijklmnopqrstuvwxyz ABCDEFGHIJ 0123456789.,;-\n"
PAGE = mmap.PAGESIZE
log = []
model = bytearray()
current = [0]  # the operation being run (1-based, as fsx counts)


def data(n):
    if a.data == "bytes":
        return bytes(rng.getrandbits(8) for _ in range(n))
    return bytes(rng.choice(TEXT) for _ in range(n))


def fail(msg):
    sys.stderr.write(f"fsx: seed {a.seed} operation {current[0]}: {msg}\nlast operations:\n")
    for line in log[-15:]:
        sys.stderr.write(f"  {line}\n")
    sys.exit(1)


def first_diff(got, want):
    for i in range(min(len(got), len(want))):
        if got[i] != want[i]:
            return i
    return min(len(got), len(want))


def check_size(fd, what):
    size = os.fstat(fd).st_size
    if size != len(model):
        fail(f"{what}: fstat size {size}, expected {len(model)}")


def check_bytes(got, off, what):
    want = bytes(model[off : off + len(got)])
    if got != want:
        i = first_diff(got, want)
        fail(f"{what}: byte {off + i} is {got[i:i+8]!r}, expected {want[i:i+8]!r} (read {len(got)} at {off})")


def op_read(fd):
    if not model:
        return
    off = rng.randrange(len(model))
    n = rng.randint(1, a.maxop)
    log.append(f"read {off} {n}")
    got = os.pread(fd, n, off)
    if len(got) != min(n, len(model) - off):
        fail(f"read {n} at {off} gave {len(got)} bytes, expected {min(n, len(model) - off)}")
    check_bytes(got, off, "read")


def op_write(fd):
    off = rng.randrange(a.maxlen - 1)
    n = min(rng.randint(1, a.maxop), a.maxlen - off)
    buf = data(n)
    log.append(f"write {off} {n}")
    done = os.pwrite(fd, buf, off)
    if done != n:
        fail(f"short write: {done} of {n}")
    if off > len(model):
        model.extend(b"\0" * (off - len(model)))
    model[off : off + n] = buf
    check_size(fd, "after write")


def op_truncate(fd):
    size = rng.randrange(a.maxlen)
    log.append(f"truncate {size}")
    os.ftruncate(fd, size)
    if size < len(model):
        del model[size:]
    else:
        model.extend(b"\0" * (size - len(model)))
    check_size(fd, "after truncate")


def op_mapread(fd):
    if not model:
        return
    off = rng.randrange(len(model))
    n = rng.randint(1, min(a.maxop, len(model) - off))
    log.append(f"mapread {off} {n}")
    base = off - off % PAGE
    m = mmap.mmap(fd, off + n - base, mmap.MAP_SHARED, mmap.PROT_READ, offset=base)
    try:
        got = m[off - base : off - base + n]
    finally:
        m.close()
    check_bytes(got, off, "mapread")


def op_mapwrite(fd):
    off = rng.randrange(a.maxlen - 1)
    n = min(rng.randint(1, a.maxop), a.maxlen - off)
    buf = data(n)
    log.append(f"mapwrite {off} {n}")
    if off + n > len(model):  # as fsx: extend the file first, a mapping cannot grow it
        os.ftruncate(fd, off + n)
        model.extend(b"\0" * (off + n - len(model)))
        check_size(fd, "after mapwrite's extend")
    base = off - off % PAGE
    m = mmap.mmap(fd, off + n - base, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE, offset=base)
    try:
        m[off - base : off - base + n] = buf
        m.flush()
    finally:
        m.close()
    model[off : off + n] = buf
    check_size(fd, "after mapwrite")


def reopen(fd):
    log.append("close/open")
    os.close(fd)
    fd = os.open(a.file, os.O_RDWR)
    check_size(fd, "after reopen")
    return fd


ops = [op_read, op_write, op_truncate] + ([] if a.no_mmap else [op_mapread, op_mapwrite])
weights = [4, 4, 1] + ([] if a.no_mmap else [2, 2])

fd = os.open(a.file, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
# As fsx's check_trunc_hack: a file grown by ftruncate must report that size at once.
os.ftruncate(fd, 0)
os.ftruncate(fd, 100000)
if os.fstat(fd).st_size != 100000:
    fail(f"ftruncate to 100000 left fstat at {os.fstat(fd).st_size}")
os.ftruncate(fd, 0)
for i in range(a.ops):
    current[0] = i + 1
    op = rng.choices(ops, weights)[0]
    try:
        op(fd)
    except OSError as e:
        fail(f"{log[-1] if log else op.__name__}: {e}")
    if a.reopen and rng.randrange(a.reopen) == 0:
        try:
            fd = reopen(fd)
        except OSError as e:
            fail(f"close/open: {e}")
    if i == a.inject and model:
        with open(a.file, "r+b") as f:
            f.seek(len(model) // 2)
            f.write(b"\x01" if model[len(model) // 2] != 1 else b"\x02")
os.close(fd)

with open(a.file, "rb") as f:
    whole = f.read()
if whole != bytes(model):
    i = first_diff(whole, model)
    fail(f"final read: {len(whole)} bytes, expected {len(model)}; first difference at {i}")
sys.stdout.write(f"fsx: seed {a.seed}: {a.ops} operations, final size {len(model)}\n")
# The expected final content, for the caller's checks after sync and remount.
if os.environ.get("FSX_EXPECT"):
    with open(os.environ["FSX_EXPECT"], "wb") as f:
        f.write(bytes(model))

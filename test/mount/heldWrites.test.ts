// Writes held in C (native/fuse3/held.c): a write through a handle
// whose writes cannot fail is answered before it reaches JavaScript, and the held bytes cross
// together before anything else does. Nothing may tell: every program sees each write it was told
// succeeded, in the order they were made, whatever ran beside it — checked against a local
// directory given the same operations, with no pauses between them.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { contentAt, fuseOpsIn, type MountFixture, mountFixture, noteAt, q, sh } from "../helpers/mount.ts";

let m: MountFixture;
let local: string;

beforeAll(async () => {
  m = mountFixture();
  await m.start({ args: ["--trace"] });
  local = mkdtempSync(join(tmpdir(), "txtfs-held-"));
});
afterAll(async () => {
  rmSync(local, { recursive: true, force: true });
  await m?.close();
});

const api = () => m.current.api;

/**
 * Random operations on a few notes through several descriptors at once, run on the mount and on
 * a local directory side by side; after each one every file is read through a fresh descriptor
 * (and, every few, by `cat` in another process) and compared. Prints the first difference with
 * the operations that led to it, or "ok" and the final contents.
 */
const DIFFERENTIAL = String.raw`
import json, os, random, subprocess, sys
seed, ops, mnt, ref = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
rnd = random.Random(seed)
names = ["a.md", "b.md", "c.md"]
for root in (mnt, ref):
    os.makedirs(os.path.join(root, "h%d" % seed), exist_ok=True)
path = lambda root, n: os.path.join(root, "h%d" % seed, n)
fds = []  # [(name, mode, mount fd, ref fd)]
log = []
def text(k):
    return "".join(rnd.choice("abcdefgh \n") for _ in range(k)).encode()
def read(p):
    try:
        with open(p, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None
def both(fn):
    a = b = None
    try: a = ("ok", fn(0))
    except OSError as e: a = ("err", e.errno)
    try: b = ("ok", fn(1))
    except OSError as e: b = ("err", e.errno)
    return a, b
for step in range(ops):
    kind = rnd.choice(["open", "write", "write", "write", "pwrite", "pwrite", "trunc", "fsync", "close", "pread"])
    if kind == "open" or not fds:
        n = rnd.choice(names)
        mode = rnd.choice(["w", "w", "rw", "a", "wx"])
        flags = {"w": os.O_WRONLY | os.O_CREAT | os.O_TRUNC, "rw": os.O_RDWR | os.O_CREAT,
                 "a": os.O_WRONLY | os.O_CREAT | os.O_APPEND, "wx": os.O_WRONLY | os.O_CREAT}[mode]
        a, b = both(lambda i: os.open(path((mnt, ref)[i], n), flags, 0o644))
        log.append(["open", n, mode])
        if a[0] != b[0]:
            print(json.dumps({"step": step, "log": log, "diff": ["open", a, b]})); sys.exit(0)
        if a[0] == "ok": fds.append((n, mode, a[1], b[1]))
    else:
        i = rnd.randrange(len(fds))
        n, mode, fm, fr = fds[i]
        size = os.fstat(fr).st_size
        if kind == "write":
            data = text(rnd.choice([1, 3, 40, 700, 5000]))
            a, b = both(lambda j: os.write((fm, fr)[j], data))
            log.append(["write", n, mode, len(data)])
        elif kind == "pwrite":
            data = text(rnd.choice([1, 5, 100, 3000]))
            off = rnd.randint(0, size)
            a, b = both(lambda j: os.pwrite((fm, fr)[j], data, off))
            log.append(["pwrite", n, mode, off, len(data)])
        elif kind == "trunc":
            to = rnd.randint(0, size)
            a, b = both(lambda j: os.ftruncate((fm, fr)[j], to))
            log.append(["ftruncate", n, mode, to])
        elif kind == "fsync":
            a, b = both(lambda j: os.fsync((fm, fr)[j]))
            log.append(["fsync", n, mode])
        elif kind == "pread":
            off = rnd.randint(0, size)
            a, b = both(lambda j: os.pread((fm, fr)[j], 100000, off))
            log.append(["pread", n, mode, off])
        else:
            a, b = both(lambda j: os.close((fm, fr)[j]))
            fds.pop(i)
            log.append(["close", n, mode])
        if a != b:
            print(json.dumps({"step": step, "log": log, "diff": [kind, str(a)[:200], str(b)[:200]]})); sys.exit(0)
    for n in names:
        got, want = read(path(mnt, n)), read(path(ref, n))
        if step % 7 == 0 and want is not None:
            got = subprocess.run(["cat", path(mnt, n)], capture_output=True).stdout
        if got != want:
            print(json.dumps({"step": step, "log": log, "file": n, "mount": str(got)[-200:], "local": str(want)[-200:]})); sys.exit(0)
for n, mode, fm, fr in fds:
    os.close(fm); os.close(fr)
print(json.dumps({"ok": True, "files": {n: (read(path(ref, n)) or b"").decode() for n in names if read(path(ref, n)) is not None}}))
`;

function python(
  args: string[],
  timeoutMs = 120_000,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn("python3", args, { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe("writes held in C", () => {
  it("a shell writing notes in pieces (printf > new, echo > note) sends each note's pieces to JavaScript along with close's flush", async () => {
    const mark = m.current.stderr().length;
    const r = await m.sh(
      `mkdir p && for i in $(seq 1 20); do printf '# %s\\n\\n%s\\n' "title $i" "body $i" > p/n$i.md; done &&
       for i in $(seq 1 20); do printf 'again %s\\n' "$i" "second line" > p/n$i.md; done && cat p/n7.md`,
    );
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("again 7\nagain second line\n");
    // 40 saves of 3 and 2 pieces each: their pieces reached JavaScript with close's flush, no
    // write did (bash flushes `> note` over a note twice: after the truncate and at close).
    const ops = m.current.stderr().slice(mark);
    expect(fuseOpsIn(ops, "write", "/p/")).toBe(0);
    expect(fuseOpsIn(ops, "flush", "/p/")).toBe(60);
    expect(await contentAt(api(), "p/n20.md")).toBe("again 20\nagain second line\n");
  });

  it("appends (>>, to notes read here and not) go to JavaScript along with close's flush, at the note's end", async () => {
    await m.sh(`mkdir ap && for i in $(seq 1 10); do echo "first $i" > ap/n$i.md; done`);
    await m.remount({ args: ["--trace"] }); // notes 6-10 are not read since the mount: appended blind
    const mark = m.current.stderr().length;
    const r = await m.sh(
      `cat ap/n1.md ap/n2.md ap/n3.md ap/n4.md ap/n5.md > /dev/null &&
       for i in $(seq 1 10); do printf 'second %s\n' "$i" >> ap/n$i.md; printf 'third %s\n' "$i" >> ap/n$i.md; done &&
       cat ap/n3.md ap/n8.md`,
    );
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("first 3\nsecond 3\nthird 3\nfirst 8\nsecond 8\nthird 8\n");
    expect(fuseOpsIn(m.current.stderr().slice(mark), "write", "/ap/")).toBe(0);
    expect(await contentAt(api(), "ap/n10.md")).toBe("first 10\nsecond 10\nthird 10\n");
  });

  it("random writes through several descriptors at once read back as on a local directory, after every step", async () => {
    const seeds = [1, 2, 3, 4, 5, 6];
    const results = await Promise.all(
      seeds.map((seed) => python(["-c", DIFFERENTIAL, String(seed), "150", m.dirs.mnt, local])),
    );
    for (const [k, r] of results.entries()) {
      expect(r.stderr, `seed ${seeds[k]}`).toBe("");
      const out = JSON.parse(r.stdout.trim().split("\n").pop() ?? "{}");
      expect(out, `seed ${seeds[k]}`).toMatchObject({ ok: true });
      await m.sync();
      for (const [name, content] of Object.entries(out.files as Record<string, string>))
        expect(await contentAt(api(), `h${seeds[k]}/${name}`), `seed ${seeds[k]} ${name}`).toBe(content);
    }
  });

  it("another program reading while a writer adds pieces without pause sees each piece the writer was told was written", async () => {
    // The writer reports how many pieces it wrote; every read started after that report must
    // hold at least those pieces (and only whole pieces of the writer's, in order).
    const script = String.raw`
import os, subprocess, sys
p = sys.argv[1]
fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
bad = 0
for k in range(400):
    os.write(fd, b"piece %04d\n" % k)
    seen = subprocess.run(["cat", p], capture_output=True).stdout if k % 8 == 0 else open(p, "rb").read()
    want = b"".join(b"piece %04d\n" % j for j in range(k + 1))
    if seen != want:
        bad += 1
        print("after piece %d: %r" % (k, seen[-40:]))
os.close(fd)
print("bad", bad)
`;
    const r = await python(["-c", script, join(m.dirs.mnt, "race.md")]);
    expect(r.stderr).toBe("");
    expect(r.stdout.trim().split("\n").pop()).toBe("bad 0");
    await m.sync();
    expect(await contentAt(api(), "race.md")).toBe(
      Array.from({ length: 400 }, (_, j) => `piece ${String(j).padStart(4, "0")}\n`).join(""),
    );
  });

  it("a rename, a stat and another descriptor's write right after held pieces see them (no pause between)", async () => {
    const r = await sh(
      `exec 3> r1.md && printf 'one ' >&3 && printf 'two' >&3 && stat -c %s r1.md && mv r1.md r2.md &&
       printf ' three' >&3 && exec 4>> r2.md && printf ' four' >&4 && printf ' five' >&3 && exec 3>&- 4>&- && cat r2.md`,
      { cwd: m.dirs.mnt },
    );
    expect(r.stderr).toBe("");
    // Local semantics: fd 3 writes at its own offset (13 after "one two three"), over fd 4's append.
    expect(r.stdout).toBe(`7\none two three five`);
    await m.sync();
    expect(await contentAt(api(), "r2.md")).toBe("one two three five");
    const ref = await sh(
      `exec 3> r1.md && printf 'one ' >&3 && printf 'two' >&3 && mv r1.md r2.md && printf ' three' >&3 &&
       exec 4>> r2.md && printf ' four' >&4 && printf ' five' >&3 && exec 3>&- 4>&- && cat r2.md`,
      { cwd: local },
    );
    expect(ref.stdout).toBe("one two three five");
  });

  it("a note's extended attributes, read and set through its descriptor right after held pieces, are answered as such", async () => {
    // Through the descriptor: no lookup comes first (it would hand the pieces over itself).
    const script = `
import os, sys
out = []
for i in range(6):
    p = os.path.join(sys.argv[1], "x%d.md" % i)
    fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.write(fd, b"a"); os.write(fd, b"b")
    out.append(os.getxattr(fd, "user.txtfs.tags"))
    os.write(fd, b"c")
    os.setxattr(fd, "user.txtfs.tags", b"t%d" % i)
    os.write(fd, b"d")
    out.append(os.getxattr(fd, "user.txtfs.tags"))
    os.close(fd)
    out.append(open(p, "rb").read())
print(b"|".join(out).decode())
`;
    const r = await python(["-c", script, m.dirs.mnt]);
    expect(r.stderr).toBe("");
    expect(r.stdout.trim()).toBe([0, 1, 2, 3, 4, 5].map((i) => `|t${i}|abcd`).join("|")); // no tags, then its own
    await m.sync();
    expect(await contentAt(api(), "x5.md")).toBe("abcd");
    expect((await noteAt(api(), "x5.md")).tags).toEqual(["t5"]);
  });

  it("a daemon stopped (SIGTERM) while a program holds a new note open keeps the pieces it wrote", async () => {
    const path = join(m.dirs.mnt, "open-new.md");
    const script = `import os, time
fd = os.open(${JSON.stringify(path)}, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
for k in range(5): os.write(fd, b"piece %d\\n" % k)
print("ready", flush=True)
time.sleep(30)`;
    const py = spawn("python3", ["-c", script], { stdio: ["ignore", "pipe", "pipe"] });
    try {
      await new Promise<void>((resolve, reject) => {
        py.stdout.on("data", (x) => (String(x).includes("ready") ? resolve() : undefined));
        py.once("exit", (code) => reject(new Error(`python exited ${code}`)));
      });
      await m.remount({ args: ["--trace"] });
    } finally {
      py.kill("SIGKILL");
    }
    const want = "piece 0\npiece 1\npiece 2\npiece 3\npiece 4\n";
    expect(await contentAt(api(), "open-new.md")).toBe(want);
    expect((await sh(`cat ${q("open-new.md")}`, { cwd: m.dirs.mnt })).stdout).toBe(want);
  });
});

// Read-only opens of notes answered in C (native/fuse3/opens.c: a note marked `openable` when the
// kernel is given its attributes): `grep -r` and `cat` never cross into JavaScript to open or close a note, and
// they read exactly what an open made by JavaScript would have read — also a note being written
// through another descriptor, one deleted while open, one changed remotely a moment ago. Opens are
// counted from the daemon's trace (--trace logs every FUSE operation that reaches JavaScript).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  fuseOpsIn,
  type MountFixture,
  mountFixture,
  noteAt,
  settleLog,
  updateNote,
  waitFor,
} from "../helpers/mount.ts";

let m: MountFixture;

beforeAll(async () => {
  m = mountFixture();
  await m.start({ args: ["--trace"] });
}, 60_000);
afterAll(() => m?.close());

/** FUSE operations `op` on paths under `prefix` that reached JavaScript since `mark` (a trace length). */
const opsSince = (mark: number, op: string, prefix: string) =>
  fuseOpsIn(m.current.stderr().slice(mark), op, prefix);

describe("read-only opens answered natively", () => {
  it("grep -r and cat open and close notes without JavaScript, and read exactly the notes", async () => {
    const made = await m.sh(
      'mkdir -p nat/a nat/b && for i in $(seq 1 20); do echo "line $i zephyr" > nat/a/n$i.md; echo "other $i" > nat/b/n$i.md; done',
    );
    expect(made.code).toBe(0);
    await m.sync();
    await settleLog();
    const mark = m.current.stderr().length;
    const r = await m.sh("grep -rc zephyr nat | sort | head -3 && cat nat/b/n7.md nat/a/n20.md");
    expect(r.stdout).toBe("nat/a/n1.md:1\nnat/a/n10.md:1\nnat/a/n11.md:1\nother 7\nline 20 zephyr\n");
    await settleLog();
    expect(opsSince(mark, "open", "/nat/")).toBe(0);
    expect(opsSince(mark, "release", "/nat/")).toBe(0);
    expect(opsSince(mark, "read", "/nat/")).toBeGreaterThan(0); // reads still come (by path)
  });

  it("a note being written through another descriptor reads with its unsaved bytes", async () => {
    expect((await m.sh("echo 'first version' > nat/w.md")).code).toBe(0);
    await m.sync();
    // The writer keeps its descriptor open: nothing flushed yet, as a local disk would show it.
    const r = await m.sh("exec 3<>nat/w.md; printf 'FIRST' >&3; cat nat/w.md; exec 3>&-; cat nat/w.md");
    expect(r.stdout).toBe("FIRST version\nFIRST version\n");
    await m.sync();
    expect((await noteAt(m.current.api, "nat/w.md")).content).toBe("FIRST version\n");
  });

  it("a reader of a note deleted while open keeps reading it", async () => {
    expect((await m.sh("printf 'kept while open\\n' > nat/r.md")).code).toBe(0);
    await m.sync();
    const mark = m.current.stderr().length;
    const r = await m.sh("exec 3<nat/r.md; rm nat/r.md; cat <&3; ls nat | grep -c '^r.md$'");
    expect(r.stdout).toBe("kept while open\n0\n");
    await settleLog();
    expect(opsSince(mark, "open", "/nat/r.md")).toBe(0); // it was opened natively
  });

  it("open(O_RDONLY | O_TRUNC) truncates, as on a local disk, and the empty note goes up", async () => {
    expect((await m.sh("printf 'to be emptied' > nat/t.md")).code).toBe(0);
    await m.sync();
    const r = await m.sh(
      `python3 -c "import os; fd = os.open('nat/t.md', os.O_RDONLY | os.O_TRUNC); print(os.fstat(fd).st_size, len(os.read(fd, 100))); os.close(fd)" && stat -c %s nat/t.md`,
    );
    expect(r.stdout, r.stderr).toBe("0 0\n0\n");
    await m.sync();
    expect((await noteAt(m.current.api, "nat/t.md")).content).toBe("");
  });

  it("fsync through a read-only descriptor delivers what was written to the note", async () => {
    // `sync FILE` opens read-only; once it returns, the note is on the service (no `txtfs sync`).
    const r = await m.sh(
      "printf 'synced through a reader' > nat/s.md && python3 -c \"import os; fd = os.open('nat/s.md', os.O_RDONLY); os.fsync(fd); os.close(fd)\"",
    );
    expect(r.code, r.stderr).toBe(0);
    expect((await noteAt(m.current.api, "nat/s.md")).content).toBe("synced through a reader");
  });

  it("a note changed remotely is opened by JavaScript (direct I/O) while the kernel may hold its old size", async () => {
    expect((await m.sh("printf 'short\\n' > nat/x.md && cat nat/x.md >/dev/null")).code).toBe(0);
    await m.sync();
    const note = await noteAt(m.current.api, "nat/x.md");
    const longer = `short\n${"grown remotely\n".repeat(50)}`;
    await updateNote(m.current.api, note.id, { content: longer });
    const mark = m.current.stderr().length;
    // As soon as the mount shows the change, a read shows all of it (never cut at the old size).
    const r = await m.sh(
      `(${waitFor(`[ "$(stat -c %s nat/x.md)" = ${longer.length} ]`, 5)}) && cat nat/x.md`,
    );
    expect(r.stdout).toBe(longer);
    await settleLog();
    expect(opsSince(mark, "open", "/nat/x.md")).toBeGreaterThan(0);
  });
});

describe("stats of a note opened natively", () => {
  it("are answered in C after a read, and show every change at once", async () => {
    // Sizes 2..11 bytes more each: every note tells its own size.
    const made = await m.sh("mkdir -p nat/st && for i in $(seq 1 10); do seq 1 $i > nat/st/n$i.md; done");
    expect(made.code).toBe(0);
    await m.sync();
    // Reads that reach JavaScript mark the note's atime stale in the kernel: the next stat asks.
    expect((await m.sh("cat nat/st/*.md >/dev/null")).code).toBe(0);
    await settleLog();
    const mark = m.current.stderr().length;
    const sizes = await m.sh("stat -c '%n %s %a' nat/st/n*.md | sort -V");
    const seqBytes = (n: number) => Array.from({ length: n }, (_, i) => `${i + 1}\n`).join("").length;
    expect(sizes.stdout).toBe(
      Array.from({ length: 10 }, (_, i) => `nat/st/n${i + 1}.md ${seqBytes(i + 1)} 644\n`).join(""),
    );
    await settleLog();
    expect(opsSince(mark, "getattr", "/nat/st/")).toBe(0);

    // Each change, by this mount or the service, shows at the very next stat (no pause between).
    const r = await m.sh(
      [
        "printf 'more' >> nat/st/n1.md; stat -c %s nat/st/n1.md",
        "truncate -s 1 nat/st/n2.md; stat -c %s nat/st/n2.md",
        "touch -d '2001-02-03 04:05:06 UTC' nat/st/n3.md; stat -c %Y nat/st/n3.md",
        "mv nat/st/n4.md nat/st/n9.md; stat -c %s nat/st/n9.md",
        "exec 3<>nat/st/n5.md; printf 'longer than it was' >&3; stat -c %s nat/st/n5.md; exec 3>&-",
        "rm nat/st/n6.md; stat nat/st/n6.md 2>/dev/null || echo gone",
      ].join("; "),
    );
    expect(r.stdout, r.stderr).toBe(`${seqBytes(1) + 4}\n1\n981173106\n${seqBytes(4)}\n18\ngone\n`);
    // A note written, read and stat'ed here before it went up, then changed remotely.
    expect(
      (await m.sh("printf 'local' > nat/st/n7.md && cat nat/st/n7.md && stat -c %s nat/st/n7.md")).stdout,
    ).toBe("local5\n");
    await m.sync();
    const note = await noteAt(m.current.api, "nat/st/n7.md");
    const remote = "changed remotely, longer than before\n";
    await updateNote(m.current.api, note.id, { content: remote });
    const seen = await m.sh(
      `(${waitFor(`[ "$(stat -c %s nat/st/n7.md)" = ${remote.length} ]`, 5)}) && cat nat/st/n7.md`,
    );
    expect(seen.stdout).toBe(remote);
  });
});

describe("after a remote change", () => {
  it("opens natively again as soon as the window in which the kernel may hold its old size has passed", async () => {
    expect((await m.sh("mkdir -p nat && printf 'short\\n' > nat/y.md && cat nat/y.md >/dev/null")).code).toBe(
      0,
    );
    await m.sync();
    const note = await noteAt(m.current.api, "nat/y.md");
    const longer = "short, then changed remotely\n";
    await updateNote(m.current.api, note.id, { content: longer });
    // Seen (stat) within the window: what C keeps of it says "not before the window ends".
    const seen = await m.sh(waitFor(`[ "$(stat -c %s nat/y.md)" = ${longer.length} ]`, 5));
    expect(seen.code).toBe(0);
    await new Promise((r) => setTimeout(r, 1_700)); // the window (1.5 s), not C's 60 s backstop
    await settleLog();
    const mark = m.current.stderr().length;
    expect((await m.sh("cat nat/y.md")).stdout).toBe(longer);
    await settleLog();
    expect(opsSince(mark, "open", "/nat/y.md")).toBe(0);
  });
});

describe("a large note opened natively", () => {
  let small: MountFixture;
  beforeAll(async () => {
    small = mountFixture();
    // 512 KiB of bodies in memory: a 700 KB note is kept in the ring file only.
    await small.start({ args: ["--trace", "--cache-size", "2M"] });
  }, 60_000);
  afterAll(() => small?.close());

  it("reads whole, piece by piece, each piece read alone from the cache's ring", async () => {
    const lines = Array.from({ length: 20_000 }, (_, i) => `line ${i} of a note read in pieces\n`);
    const content = lines.join(""); // ~700 KB: six 128 KiB reads
    // Written here and delivered: the body is cached (in the ring), and the note's time is now
    // the service's, so the kernel drops the pages it kept from the write at the next open.
    const made = await small.sh(
      `mkdir big && for i in $(seq 0 19999); do echo "line $i of a note read in pieces"; done > big/n.md`,
      30_000,
    );
    expect(made.code).toBe(0);
    expect((await noteAt(small.current.api, "big/n.md")).content).toBe(content);
    await settleLog();
    const mark = small.current.stderr().length;
    const r = await small.sh("sha256sum < big/n.md && grep -c 'of a note' big/n.md");
    const { createHash } = await import("node:crypto");
    expect(r.stdout).toBe(`${createHash("sha256").update(content).digest("hex")}  -\n20000\n`);
    await settleLog();
    const trace = small.current.stderr().slice(mark);
    const count = (op: string) =>
      trace.split("\n").filter((l) => l.includes(`"op":"${op}"`) && l.includes('"path":"/big/n.md"')).length;
    expect(count("open")).toBe(0);
    // In pieces (~700 KB: the kernel reads up to its max_pages at once, 128 KiB-1 MiB).
    expect(count("read")).toBeGreaterThanOrEqual(2);
  }, 60_000); // 20,000 traced writes, then a read: 6-16 s on this machine, past the default 20 s once
});

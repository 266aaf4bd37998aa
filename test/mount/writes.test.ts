// Writes and directory changes through a real mount, checked through the API: echo >, >>, truncate,
// cp, cp -r, tee, dd at offsets, touch, fsync; rmdir, rm -rf, mv.
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  contentAt,
  findByPath,
  flatIndex,
  type MountFixture,
  mountFixture,
  noteAt,
  q,
  waitFor,
} from "../helpers/mount.ts";

let m: MountFixture;

beforeAll(async () => {
  m = mountFixture();
  await m.start();
  const r = await m.sh("mkdir w d");
  expect(r.code).toBe(0);
});
afterAll(() => m?.close());

const api = () => m.current.api;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Every folder and note below a mount folder path, as relative paths (folders end with `/`). */
async function remoteTree(path: string): Promise<string[]> {
  const index = await flatIndex(api());
  const top = await findByPath(api(), path);
  if (!top) return [];
  const out: string[] = [];
  const walk = (folderId: string, prefix: string) => {
    for (const f of index.folders.filter((x) => x.parentFolderId === folderId)) {
      out.push(`${prefix}${f.name}/`);
      walk(f.id, `${prefix}${f.name}/`);
    }
    for (const f of index.files.filter((x) => x.folderId === folderId)) out.push(`${prefix}${f.name}`);
  };
  walk(top.id, "");
  return out.sort();
}

describe("writes", () => {
  it("echo > creates a note, echo > over it replaces the content in place, >> appends", async () => {
    expect((await m.sh("echo first > w/echo.md")).code).toBe(0);
    const created = await noteAt(api(), "w/echo.md");
    expect(created.content).toBe("first\n");

    expect((await m.sh("echo second > w/echo.md")).code).toBe(0);
    const replaced = await noteAt(api(), "w/echo.md");
    expect([replaced.id, replaced.content]).toEqual([created.id, "second\n"]);

    expect((await m.sh("echo third >> w/echo.md && echo fourth >> w/echo.md")).code).toBe(0);
    const appended = await noteAt(api(), "w/echo.md");
    expect([appended.id, appended.content]).toEqual([created.id, "second\nthird\nfourth\n"]);
    const r = await m.sh("cat w/echo.md; stat -c %s w/echo.md");
    expect(r.stdout).toBe("second\nthird\nfourth\n20\n");
  });

  it("truncate -s shortens, and truncate -s 0 empties the note", async () => {
    expect((await m.sh("printf 0123456789 > w/trunc.md && truncate -s 4 w/trunc.md")).code).toBe(0);
    const n = await noteAt(api(), "w/trunc.md");
    expect(n.content).toBe("0123");
    expect((await m.sh("stat -c %s w/trunc.md")).stdout).toBe("4\n");
    expect((await m.sh("truncate -s 0 w/trunc.md && stat -c %s w/trunc.md")).stdout).toBe("0\n");
    const empty = await noteAt(api(), "w/trunc.md");
    expect([empty.id, empty.content]).toEqual([n.id, ""]);
  });

  it("cp from the local disk and within the mount copies the bytes", async () => {
    const local = join(m.dirs.base, "local.md");
    writeFileSync(local, "from local disk\nsecond line ✓\n");
    const r = await m.sh(`cp '${local}' w/cp1.md && cp w/cp1.md w/cp2.md && cp w/cp1.md d/`);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    for (const p of ["w/cp1.md", "w/cp2.md", "d/cp1.md"]) {
      expect(await contentAt(api(), p)).toBe("from local disk\nsecond line ✓\n");
    }
    // cp over an existing note keeps its id
    const before = await noteAt(api(), "w/cp2.md");
    writeFileSync(local, "overwritten\n");
    expect((await m.sh(`cp '${local}' w/cp2.md`)).code).toBe(0);
    const after = await noteAt(api(), "w/cp2.md");
    expect([after.id, after.content]).toEqual([before.id, "overwritten\n"]);
  });

  it("cp -r copies a directory tree into the mount and within it", async () => {
    const src = join(m.dirs.base, "srctree");
    mkdirSync(join(src, "sub", "subsub"), { recursive: true });
    mkdirSync(join(src, "empty"));
    writeFileSync(join(src, "top.md"), "top\n");
    writeFileSync(join(src, "sub", "one.txt"), "one\n");
    writeFileSync(join(src, "sub", "subsub", "two.md"), "two\n");
    let r = await m.sh(`cp -r '${src}' w/tree`);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const expected = ["empty/", "sub/", "sub/one.txt", "sub/subsub/", "sub/subsub/two.md", "top.md"];
    expect(await remoteTree("w/tree")).toEqual(expected);
    expect(await contentAt(api(), "w/tree/sub/subsub/two.md")).toBe("two\n");

    r = await m.sh("cp -r w/tree w/tree2 && find w/tree2 | sort");
    expect(r.code).toBe(0);
    expect(await remoteTree("w/tree2")).toEqual(expected);
    expect(await contentAt(api(), "w/tree2/sub/one.txt")).toBe("one\n");
    expect(r.stdout.trim().split("\n")).toEqual([
      "w/tree2",
      ...expected.map((p) => `w/tree2/${p}`.replace(/\/$/, "")),
    ]);
  });

  it("tee and tee -a write the note", async () => {
    expect(
      (await m.sh("echo teed | tee w/tee.md >/dev/null && echo again | tee -a w/tee.md >/dev/null")).code,
    ).toBe(0);
    expect(await contentAt(api(), "w/tee.md")).toBe("teed\nagain\n");
  });

  it("dd conv=notrunc seek= writes at an offset without truncating", async () => {
    let r = await m.sh(
      "printf 0123456789 > w/dd.md && printf XY | dd of=w/dd.md bs=1 seek=4 conv=notrunc status=none",
    );
    expect(r.code).toBe(0);
    const n = await noteAt(api(), "w/dd.md");
    expect(n.content).toBe("0123XY6789");
    // a block write past a 4 KiB boundary of a longer note, then a write that extends it
    r = await m.sh(
      "head -c 9000 /dev/zero | tr '\\0' a > w/dd2.md && printf BBBB | dd of=w/dd2.md bs=1 seek=4094 conv=notrunc status=none && printf END | dd of=w/dd2.md bs=1 seek=9000 conv=notrunc status=none",
    );
    expect(r.code).toBe(0);
    const big = await contentAt(api(), "w/dd2.md");
    expect(big).toBe(`${"a".repeat(4094)}BBBB${"a".repeat(9000 - 4098)}END`);
    expect((await m.sh("stat -c %s w/dd2.md")).stdout).toBe("9003\n");
  });

  it("touch creates an empty note and leaves an existing one unchanged", async () => {
    expect((await m.sh("touch w/touched.md")).code).toBe(0);
    // (whether it is remote at once is the next test's subject: give the release a moment here)
    for (let i = 0; i < 40 && !(await findByPath(api(), "w/touched.md")); i++) await sleep(50);
    const created = await noteAt(api(), "w/touched.md");
    expect(created.content).toBe("");
    const before = await noteAt(api(), "w/echo.md");
    expect((await m.sh("touch w/echo.md && cat w/echo.md")).stdout).toBe(before.content);
    const after = await noteAt(api(), "w/echo.md");
    expect([after.id, after.etag, after.content]).toEqual([before.id, before.etag, before.content]);
    // only one note was made by the touch
    const index = await flatIndex(api());
    expect(index.files.filter((f) => f.name === "touched.md")).toHaveLength(1);
  });

  it("a new note made by touch exists remotely as soon as touch has returned", async () => {
    // close() waits for FLUSH but not for RELEASE: the create must not wait for the release
    const missing: string[] = [];
    for (let i = 0; i < 20; i++) {
      expect((await m.sh(`touch w/t${i}.md`)).code).toBe(0);
      if (!(await findByPath(api(), `w/t${i}.md`))) missing.push(`t${i}.md`);
    }
    expect(missing).toEqual([]);
  });

  it("fsync uploads before close (python os.fsync), and sync works", async () => {
    const script = [
      "import os, sys",
      "f = open('w/fsync.md', 'w')",
      "f.write('synced body\\n')",
      "f.flush()",
      "os.fsync(f.fileno())",
      "print('synced', flush=True)",
      "sys.stdin.readline()",
      "f.write('after\\n')",
      "f.close()",
    ].join("\n");
    const child = spawn("python3", ["-c", script], { cwd: m.dirs.mnt, stdio: ["pipe", "pipe", "pipe"] });
    let err = "";
    child.stderr.on("data", (d) => {
      err += d;
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    await new Promise<void>((resolve, reject) => {
      child.stdout.on("data", (d) => (String(d).includes("synced") ? resolve() : undefined));
      child.once("exit", (code) => reject(new Error(`python exited ${code}: ${err}`)));
    });
    try {
      // the file is still open: what fsync promised must already be remote
      expect(await contentAt(api(), "w/fsync.md")).toBe("synced body\n");
    } finally {
      child.stdin.end("\n");
    }
    expect(await exited).toBe(0);
    await m.sync();
    expect(await contentAt(api(), "w/fsync.md")).toBe("synced body\nafter\n");

    expect((await m.sh("echo s > w/sync.md && sync && sync -f w/sync.md")).code).toBe(0);
    expect(await contentAt(api(), "w/sync.md")).toBe("s\n");
  });
  it("cp -a carries the note's tags and context to the copy", async () => {
    expect((await m.sh("echo tagged > w/tagged.md")).code).toBe(0);
    const src = await noteAt(api(), "w/tagged.md");
    await api().put(`/api/v1/files/${src.id}`, { tags: ["t1", "t2"], context: "copied context" });
    expect(
      (await m.sh(waitFor(`[ "$(getfattr --only-values -n user.txtfs.tags w/tagged.md)" = t1,t2 ]`))).code,
    ).toBe(0);
    const r = await m.sh("cp -a w/tagged.md w/tagged-copy.md");
    expect(r.code).toBe(0);
    const copy = await noteAt(api(), "w/tagged-copy.md");
    expect(copy.id).not.toBe(src.id);
    expect(copy).toMatchObject({ content: "tagged\n", tags: ["t1", "t2"], context: "copied context" });
  });

  it("a note removed while open stays readable through the open fd and is deleted remotely", async () => {
    expect((await m.sh("echo 'still here' > w/open-rm.md")).code).toBe(0);
    const note = await noteAt(api(), "w/open-rm.md");
    const r = await m.sh(
      // The kernel sends the release of a closed file after close returns: give it a moment.
      "exec 3< w/open-rm.md && rm w/open-rm.md && ls -A w | grep -c open-rm; cat <&3; exec 3<&-; " +
        "for i in $(seq 20); do ls -A w | grep -q -e open-rm -e fuse_hidden || break; sleep 0.05; done; ls -A w | grep -c -e open-rm -e fuse_hidden",
    );
    expect(r.stdout).toBe("0\nstill here\n0\n");
    expect((await api().get(`/api/v1/files/${note.id}`)).status).toBe(404);
  });

  it("a note holds at most 5 MiB: exactly that much is saved whole", async () => {
    const limit = 5 * 1024 * 1024;
    const r = await m.sh(`head -c ${limit} /dev/zero | tr '\\0' a > w/full.md && stat -c %s w/full.md`);
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe(`${limit}\n`);
    expect((await contentAt(api(), "w/full.md"))?.length).toBe(limit);
  });

  it("a save that would pass 5 MiB is refused whole: EFBIG at the write that crosses, and the note keeps its previous version", async () => {
    expect((await m.sh("echo old > w/huge.md")).code).toBe(0);
    const before = await noteAt(api(), "w/huge.md");
    const big = "head -c 6000000 /dev/zero | tr '\\0' a";
    const attempts = [
      `${big} | dd of=w/huge.md bs=1M conv=notrunc,fsync status=none`, // the 6th write crosses
      `${big} >> w/huge.md`, // appends, the note's body never loaded
      `dd if=/dev/zero of=w/huge.md bs=6M count=1 conv=notrunc status=none`, // one write past the limit
      `python3 -c 'import os; fd = os.open("w/huge.md", os.O_WRONLY); os.pwrite(fd, b"x", ${5 * 1024 * 1024})'`,
      "truncate -s 6M w/huge.md",
    ];
    for (const attempt of attempts) {
      const r = await m.sh(attempt);
      expect(r.code, attempt).not.toBe(0);
      expect(r.stderr, attempt).toMatch(/File too large/);
      const seen = await m.sh("stat -c %s w/huge.md; cat w/huge.md");
      expect(seen.stdout, attempt).toBe("4\nold\n");
      const now = await noteAt(api(), "w/huge.md");
      expect([now.content, now.etag], attempt).toEqual(["old\n", before.etag]);
    }
    // One descriptor going on after the refusal (its writes were held in C: opened with O_TRUNC):
    // every later write, fsync and the close fail too, and nothing of it is kept.
    const goOn = await m.sh(
      `python3 -c ${q(`import os
fd = os.open("w/huge.md", os.O_WRONLY | os.O_TRUNC)
for i in range(5):
    os.write(fd, b"a" * (1024 * 1024))
errors = []
for step in (lambda: os.write(fd, b"past"), lambda: os.pwrite(fd, b"x", 0), lambda: os.write(fd, b"y"), lambda: os.fsync(fd), lambda: os.close(fd)):
    try:
        step()
        errors.append("ok")
    except OSError as e:
        errors.append(e.strerror)
print(errors)`)}`,
    );
    expect(goOn.stdout).toBe(
      `${JSON.stringify(Array(5).fill("File too large")).replaceAll('"', "'").replaceAll(",", ", ")}\n`,
    );
    expect((await m.sh("stat -c %s w/huge.md; cat w/huge.md")).stdout).toBe("4\nold\n");
    expect((await noteAt(api(), "w/huge.md")).etag).toBe(before.etag);
    // `>` truncates, and bash closes the descriptor it opened (dup2 onto stdout): that close saved
    // the empty note before any write came. Of the writes nothing is kept.
    const emptied = await m.sh(`${big} > w/huge.md`);
    expect(emptied.stderr).toMatch(/File too large/);
    expect((await m.sh("stat -c %s w/huge.md")).stdout).toBe("0\n");
    expect(await contentAt(api(), "w/huge.md")).toBe("");
    // What an fsync saved through the same descriptor before the refusal stays.
    const synced = await m.sh(
      `python3 -c ${q(`import os
fd = os.open("w/synced.md", os.O_WRONLY | os.O_CREAT)
os.write(fd, b"kept\\n")
os.fsync(fd)
try:
    n = os.write(fd, b"a" * 6000000)  # cut short by the kernel at the piece that was refused
    os.write(fd, b"a" * (6000000 - n))
except OSError as e:
    print(e.strerror)
try:
    os.close(fd)
except OSError as e:
    print(e.strerror)`)}`,
    );
    expect(synced.stdout).toBe("File too large\nFile too large\n");
    expect((await m.sh("cat w/synced.md")).stdout).toBe("kept\n");
    expect(await contentAt(api(), "w/synced.md")).toBe("kept\n");
    // A new note whose first save is refused exists, empty: its create was answered.
    const r = await m.sh(`${big} > w/new-huge.md`);
    expect(r.stderr).toMatch(/File too large/);
    expect((await m.sh("stat -c %s w/new-huge.md")).stdout).toBe("0\n");
    expect(await contentAt(api(), "w/new-huge.md")).toBe("");
  });
});

describe("errors", () => {
  it("tools get the errno they expect", async () => {
    const cases: [string, RegExp][] = [
      ["cat w/nope.md", /No such file or directory/],
      ["mkdir w", /File exists/],
      ["rmdir w/echo.md", /Not a directory/],
      ["ln w/echo.md w/hard.md", /Operation not permitted/],
      ["mv w w/echo.md/x", /Not a directory/],
      ["mv d d/inside", /subdirectory of itself|Invalid argument/],
    ];
    for (const [cmd, message] of cases) {
      const r = await m.sh(cmd);
      expect(r.code, cmd).not.toBe(0);
      expect(r.stderr, cmd).toMatch(message);
    }
    // A symlink is kept on this device (test/mount/drive.test.ts): never a note, whatever its name.
    expect((await m.sh("ln -s echo.md w/link.md && readlink w/link.md")).stdout).toBe("echo.md\n");
    expect(await findByPath(api(), "w/link.md")).toBeUndefined();
    expect((await m.sh("rm w/link.md")).code).toBe(0);
    expect(await findByPath(api(), "w/hard.md")).toBeUndefined();
    expect((await findByPath(api(), "d"))?.parentFolderId).toBeNull();
  });
});

describe("directories", () => {
  it("rmdir removes an empty directory remotely", async () => {
    expect((await m.sh("mkdir d/empty")).code).toBe(0);
    const folder = await findByPath(api(), "d/empty");
    expect(folder?.id).toMatch(/^d_/);
    const r = await m.sh("rmdir d/empty && ls d");
    expect(r.code).toBe(0);
    expect(r.stdout.split("\n")).not.toContain("empty");
    expect(await findByPath(api(), "d/empty")).toBeUndefined();
  });

  it("rmdir of a non-empty directory fails with 'Directory not empty' and changes nothing", async () => {
    expect((await m.sh("mkdir -p d/full/inner && echo keep > d/full/keep.md")).code).toBe(0);
    const before = await remoteTree("d/full");
    const r = await m.sh("rmdir d/full");
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/Directory not empty/);
    expect(await remoteTree("d/full")).toEqual(before);
    expect(before).toEqual(["inner/", "keep.md"]);
    expect(await contentAt(api(), "d/full/keep.md")).toBe("keep\n");
    expect((await m.sh("ls d/full")).stdout).toBe("inner\nkeep.md\n");
  });

  it("rm -rf removes a whole tree remotely", async () => {
    let r = await m.sh(
      "mkdir -p d/gone/ga/gb d/gone/gc && echo 1 > d/gone/one.md && echo 2 > d/gone/ga/two.md && echo 3 > d/gone/ga/gb/three.txt && echo 4 > d/gone/gc/four.md",
    );
    expect(r.code).toBe(0);
    const paths = ["d/gone/one.md", "d/gone/ga/two.md", "d/gone/ga/gb/three.txt", "d/gone/gc/four.md"];
    const fileIds = await Promise.all(paths.map(async (p) => (await noteAt(api(), p)).id as string));
    const folderIds = await Promise.all(
      ["d/gone", "d/gone/ga", "d/gone/ga/gb", "d/gone/gc"].map(async (p) => (await findByPath(api(), p)).id),
    );
    r = await m.sh("rm -rf d/gone && ls d");
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout.split("\n")).not.toContain("gone");
    const index = await flatIndex(api());
    for (const id of folderIds) expect(index.folders.some((f) => f.id === id)).toBe(false);
    for (const id of fileIds) expect((await api().get(`/api/v1/files/${id}`)).status).toBe(404);
  });

  it("mv renames a note within a folder and moves it across folders, keeping its id", async () => {
    expect((await m.sh("mkdir -p d/m1 d/m2 && echo moving > d/m1/a.md")).code).toBe(0);
    const note = await noteAt(api(), "d/m1/a.md");
    expect((await m.sh("mv d/m1/a.md d/m1/b.md")).code).toBe(0);
    let now = await noteAt(api(), "d/m1/b.md");
    expect([now.id, now.name, now.content]).toEqual([note.id, "b.md", "moving\n"]);
    expect(await findByPath(api(), "d/m1/a.md")).toBeUndefined();

    expect((await m.sh("mv d/m1/b.md d/m2/")).code).toBe(0);
    const m2 = await findByPath(api(), "d/m2");
    now = await noteAt(api(), "d/m2/b.md");
    expect([now.id, now.folderId, now.content]).toEqual([note.id, m2.id, "moving\n"]);

    expect((await m.sh("mv d/m2/b.md d/m1/c.txt")).code).toBe(0);
    now = await noteAt(api(), "d/m1/c.txt");
    expect([now.id, now.name, now.type]).toEqual([note.id, "c.txt", "txt"]);
    const r = await m.sh("ls d/m1 d/m2; cat d/m1/c.txt");
    expect(r.stdout).toBe("d/m1:\nc.txt\n\nd/m2:\nmoving\n");
  });

  it("mv renames and moves folders with their contents, keeping ids", async () => {
    expect((await m.sh("mkdir -p d/fa/sub && echo in > d/fa/sub/in.md && mkdir d/fb")).code).toBe(0);
    const folder = await findByPath(api(), "d/fa");
    const note = await noteAt(api(), "d/fa/sub/in.md");
    expect((await m.sh("mv d/fa d/fa2")).code).toBe(0);
    expect((await findByPath(api(), "d/fa2"))?.id).toBe(folder.id);
    expect((await m.sh("mv d/fa2 d/fb/")).code).toBe(0);
    const moved = await findByPath(api(), "d/fb/fa2");
    const fb = await findByPath(api(), "d/fb");
    expect([moved?.id, moved?.parentFolderId]).toEqual([folder.id, fb.id]);
    expect((await noteAt(api(), "d/fb/fa2/sub/in.md")).id).toBe(note.id);
    const r = await m.sh("cat d/fb/fa2/sub/in.md; ls d");
    expect(r.stdout.split("\n")).toContain("in");
    expect(r.stdout.split("\n")).not.toContain("fa");
    expect(r.stdout.split("\n")).not.toContain("fa2");
  });

  it("mv over an existing note replaces its content and keeps the target's id", async () => {
    expect((await m.sh("echo new > d/src.md && echo old > d/dst.md")).code).toBe(0);
    const src = await noteAt(api(), "d/src.md");
    const dst = await noteAt(api(), "d/dst.md");
    await api().put(`/api/v1/files/${dst.id}`, { tags: ["kept"], context: "dst context" });
    const r = await m.sh("mv -f d/src.md d/dst.md && ls d && cat d/dst.md");
    expect(r.code).toBe(0);
    expect(r.stdout.split("\n")).not.toContain("src.md");
    expect(r.stdout).toMatch(/new\n$/);
    const after = await noteAt(api(), "d/dst.md");
    expect(after).toMatchObject({ id: dst.id, content: "new\n", tags: ["kept"], context: "dst context" });
    expect((await api().get(`/api/v1/files/${src.id}`)).status).toBe(404);
  });
});

// The libfuse3 low-level mount (TXTFS_FUSE=3, src/fuse/lowlevel/): the kernel keeps names,
// attributes and listings for an hour, so a warm walk of the tree asks the daemon nothing, and
// every change made elsewhere must still show at once (the daemon tells the kernel). Also what
// libfuse2's high-level API did for us and the low-level one does not: a removed open note stays
// readable and writable through its descriptor until the last close, and leaves nothing behind.
import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BINDING_PATH } from "../../src/fuse/lowlevel/binding.ts";
import {
  createFolder,
  createNote,
  findByPath,
  fuseOpsIn,
  type MountFixture,
  mountFixture,
  noteAt,
  settleLog,
  sh,
  updateNote,
  waitFor,
} from "../helpers/mount.ts";

let m: MountFixture;

beforeAll(async () => {
  if (!existsSync(BINDING_PATH)) throw new Error(`${BINDING_PATH} is missing: run scripts/setup`);
  m = mountFixture();
  await m.start({ args: ["--trace"], env: { TXTFS_FUSE: "3" } });
}, 60_000);
afterAll(() => m?.close());

const opsSince = (mark: number) =>
  m.current
    .stderr()
    .slice(mark)
    .split("\n")
    .filter((l) => l.includes('"msg":"fuse op"'));

describe("libfuse3 low-level mount", () => {
  it("is mounted through libfuse3: a second ls -lR, seconds after the first, asks the daemon nothing", async () => {
    const made = await m.sh(
      [
        "set -e",
        "mkdir -p walk/a/b walk/c",
        "for i in 1 2 3 4 5; do printf 'n%s\\n' $i > walk/a/n$i.md; printf 'x\\n' > walk/a/b/m$i.md; done",
        "printf 'c\\n' > walk/c/only.md",
      ].join("\n"),
    );
    expect(made.stderr).toBe("");
    const first = await m.sh("ls -lR walk && find walk -name '*.md' | wc -l");
    expect(first.code).toBe(0);
    expect(first.stdout.trim().split("\n").at(-1)).toBe("11");
    // Past the second libfuse2's kernel kept names and attributes for.
    await new Promise((r) => setTimeout(r, 1500));
    await settleLog();
    const mark = m.current.stderr().length;
    // Run on its own (m.sh also asks the daemon to sync after the script: a statfs of the mount).
    const second = await sh("ls -lR walk && find walk -name '*.md' | wc -l", { cwd: m.dirs.mnt });
    expect(second.stdout).toBe(first.stdout);
    await settleLog();
    // find's fts asks statfs of the tree (its leaf optimisation): the kernel never keeps that one.
    expect(opsSince(mark).filter((l) => !l.includes('"op":"statfs"'))).toEqual([]);
  });

  it("shows a change made elsewhere (edit, new note, delete, rename, new folder) though the kernel keeps an hour", async () => {
    const api = m.current.api;
    const folder = await createFolder(api, "elsewhere");
    const edited = await createNote(api, { name: "edited.md", content: "one\n", folderId: folder.id });
    const doomed = await createNote(api, { name: "doomed.md", content: "bye\n", folderId: folder.id });
    const moved = await createNote(api, { name: "before.md", content: "moved\n", folderId: folder.id });
    // The mount sees them, and the kernel now keeps the folder's names, attributes and listing.
    const seen = await m.sh(waitFor("test -e elsewhere/before.md", 5));
    expect(seen.code).toBe(0);
    const warm = await m.sh("ls -l elsewhere && cat elsewhere/edited.md elsewhere/doomed.md");
    expect(warm.stdout).toContain("one\nbye\n");

    await updateNote(api, edited.id, { content: "one\ntwo, longer now\n" });
    expect((await api.delete(`/api/v1/files/${doomed.id}`)).status).toBeLessThan(300);
    await updateNote(api, moved.id, { name: "after.md" });
    await createNote(api, { name: "fresh.md", content: "new\n", folderId: folder.id });
    await createFolder(api, "sub", folder.id);

    const shown = await m.sh(
      waitFor(
        [
          "[ \"$(cat elsewhere/edited.md)\" = \"$(printf 'one\\ntwo, longer now')\" ]",
          "[ $(stat -c %s elsewhere/edited.md) = 20 ]",
          "! test -e elsewhere/doomed.md",
          "! test -e elsewhere/before.md",
          "test -f elsewhere/after.md",
          "test -f elsewhere/fresh.md",
          "test -d elsewhere/sub",
          "[ \"$(ls elsewhere | tr '\\n' ' ')\" = 'after.md edited.md fresh.md sub ' ]",
        ].join(" && "),
        10,
      ),
    );
    const now = await m.sh("ls -l elsewhere; cat elsewhere/edited.md");
    expect(shown.code, now.stdout).toBe(0);
  });

  it("keeps a removed open note readable and writable through its descriptor; the last close leaves nothing", async () => {
    const r = await m.sh(
      [
        "set -e",
        "printf 'kept\\n' > open.md",
        "exec 3<>open.md",
        "rm open.md",
        "test ! -e open.md",
        "cat <&3",
        "printf 'more\\n' >&3",
        "exec 3>&-",
        "ls -a | grep -c fuse_hidden || true",
      ].join("\n"),
    );
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("kept\n0\n");
    expect(await findByPath(m.current.api, "open.md")).toBeUndefined();
    const names = (await m.sh("ls -a")).stdout;
    expect(names).not.toContain("fuse_hidden");
  });

  it("moving a note over one held open keeps the open one readable; the name shows the moved note", async () => {
    const r = await m.sh(
      [
        "set -e",
        "printf 'old\\n' > target.md",
        "printf 'new\\n' > source.md",
        "exec 3<target.md",
        "mv source.md target.md",
        "cat target.md",
        "cat <&3",
        "exec 3<&-",
        "ls -a | grep -c 'fuse_hidden\\|source.md' || true",
      ].join("\n"),
    );
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("new\nold\n0\n");
    expect((await noteAt(m.current.api, "target.md")).content).toBe("new\n");
  });

  it("answers what it cannot do with the right errno, changing nothing", async () => {
    const r = await m.sh(
      [
        "printf 'x\\n' > keep.md",
        "ln keep.md hard.md 2>&1 | grep -c 'Operation not permitted'",
        "mkfifo fifo 2>&1 | grep -c 'Operation not permitted'",
        "getfattr -n user.other keep.md 2>&1 | grep -c 'No such attribute'",
        "ls",
      ].join("\n"),
    );
    expect(r.stdout).toBe(`1\n1\n1\n${(await m.sh("ls")).stdout}`);
    expect(r.stdout).not.toMatch(/hard\.md|fifo/);
    expect((await noteAt(m.current.api, "keep.md")).content).toBe("x\n");
  });

  it("mv -n (RENAME_NOREPLACE) keeps the target; mkdir of a name the kernel keeps fails EEXIST", async () => {
    const r = await m.sh(
      [
        "printf 'a\\n' > na.md",
        "printf 'b\\n' > nb.md",
        "python3 -c \"import ctypes,os; libc=ctypes.CDLL(None, use_errno=True); r=libc.renameat2(-100,b'na.md',-100,b'nb.md',1); print(r, os.strerror(ctypes.get_errno()))\"",
        "cat na.md nb.md",
        "mkdir nb.md 2>&1 | grep -c 'File exists'",
      ].join("\n"),
    );
    expect(r.stdout).toBe("-1 File exists\na\nb\n1\n");
    expect((await noteAt(m.current.api, "nb.md")).content).toBe("b\n");
    expect((await noteAt(m.current.api, "na.md")).content).toBe("a\n");
  });

  it("counts every operation in the trace (the walk above was not silent by accident)", async () => {
    const mark = m.current.stderr().length;
    await m.sh("cat walk/c/only.md > /dev/null");
    await settleLog();
    const trace = m.current.stderr().slice(mark);
    expect(fuseOpsIn(trace, "open", "/walk/c/only.md")).toBe(1);
  });
});

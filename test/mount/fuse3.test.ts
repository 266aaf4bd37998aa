// The libfuse3 low-level mount (src/fuse/, native/fuse3): the kernel keeps names,
// attributes and listings for an hour, so a warm walk of the tree asks the daemon nothing, and
// every change made elsewhere must still show at once (the daemon tells the kernel). Also what
// libfuse2's high-level API did for us and the low-level one does not: a removed open note stays
// readable and writable through its descriptor until the last close, and leaves nothing behind.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BINDING_PATH } from "../../src/fuse/binding.ts";
import { spawnServeWithKey } from "../helpers/cli.ts";
import {
  createFolder,
  createNote,
  findByPath,
  fuseOpsIn,
  isMounted,
  lazyUnmount,
  type MountFixture,
  makeMountDirs,
  mountFixture,
  noteAt,
  removeMountDirs,
  settleLog,
  sh,
  startMount,
  updateNote,
  waitFor,
} from "../helpers/mount.ts";
import { Api } from "../helpers/server.ts";
import { startSlowProxy } from "../helpers/slowProxy.ts";

let m: MountFixture;

beforeAll(async () => {
  if (!existsSync(BINDING_PATH)) throw new Error(`${BINDING_PATH} is missing: run scripts/setup`);
  m = mountFixture();
  await m.start({ args: ["--trace"] });
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

  it("lists a folder larger than one answer whole, in order, each name once (the kernel reads it in pieces)", async () => {
    const r = await m.sh(
      [
        "set -e",
        "mkdir big",
        "for i in $(seq 600); do printf '%s\\n' $i > big/note-with-a-long-name-$i.md; done",
        "ls big | wc -l",
        "ls big | sort -u | wc -l",
        "ls -f big | grep -c '^note-with'",
        "cat big/note-with-a-long-name-600.md",
      ].join("\n"),
    );
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("600\n600\n600\n600\n");
  });

  it("keeps a name's absence (no lookup the second time) and shows the name once it is made elsewhere", async () => {
    const api = m.current.api;
    const folder = await createFolder(api, "absent");
    expect((await m.sh(waitFor("test -d absent", 5))).code).toBe(0);
    const first = await sh("stat absent/later.md absent/later2.md 2>&1 | grep -c 'No such file'", {
      cwd: m.dirs.mnt,
    });
    expect(first.stdout).toBe("2\n");
    await settleLog();
    const mark = m.current.stderr().length;
    const again = await sh("stat absent/later.md 2>&1 | grep -c 'No such file'", { cwd: m.dirs.mnt });
    expect(again.stdout).toBe("1\n");
    await settleLog();
    expect(fuseOpsIn(m.current.stderr().slice(mark), "getattr", "/absent/later")).toBe(0);
    await createNote(api, { name: "later.md", content: "here\n", folderId: folder.id });
    const shown = await sh(waitFor('[ "$(cat absent/later.md 2>/dev/null)" = here ]', 5), {
      cwd: m.dirs.mnt,
    });
    expect(shown.code).toBe(0);
    // Made here, the other absent name is the kernel's own business.
    expect((await m.sh("printf 'mine\\n' > absent/later2.md && cat absent/later2.md")).stdout).toBe("mine\n");
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
          '[ "$(cat elsewhere/edited.md)" = "$(printf \'one\\ntwo, longer now\')" ]',
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
        "getfattr -n user.other keep.md 2>&1 | grep -c 'No such attribute'",
        "ls",
      ].join("\n"),
    );
    // (fifos, sockets and device nodes are kept on this device now: test/mount/drive.test.ts)
    expect(r.stdout).toBe(`1\n1\n${(await m.sh("ls")).stdout}`);
    expect(r.stdout).not.toMatch(/hard\.md/);
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

  it("counts every operation in the trace (the walk above was not silent by accident); reads close without FLUSH", async () => {
    const mark = m.current.stderr().length;
    await m.sh("cat walk/c/only.md > /dev/null");
    await settleLog();
    const trace = m.current.stderr().slice(mark);
    // The read-only open reaches JavaScript once, or not at all when C answers it (the note was
    // delivered and its attributes given as openable in the meantime: nativeOpens.test.ts).
    expect(fuseOpsIn(trace, "open", "/walk/c/only.md")).toBeLessThanOrEqual(1);
    // A read-only handle's close sends no FLUSH (FOPEN_NOFLUSH); a writer's still does.
    expect(fuseOpsIn(trace, "flush", "/walk/c/only.md")).toBe(0);
    const mark2 = m.current.stderr().length;
    expect((await m.sh("echo more >> walk/c/only.md && cat walk/c/only.md")).stdout).toBe("c\nmore\n");
    await settleLog();
    const written = m.current.stderr().slice(mark2);
    // An open for writing always reaches JavaScript: the trace counts it.
    expect(fuseOpsIn(written, "open", "/walk/c/only.md")).toBeGreaterThanOrEqual(1);
    // (bash's redirection of a builtin duplicates the descriptor: each close flushes.)
    expect(fuseOpsIn(written, "flush", "/walk/c/only.md")).toBeGreaterThanOrEqual(1);
  });
});

describe("libfuse3 low-level mount, killed", () => {
  // A notification about a folder waits in the kernel for the folder's lock, which a request of
  // that folder holds until the daemon answers it: sent while one is in flight, a kill -9 left the
  // daemon unable to end and everything touching the mount hung (scripts/bench/fuse3-probe/
  // inval-hazard.sh). The binding sends one only while no request of its node is being answered.
  it("a daemon killed (SIGKILL) while changes made elsewhere are told to the kernel and programs work in that folder ends at once, every time", async () => {
    const dirs = makeMountDirs();
    try {
      for (let round = 0; round < 3; round++) {
        const running = await startMount(dirs);
        const api = running.api;
        const folder = (await findByPath(api, "busy")) ?? (await createFolder(api, "busy"));
        await sh(waitFor("test -d busy", 5), { cwd: dirs.mnt });
        // Programs working in the folder, with no pause, until the mount is gone.
        const worker = spawn(
          "bash",
          [
            "-c",
            `for i in $(seq 100000); do ls -l busy >/dev/null; stat busy/* >/dev/null; echo $i > busy/w$((i % 7)).md; done 2>/dev/null`,
          ],
          { cwd: dirs.mnt, stdio: "ignore" },
        );
        const workerEnded = new Promise((resolve) => worker.once("exit", resolve));
        // Changes made elsewhere in that folder, each told to the kernel.
        const made = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            createNote(api, { name: `r${round}-${i}.md`, content: `${i}\n`, folderId: folder.id }),
          ),
        );
        await Promise.all(made.slice(0, 10).map((n) => api.delete(`/api/v1/files/${n.id}`)));
        await new Promise((r) => setTimeout(r, 50 + round * 40));
        running.child.kill("SIGKILL");
        const ended = await Promise.race([
          running.exited.then(() => true),
          new Promise<boolean>((r) => setTimeout(() => r(false), 10_000)),
        ]);
        expect(ended, `round ${round}: the killed daemon did not end (a thread stuck in the kernel)`).toBe(
          true,
        );
        worker.kill("SIGKILL");
        const workerGone = await Promise.race([
          workerEnded.then(() => true),
          new Promise<boolean>((r) => setTimeout(() => r(false), 10_000)),
        ]);
        expect(workerGone, `round ${round}: a program in the mount hung`).toBe(true);
        await running.stop();
        expect(isMounted(dirs.mnt)).toBe(false);
      }
      // Mounted again, the notes made elsewhere are all there.
      const last = await startMount(dirs);
      const r = await sh("ls busy | grep -c '^r[0-9]-'", { cwd: dirs.mnt });
      expect(r.stdout.trim()).toBe("30");
      await last.stop();
    } finally {
      await removeMountDirs(dirs);
    }
  }, 120_000);
});

describe("libfuse3 low-level mount, killed while the kernel holds a folder's lock", () => {
  // The case the rule is for, made certain: `mkdir` in a folder waits for a slow service
  // (--write-through) while the kernel holds that folder's lock; a note of the folder the kernel
  // knows is deleted elsewhere meanwhile, so its name must be dropped (notify_inval_entry, which
  // needs that lock); then kill -9. Sent at once, the daemon could never end (its thread waiting
  // for the lock, the lock waiting for the daemon); held back, it ends at once.
  it("ends at once, and the mount is clean for the next one", async () => {
    const dirs = makeMountDirs();
    const s = await spawnServeWithKey(`${dirs.base}/service`, "0");
    const proxy = await startSlowProxy(s.url, (method, path) =>
      method === "POST" && path === "/api/v1/folders" ? 4_000 : 0,
    );
    const api = new Api(s.url, s.key);
    try {
      const running = await startMount(dirs, {
        service: { url: proxy.url, key: s.key },
        args: ["--write-through"],
      });
      const folder = await createFolder(api, "busy");
      const doomed = await createNote(api, { name: "doomed.md", content: "x\n", folderId: folder.id });
      expect((await sh(waitFor("cat busy/doomed.md >/dev/null 2>&1", 5), { cwd: dirs.mnt })).code).toBe(0);
      const mkdir = spawn("mkdir", ["busy/slow"], { cwd: dirs.mnt, stdio: "ignore" });
      const mkdirEnded = new Promise((resolve) => mkdir.once("exit", resolve));
      await new Promise((r) => setTimeout(r, 300)); // the mkdir waits in the kernel, busy/ locked
      expect((await api.delete(`/api/v1/files/${doomed.id}`)).status).toBeLessThan(300);
      await new Promise((r) => setTimeout(r, 1_500)); // the feed brings it: told to the kernel
      running.child.kill("SIGKILL");
      const ended = await Promise.race([
        running.exited.then(() => true),
        new Promise<boolean>((r) => setTimeout(() => r(false), 5_000)),
      ]);
      if (!ended) await sh(`umount -f ${dirs.mnt}`, { cwd: "/" }); // aborts the connection
      expect(ended, "the killed daemon did not end").toBe(true);
      expect(
        await Promise.race([
          mkdirEnded.then(() => true),
          new Promise((r) => setTimeout(() => r(false), 5_000)),
        ]),
      ).toBe(true);
      await running.stop();
      if (isMounted(dirs.mnt)) await lazyUnmount(dirs.mnt);
      expect(isMounted(dirs.mnt)).toBe(false);
    } finally {
      await proxy.close();
      await s.stop();
      await removeMountDirs(dirs);
    }
  }, 60_000);
});

describe("libfuse3 low-level mount, options", () => {
  it("-o umask=027,uid=4321 shows every file so (libfuse2's high-level options, applied by txtfs)", async () => {
    const dirs = makeMountDirs();
    try {
      const running = await startMount(dirs, {
        args: ["-o", "umask=027,uid=4321"],
      });
      const r = await sh(
        // The last stat comes after reads: answered in C (opens.c), with the options applied too.
        "mkdir d && printf 'x' > d/n.md && stat -c '%a %u %n' d d/n.md && ls -l d | tail -1 | cut -c1-10 && cat d/n.md d/n.md >/dev/null && stat -c '%a %u %n' d/n.md",
        {
          cwd: dirs.mnt,
        },
      );
      expect(r.stderr).toBe("");
      expect(r.stdout).toBe("750 4321 d\n640 4321 d/n.md\n-rw-r-----\n640 4321 d/n.md\n");
      await running.stop();
      const bad = await startMount(dirs, { args: ["-o", "attr_timeout=5"] }).then(
        (m) => m.stop().then(() => "mounted"),
        (err: Error) => err.message,
      );
      expect(bad).toMatch(/-o attr_timeout is not supported: txtfs tells the kernel/);
      expect(isMounted(dirs.mnt)).toBe(false);
    } finally {
      await removeMountDirs(dirs);
    }
  });
});

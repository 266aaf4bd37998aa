// Lookups of names a folder does not have, answered in C (native/fuse3/names.c): editors and
// shells look up every name before creating it (vim's swap file, `4913`, its backup; `echo x >
// new`), and each was a round trip into JavaScript to hear ENOENT. C keeps each listed folder's
// names as a set that only grows until the folder is listed again, so a name it answers ENOENT
// for can never be one that exists: these tests make names exist in every way there is (here, by
// the service, by renames of notes and folders, sidecars, the control directory) right after
// their absence was answered in C, and check they are found. Lookups reaching JavaScript are
// counted from the daemon's trace (--trace logs every FUSE operation that reaches it).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createFolder,
  createNote,
  flatIndex,
  fuseOpsIn,
  type MountFixture,
  mountFixture,
  noteAt,
  settleLog,
  waitFor,
} from "../helpers/mount.ts";

let m: MountFixture;

beforeAll(async () => {
  m = mountFixture();
  await m.start({ args: ["--trace"] });
}, 60_000);
afterAll(() => m?.close());

/**
 * Lookups under `prefix` of names the tree does not have that reached JavaScript since `mark` (a
 * trace length): those C could have answered.
 */
const lookupsSince = (mark: number, prefix: string) =>
  fuseOpsIn(m.current.stderr().slice(mark), "getattr", prefix, "async");

/** Bash that fails unless every one of `paths` is absent (each looked up once). */
const absent = (paths: string[]) => paths.map((p) => `! test -e ${p}`).join(" && ");

describe("lookups of names a folder does not have", () => {
  it("are answered without JavaScript once the folder's names are known", async () => {
    expect((await m.sh("mkdir -p neg/a && for i in 1 2 3; do echo n$i > neg/a/n$i.md; done")).code).toBe(0);
    await m.sync();
    await settleLog();
    const mark = m.current.stderr().length;
    const missing = Array.from({ length: 30 }, (_, i) => `neg/a/missing-${i}.md`);
    const r = await m.sh(`${absent(missing)} && test -e neg/a/n2.md && cat neg/a/n3.md`);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("n3\n");
    await settleLog();
    // The first may reach JavaScript (the folder was made here, never listed): it puts the
    // folder's names in C, which answers the other 29.
    expect(lookupsSince(mark, "/neg/a/missing-")).toBeLessThanOrEqual(1);
  });

  it("vim's edit looks up its swap file, 4913 and its backup mostly in C, and saves", async () => {
    expect((await m.sh("printf 'alpha\\n' > neg/a/v.md && ls neg/a >/dev/null")).code).toBe(0);
    await m.sync();
    await settleLog();
    const mark = m.current.stderr().length;
    const r = await m.sh(
      "cd neg/a && vim -N -es -u NONE -i NONE --cmd 'set swapfile directory=. writebackup backupcopy=auto' -c '%s/alpha/beta/' -c wq v.md </dev/null && cat v.md && ls -a",
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("beta\n.\n..\nn1.md\nn2.md\nn3.md\nv.md\n");
    await settleLog();
    // Without C: every one of .v.md.swp, .v.md.swx, 4913, v.md~ (and the name after the rename)
    // reached JavaScript. What still may: a name looked up again after it existed a moment.
    expect(lookupsSince(mark, "/neg/a/")).toBeLessThanOrEqual(3);
    await m.sync();
    expect((await noteAt(m.current.api, "neg/a/v.md")).content).toBe("beta\n");
  });
  it("`mv` of many notes into a folder looks up each new name in C, and every note is found moved", async () => {
    const n = 20;
    expect(
      (
        await m.sh(
          `mkdir -p neg/mv/from neg/mv/to neg/mv/other && for i in $(seq 1 ${n}); do echo m$i > neg/mv/from/m$i.md; done && for i in 1 2 3 4; do echo o$i > neg/mv/other/o$i.md; done`,
        )
      ).code,
    ).toBe(0);
    await m.sync();
    // Listed once its notes are on the service (their answers change the folder's attributes).
    expect((await m.sh("ls -l neg/mv/other >/dev/null")).code).toBe(0);
    await settleLog();
    const mark = m.current.stderr().length;
    // GNU mv looks up each target before its rename (libfuse 2 has no RENAME_NOREPLACE).
    const r = await m.sh("mv neg/mv/from/*.md neg/mv/to/ && ls neg/mv/from | wc -l && cat neg/mv/to/m7.md");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("0\nm7\n");
    await settleLog();
    // Each rename was reported for its own two paths; one reported for the whole tree dropped the
    // folder's names in C, and every next target's lookup reached JavaScript (19 of 20).
    expect(lookupsSince(mark, "/neg/mv/to/")).toBeLessThanOrEqual(2);
    // Nor, mostly, do the moved notes' own attributes, which the kernel asks for right after each
    // rename: put in C once the rename was answered. Put before, C dropped them again (20 of 20
    // reached JavaScript); now only when the kernel asks before the daemon's next tick.
    // The rest of the tree stays answered in C: a folder listed before the renames is listed
    // again, once the kernel's own attributes expired, without JavaScript.
    const listed = m.current.stderr().length;
    const ls = await m.sh("sleep 1.2 && ls -l neg/mv/other | wc -l");
    expect(ls.stdout).toBe("5\n"); // "total" and four notes
    await settleLog();
    const since = m.current.stderr().slice(listed);
    expect(fuseOpsIn(since, "getattr", "/neg/mv/other/") + fuseOpsIn(since, "readdir", "/neg/mv/other")).toBe(
      0,
    );
    const after = await m.sh(
      `sleep 1.2 && for i in $(seq 1 ${n}); do test -e neg/mv/to/m$i.md && ! test -e neg/mv/from/m$i.md || exit 1; done`,
    );
    expect(after.code, "every note at its new path, none at its old").toBe(0);
    await m.sync();
    const index = await flatIndex(m.current.api);
    expect(index.files.filter((f) => /^m\d+\.md$/.test(f.name)).length).toBe(n);
    expect((await noteAt(m.current.api, "neg/mv/to/m13.md")).content).toBe("m13\n");
  });
});

describe("a name C answered absent is found as soon as it exists", () => {
  it("made here: by a create, a mkdir, a rename of a note and of a folder", async () => {
    const r = await m.sh(
      [
        "mkdir -p neg/b && echo keep > neg/b/k.md && mkdir -p neg/b/sub && echo deep > neg/b/sub/d.md",
        absent(["neg/b/c.md", "neg/b/dir", "neg/b/moved.md", "neg/b/sub2", "neg/b/sub/e.md"]),
        "echo made > neg/b/c.md && mkdir neg/b/dir && mv neg/b/k.md neg/b/moved.md && mv neg/b/sub neg/b/sub2",
        // The kernel's own entries expire in a second: afterwards every lookup comes to the mount.
        "sleep 1.2",
        "cat neg/b/c.md neg/b/moved.md neg/b/sub2/d.md && test -d neg/b/dir && ! test -e neg/b/k.md && ! test -e neg/b/sub",
        // A folder made again where one was moved away: its names are its own, not the old one's.
        "mkdir neg/b/sub && ! test -e neg/b/sub/d.md && echo new > neg/b/sub/e.md && sleep 1.2 && cat neg/b/sub/e.md",
      ].join(" && "),
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("made\nkeep\ndeep\nnew\n");
  });

  it("made by the service: a note, then a folder with a note in it and a folder renamed", async () => {
    expect((await m.sh("mkdir -p neg/c/old && echo o > neg/c/old/o.md")).code).toBe(0);
    await m.sync();
    const r0 = await m.sh(absent(["neg/c/remote.md", "neg/c/rdir", "neg/c/renamed"]));
    expect(r0.code, r0.stderr).toBe(0);
    const index = await flatIndex(m.current.api);
    const neg = index.folders.find((f) => f.name === "neg" && f.parentFolderId === null)!;
    const c = index.folders.find((f) => f.name === "c" && f.parentFolderId === neg.id)!;
    const old = index.folders.find((f) => f.name === "old" && f.parentFolderId === c.id)!;
    // A note alone (no folder changes with it, which would drop every name set): found well
    // before C's 60 s backstop would have forgotten a set that missed it.
    await createNote(m.current.api, { name: "remote.md", content: "from the service\n", folderId: c.id });
    const r1 = await m.sh(`(${waitFor("test -e neg/c/remote.md", 5)}) && cat neg/c/remote.md`);
    expect(r1.code, r1.stderr).toBe(0);
    expect(r1.stdout).toBe("from the service\n");
    const rdir = await createFolder(m.current.api, "rdir", c.id);
    await createNote(m.current.api, { name: "inside.md", content: "inside\n", folderId: rdir.id });
    const renamed = await m.current.api.put(`/api/v1/folders/${old.id}`, { name: "renamed" });
    expect(renamed.status).toBe(200);
    const r = await m.sh(
      `(${waitFor("test -e neg/c/rdir/inside.md && test -e neg/c/renamed/o.md", 5)}) && cat neg/c/rdir/inside.md neg/c/renamed/o.md && ! test -e neg/c/old`,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("inside\no\n");
  });

  it("a name that is not UTF-8 is never answered in C: the file made under it stays found", async () => {
    // JavaScript reads such a name with U+FFFD for its bad bytes and lists it so: the names it puts
    // in C are not the one the program used, which C must then never answer for.
    const bad = "neg/u/$'b\\xffd.md'";
    const made = await m.sh(
      `mkdir -p neg/u && echo café > neg/u/café.md && echo bad > ${bad} && echo more >> ${bad} && echo t > neg/u/t.md && rm neg/u/t.md`,
    );
    expect(made.code, made.stderr).toBe(0);
    await m.sync();
    await settleLog();
    const mark = m.current.stderr().length;
    // t.md reaches JavaScript (C's set still has it, or was dropped by the deliveries), which puts
    // the folder's names in C; once the kernel forgot its own entries, other.md is answered in C.
    const r = await m.sh(
      `! test -e neg/u/t.md && sleep 1.2 && ! test -e neg/u/other.md && cat ${bad} neg/u/café.md`,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("bad\nmore\ncafé\n");
    await settleLog();
    expect(lookupsSince(mark, "/neg/u/other.md")).toBe(0);
  });

  it("names that resolve without being listed: sidecars and the control directory", async () => {
    expect((await m.sh("mkdir -p neg/d && echo s > neg/d/s.md && ls neg/d >/dev/null")).code).toBe(0);
    await m.sync();
    const r = await m.sh(
      [
        absent(["neg/d/other.md", "neg/d/other.md.meta.json"]),
        "test -f neg/d/s.md.meta.json && test -f neg/d/.meta.json && test -d .txtfs",
        "ls -a neg/d",
      ].join(" && "),
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(".\n..\ns.md\n"); // neither sidecar is listed
  });
});

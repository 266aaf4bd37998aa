// `.txtfs/`, the control directory, through a real mount driven by real programs (ls, cat, cp,
// ln, rm, setfattr, find, grep, du, rsync), checked through the API; request counts are read from
// the daemon's request trace (--trace logs one line per request the mount sends).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type MountFixture,
  mountFixture,
  noteAt,
  q,
  settleLog,
  updateNote,
  waitFor,
} from "../helpers/mount.ts";

let m: MountFixture;
let note: any;

beforeAll(async () => {
  m = mountFixture();
  await m.start({ args: ["--trace"] });
  const r = await m.sh("mkdir h && echo one > h/a.md && echo other > h/b.md && echo top > top.md");
  expect(r.code).toBe(0);
  note = await noteAt(m.current.api, "h/a.md");
  await updateNote(m.current.api, note.id, { content: "two\n" });
  await updateNote(m.current.api, note.id, { content: "three\n" });
}, 60_000);
afterAll(() => m?.close());

const api = () => m.current.api;
const fileNow = async (id = note.id) => (await api().get(`/api/v1/files/${id}`)).body;
const versionsNow = async (id = note.id) => (await api().get(`/api/v1/files/${id}/versions`)).body.versions;

/** Requests the mount sent to exactly this path (query excluded), from its trace. */
function requestsTo(path: string): number {
  return m.current
    .stderr()
    .split("\n")
    .filter((l) => l.includes('"msg":"request"') && l.includes(`"path":"${path}"`)).length;
}

describe("the control directory", () => {
  it("is reachable by path, holds a README, and lists its areas", async () => {
    const r = await m.sh("stat -c %F .txtfs && ls .txtfs && head -1 .txtfs/README");
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe(
      "directory\nREADME\ncomments\nlinks\nrelated\nsearch\ntags\nversions\ntxtfs control directory\n",
    );
  });

  it("is never listed: ls -a, find, grep -r, du and rsync do not enter it", async () => {
    const r = await m.sh(
      [
        "ls -a | grep -v '^\\.\\.\\?$'",
        "echo ---",
        "find . | sort",
        "echo ---",
        // README mentions "versions": grep -r finds it only if it enters .txtfs
        "grep -rl versions . || true",
        "echo ---",
        "du -a . | grep -c txtfs || true",
        "echo ---",
        `rsync -a ./ ${q(`${m.dirs.base}/copy/`)} && ls -A ${q(`${m.dirs.base}/copy`)}`,
      ].join(" && "),
    );
    expect(r.stderr).toBe("");
    const [ls, find, grep, du, rsync] = r.stdout.split("---\n");
    expect(ls).toBe("h\ntop.md\n"); // (. and .. aside)
    expect(find).toBe(".\n./h\n./h/a.md\n./h/b.md\n./top.md\n");
    expect(grep).toBe("");
    expect(du).toBe("0\n");
    expect(rsync).toBe("h\ntop.md\n");
  });

  it("refuses changes where nothing may change (and changes nothing)", async () => {
    const r = await m.sh(
      [
        "touch .txtfs/new 2>&1",
        "rm .txtfs/README 2>&1",
        "mkdir .txtfs/x 2>&1",
        "echo x > .txtfs/README 2>&1",
        "mv .txtfs/README .txtfs/R 2>&1",
        "rmdir .txtfs/versions 2>&1",
      ].join("; "),
    );
    expect(r.stdout).toMatch(/touch: .*Read-only file system/);
    expect(r.stdout).toMatch(/rm: .*README.*Read-only file system/);
    expect(r.stdout).toMatch(/mkdir: .*Read-only file system/);
    expect(r.stderr).toMatch(/README: Read-only file system/); // the shell's own redirection
    expect(r.stdout).toMatch(/mv: .*Operation not permitted/);
    expect(r.stdout).toMatch(/rmdir: .*Read-only file system/);
    const after = await m.sh("ls .txtfs");
    expect(after.stdout).toBe("README\ncomments\nlinks\nrelated\nsearch\ntags\nversions\n");
  });
});

describe(".txtfs/versions", () => {
  const dir = ".txtfs/versions/h/a.md";
  const NAME = /^\d{4} \d{4}-\d\d-\d\dT\d\d-\d\d( [^/]+)?\.md$/;

  it("mirrors the folders and lists every version of a note, newest first, in one request", async () => {
    const tree = await m.sh("ls .txtfs/versions && ls .txtfs/versions/h");
    expect(tree.stdout).toBe("h\ntop.md\na.md\nb.md\n");
    await settleLog();
    const before = requestsTo(`/api/v1/files/${note.id}/versions`);
    const r = await m.sh(`ls -l ${q(dir)} && ls -1 ${q(dir)}`);
    expect(r.stderr).toBe("");
    const names = r.stdout.split("\n").slice(-4, -1);
    expect(names).toHaveLength(3);
    for (const n of names) expect(n).toMatch(NAME);
    expect(names.map((n) => n.slice(0, 4)).sort()).toEqual(["0001", "0002", "0003"]);
    expect(r.stdout).toMatch(/^-r--r--r-- .* 6 .*0003 /m); // "three\n": read-only, its size
    await settleLog();
    expect(requestsTo(`/api/v1/files/${note.id}/versions`) - before).toBe(1);
  });

  it("cat reads a version; its body costs one request, then it is kept", async () => {
    await settleLog();
    const before = requestsTo(`/api/v1/files/${note.id}/versions/1`);
    const r = await m.sh(`cat ${q(dir)}/0001* && cat ${q(dir)}/0001* && cat ${q(dir)}/2`);
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("one\none\ntwo\n");
    await settleLog();
    expect(requestsTo(`/api/v1/files/${note.id}/versions/1`) - before).toBe(1);
  });

  it("versions are read-only; a version that does not exist is absent", async () => {
    const r = await m.sh(
      `echo x >> ${q(dir)}/0001*; rm ${q(dir)}/0001* ; cat ${q(dir)}/9 ; ls .txtfs/versions/h/nope.md`,
    );
    expect(r.stderr).toMatch(/Read-only file system/);
    expect(r.stderr).toMatch(/rm: .*Read-only file system/);
    expect(r.stderr).toMatch(/9: No such file or directory/);
    expect(r.stderr).toMatch(/nope.md.*No such file or directory/);
    expect(await versionsNow()).toHaveLength(3);
  });

  it("setfattr user.txtfs.commit labels the current version; the listing shows it at once", async () => {
    const r = await m.sh(`setfattr -n user.txtfs.commit -v 'first draft' h/a.md && ls ${q(dir)}`);
    expect(r.stderr).toBe("");
    expect(r.stdout).toMatch(/^0003 \S+ first draft\.md$/m);
    expect((await versionsNow()).find((v: any) => v.version_number === 3).label).toBe("first draft");
  });

  it("setfattr user.txtfs.restore restores a version as a new one (the service's restore, same note)", async () => {
    const r = await m.sh("setfattr -n user.txtfs.restore -v 1 h/a.md && cat h/a.md");
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("one\n");
    const now = await fileNow();
    expect(now.id).toBe(note.id);
    expect(now.content).toBe("one\n");
    const versions = await versionsNow();
    expect(versions).toHaveLength(4);
    expect(versions[0].source).toBe("restore");
    const listed = await m.sh(`ls ${q(dir)} | wc -l`);
    expect(listed.stdout.trim()).toBe("4");
  });

  it("cp of a version onto the note writes its bytes as a new version of the same note", async () => {
    const r = await m.sh(`cp ${q(dir)}/0002* h/a.md && cat h/a.md`);
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("two\n");
    const now = await fileNow();
    expect(now.id).toBe(note.id);
    expect(now.content).toBe("two\n");
    expect(await versionsNow()).toHaveLength(5);
  });

  it("a bad restore or commit fails with the errno a tool expects and changes nothing", async () => {
    const r = await m.sh(
      [
        "setfattr -n user.txtfs.restore -v 99 h/a.md",
        "setfattr -n user.txtfs.restore -v abc h/a.md",
        "setfattr -n user.txtfs.commit -v '' h/a.md",
        "setfattr -n user.txtfs.restore -v 1 h",
      ].join("; "),
    );
    expect(r.stderr).toMatch(/h\/a.md: No such file or directory/);
    expect(r.stderr.match(/Invalid argument/g)?.length).toBeGreaterThanOrEqual(1);
    expect(r.stderr).toMatch(/h: Operation not supported/);
    expect((await fileNow()).content).toBe("two\n");
    expect(await versionsNow()).toHaveLength(5);
  });

  it("a file that is not a note lists its versions too, under its own extension, and cat reads each byte-exact", async () => {
    const v1 = await m.sh(
      "mkdir pics && head -c 3000 /dev/urandom > /tmp/v1.png && cp /tmp/v1.png pics/p.png",
    );
    expect(v1.code).toBe(0);
    await m.sync();
    const v2 = await m.sh("head -c 500 /dev/urandom > /tmp/v2.png && cp /tmp/v2.png pics/p.png");
    expect(v2.code).toBe(0);
    await m.sync();
    const r = await m.sh(
      [
        "ls .txtfs/versions/pics",
        "ls -1 .txtfs/versions/pics/p.png",
        "cmp .txtfs/versions/pics/p.png/1 /tmp/v1.png && cmp .txtfs/versions/pics/p.png/2 /tmp/v2.png && echo same",
        "echo x > .txtfs/versions/pics/p.png/1",
      ].join(" && "),
    );
    const out = r.stdout.split("\n");
    expect(out[0]).toBe("p.png");
    expect(
      out
        .slice(1, 3)
        .map((n) => n.slice(0, 4))
        .sort(),
    ).toEqual(["0001", "0002"]);
    for (const n of out.slice(1, 3)) expect(n).toMatch(/^\d{4} \d{4}-\d\d-\d\dT\d\d-\d\d\.png$/);
    expect(out[3]).toBe("same");
    expect(r.stderr).toMatch(/(Read-only file system|Permission denied)/);
  });
});

describe(".txtfs/tags", () => {
  const tagsOf = async (path: string) => (await noteAt(api(), path)).tags;

  it("shows a tag set through the service within 2 s, as symlinks to its notes", async () => {
    const b = await noteAt(api(), "h/b.md");
    await updateNote(api(), b.id, { tags: ["idea"] });
    const r = await m.sh(
      `(${waitFor("[ -L .txtfs/tags/idea/b.md ]")}) && ls .txtfs/tags && readlink .txtfs/tags/idea/b.md && cat .txtfs/tags/idea/b.md`,
    );
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("idea\n../../../h/b.md\nother\n");
  });

  it("ln -s tags a note (relative or absolute target), rm untags it", async () => {
    let r = await m.sh(
      'ln -s ../../../top.md .txtfs/tags/idea/ && ln -s "$PWD/h/a.md" .txtfs/tags/idea/ && ls .txtfs/tags/idea',
    );
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("a.md\nb.md\ntop.md\n");
    expect(await tagsOf("top.md")).toEqual(["idea"]);
    expect(await tagsOf("h/a.md")).toEqual(["idea"]);
    r = await m.sh("rm .txtfs/tags/idea/top.md && ls .txtfs/tags/idea");
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("a.md\nb.md\n");
    expect(await tagsOf("top.md")).toEqual([]);
    expect((await fileNow()).content).toBe("two\n"); // tags only: the text is untouched
  });

  it("mkdir makes an empty tag folder; rmdir removes it; a bad tag or target fails and changes nothing", async () => {
    let r = await m.sh(
      "mkdir .txtfs/tags/later && ls .txtfs/tags && ls -A .txtfs/tags/later && rmdir .txtfs/tags/later && ls .txtfs/tags",
    );
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("idea\nlater\nidea\n");
    r = await m.sh(
      "mkdir .txtfs/tags/a,b; mkdir .txtfs/tags/idea; ln -s ../../../nope.md .txtfs/tags/idea/; ln -s ../../../h .txtfs/tags/idea/; ln -s ../../../top.md .txtfs/tags/idea/other.md; rmdir .txtfs/tags/idea",
    );
    expect(r.stderr).toMatch(/a,b.*Invalid argument/);
    expect(r.stderr).toMatch(/idea.*File exists/);
    expect(r.stderr).toMatch(/nope.md.*No such file or directory/);
    expect(r.stderr).toMatch(/'.txtfs\/tags\/idea\/h'.*Invalid argument/);
    expect(r.stderr).toMatch(/'.txtfs\/tags\/idea\/other.md'.*Invalid argument/); // not the note's name
    expect(r.stderr).toMatch(/rmdir: .*Directory not empty/);
    expect(await tagsOf("h/a.md")).toEqual(["idea"]);
    expect(await tagsOf("h/b.md")).toEqual(["idea"]);
    expect(await tagsOf("top.md")).toEqual([]);
    expect((await m.sh("ls .txtfs/tags")).stdout).toBe("idea\n");
  });
});

describe(".txtfs/related", () => {
  const dir = ".txtfs/related/h/a.md";
  const connections = async () => (await api().get(`/api/v1/files/${note.id}/connections`)).body.connections;

  it("ln -s connects two notes (with the folder's user.txtfs.reason); the link shows ranked", async () => {
    const top = await noteAt(api(), "top.md");
    const r = await m.sh(
      `setfattr -n user.txtfs.reason -v 'see also' ${dir} && ln -s ../../../../top.md ${dir}/ && ls ${dir}`,
    );
    expect(r.stderr).toBe("");
    const names = r.stdout.trim().split("\n");
    expect(names).toContain("01 top.md"); // explicit first
    const explicit = (await connections()).find((c: any) => c.file.id === top.id);
    expect(explicit.reasons).toContainEqual(
      expect.objectContaining({ type: "explicit", reason: "see also" }),
    );
    const link = await m.sh(`readlink ${q(`${dir}/01 top.md`)} && cat ${q(`${dir}/01 top.md`)}`);
    expect(link.stdout).toBe("../../../../top.md\ntop\n");
  });

  it("ls -l of a note's related notes costs one request", async () => {
    await new Promise((r) => setTimeout(r, 1000)); // what the last test listed is no longer kept
    await settleLog();
    const before = requestsTo(`/api/v1/files/${note.id}/connections`);
    const r = await m.sh(`ls -l ${dir} | grep -c -- '->'`);
    expect(r.stdout).toBe("2\n"); // top.md (explicit) and b.md (same folder)
    await settleLog();
    expect(requestsTo(`/api/v1/files/${note.id}/connections`) - before).toBe(1);
  });

  it("user.txtfs.reasons tells why each is related", async () => {
    const r = await m.sh(`getfattr --only-values -n user.txtfs.reasons ${dir}`);
    expect(r.stderr).toBe("");
    const reasons = JSON.parse(r.stdout);
    expect(reasons["01 top.md"]).toContainEqual(
      expect.objectContaining({ type: "explicit", reason: "see also" }),
    );
    const inferred = Object.entries(reasons).find(([name]) => name.endsWith(" b.md"));
    expect(inferred?.[1]).toContainEqual(expect.objectContaining({ type: "same_folder" }));
  });

  it("rm disconnects an explicit connection; an inferred one cannot be removed (EPERM)", async () => {
    const listing = (await m.sh(`ls ${dir}`)).stdout.trim().split("\n");
    const b = listing.find((n) => n.endsWith(" b.md"))!;
    let r = await m.sh(`rm ${q(`${dir}/${b}`)}`);
    expect(r.stderr).toMatch(/Operation not permitted/);
    r = await m.sh(`rm ${q(`${dir}/01 top.md`)} && ls ${dir}`);
    expect(r.stderr).toBe("");
    expect(r.stdout).not.toMatch(/top\.md/);
    expect((await connections()).some((c: any) => c.reasons.some((x: any) => x.type === "explicit"))).toBe(
      false,
    );
  });
});

describe(".txtfs/search", () => {
  it("ls .txtfs/search/QUERY/ lists ranked links to the matching notes, in one request", async () => {
    await settleLog();
    const before = requestsTo("/api/v1/search");
    const r = await m.sh(
      "ls -l .txtfs/search/oth/ | tail -n +2 | sed 's/.* 01 /01 /' && cat '.txtfs/search/oth/01 b.md'",
    );
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("01 b.md -> ../../../h/b.md\nother\n");
    await settleLog();
    expect(requestsTo("/api/v1/search") - before).toBe(1);
  });

  it("a query of several words needs them all; a query with no word is absent", async () => {
    const b = await noteAt(api(), "h/b.md");
    await updateNote(api(), b.id, { content: "other words here\n" });
    const r = await m.sh(
      `(${waitFor("[ -n \"$(ls '.txtfs/search/words other')\" ]")}) && ls '.txtfs/search/words other' && ls '.txtfs/search/words nothing' && ls '.txtfs/search/!!'`,
    );
    expect(r.stdout).toBe("01 b.md\n");
    expect(r.stderr).toMatch(/'.txtfs\/search\/!!'.*No such file or directory/);
  });
});

describe(".txtfs/comments", () => {
  const file = ".txtfs/comments/h/b.md";
  const commentsNow = async () => {
    const b = await noteAt(api(), "h/b.md");
    return (await api().get(`/api/v1/files/${b.id}/comments`)).body.comments;
  };

  it("renders the note's comments and pending suggestions as Markdown", async () => {
    const r = await m.sh(`ls .txtfs/comments/h && cat ${file}`);
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe(
      "a.md\nb.md\n# Comments on h/b.md\n\nNo comments.\n\n# Pending suggestions\n\nNone.\n",
    );
  });

  it("appending '> quote' then a comment adds a comment anchored at the quote", async () => {
    const r = await m.sh(`printf '> words\\nWhich words?\\n' >> ${file} && cat ${file}`);
    expect(r.stderr).toBe("");
    expect(r.stdout).toMatch(/^## .*, \d{4}-\d\d-\d\d \d\d:\d\d UTC\n\n> words\n\nWhich words\?\n/m);
    const comments = await commentsNow();
    expect(comments).toHaveLength(1);
    expect(comments[0]).toMatchObject({
      body: "Which words?",
      selected_text: "words",
      selection_start: 6,
      selection_end: 11,
    });
  });

  it("anything else is refused with EINVAL and adds nothing", async () => {
    const r = await m.sh(
      [
        `echo 'no quote' >> ${file}`,
        `printf '> not in the note\\nx\\n' >> ${file}`,
        `echo 'rewrite' > ${file}`,
        // A quote with no comment after it is refused when the file is closed (shells ignore
        // close errors; python reports them).
        `python3 -c "import os; fd = os.open('${file}', os.O_WRONLY | os.O_APPEND); os.write(fd, b'> words\\n'); print('written'); os.close(fd)"`,
      ].join("; "),
    );
    expect(r.stderr.match(/Invalid argument/g)?.length).toBe(4);
    expect(r.stdout).toBe("written\n"); // the write was taken; its close failed
    expect(r.stderr).toMatch(/OSError: \[Errno 22\] Invalid argument/);
    expect(await commentsNow()).toHaveLength(1);
  });

  it("a comment or suggestion made through the service shows within 2 s", async () => {
    const b = await noteAt(api(), "h/b.md");
    await api().post(`/api/v1/files/${b.id}/suggestions`, {
      selection_start: 0,
      selection_end: 5,
      suggested_text: "another",
    });
    const r = await m.sh(`(${waitFor(`grep -q another ${file}`)}) && sed -n '/# Pending/,$p' ${file}`);
    expect(r.stdout).toMatch(/# Pending suggestions\n\n## .*\n\n> other\n\nReplace with:\n\n> another\n$/);
  });
});

describe("following the service", () => {
  it("a new version, connection or tag made elsewhere shows within 2 s (an absent path is not remembered)", async () => {
    const dir = ".txtfs/versions/h/a.md";
    const count = Number((await m.sh(`ls ${q(dir)} | wc -l`)).stdout.trim());
    let r = await m.sh("ls .txtfs/tags/fresh; ls .txtfs/related/top.md");
    expect(r.stderr).toMatch(/fresh.*No such file or directory/);
    expect(r.stdout).not.toMatch(/b\.md/);
    const top = await noteAt(api(), "top.md");
    const b = await noteAt(api(), "h/b.md");
    await updateNote(api(), note.id, { content: "from elsewhere\n" });
    await api().post(`/api/v1/files/${top.id}/connections`, { targetFileId: b.id, reason: "elsewhere" });
    await updateNote(api(), top.id, { tags: ["fresh"] });
    const started = Date.now();
    r = await m.sh(
      [
        `(${waitFor(`[ "$(ls ${q(dir)} | wc -l)" = ${count + 1} ]`)})`,
        `(${waitFor("ls .txtfs/related/top.md | grep -q ' b.md$'")})`,
        `(${waitFor("[ -L .txtfs/tags/fresh/top.md ]")})`,
        `cat ${q(dir)}/$(ls ${q(dir)} | tail -1 | cut -c1-4)`,
      ].join(" && "),
    );
    expect(r.stdout).toBe("from elsewhere\n");
    expect(Date.now() - started).toBeLessThan(4000); // three waits of at most 2 s, in sequence
  });
});

describe("the mount's whole tree, removed", () => {
  it("rm -rf of everything in the mount leaves .txtfs alone; --show-control-dir lists it", async () => {
    let r = await m.sh("rm -rf ./* ./.[!.]* && ls -A && cat .txtfs/README | head -1 && ls .txtfs/versions");
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("txtfs control directory\n");
    expect((await api().get("/api/me/files")).body.files).toHaveLength(0);
    await m.remount({ args: ["--show-control-dir"] });
    r = await m.sh("ls -A && ls .txtfs | head -1");
    expect(r.stdout).toBe(".txtfs\nREADME\n");
  }, 30_000);
});

// `.txtfs/`, the control directory, through a real mount driven by real programs (ls, cat, cp,
// ln, rm, setfattr, find, grep, du, rsync), checked through the API; request counts are read from
// the daemon's request trace (--trace logs one line per request the mount sends).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type MountFixture, mountFixture, noteAt, q, updateNote } from "../helpers/mount.ts";

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

/** Waits until the daemon's trace has caught up (its log is written asynchronously). */
const settleLog = () => new Promise((r) => setTimeout(r, 300));

describe("the control directory", () => {
  it("is reachable by path, holds a README, and lists its areas", async () => {
    const r = await m.sh("stat -c %F .txtfs && ls .txtfs && head -1 .txtfs/README");
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe(
      "directory\nREADME\ncomments\nrelated\nsearch\ntags\nversions\ntxtfs control directory\n",
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
    expect(after.stdout).toBe("README\ncomments\nrelated\nsearch\ntags\nversions\n");
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
});

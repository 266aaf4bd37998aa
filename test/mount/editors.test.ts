// Editors and temp-file savers through a real mount: each save must update the existing note in place
// (same id, tags and context) and leave no temp file behind; non-note files stay local-only.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createFolder,
  createNote,
  flatIndex,
  type MountFixture,
  mountFixture,
  noteAt,
  q,
  waitFor,
} from "../helpers/mount.ts";

let m: MountFixture;
let folderId: string;

beforeAll(async () => {
  m = mountFixture();
  await m.start();
  folderId = (await createFolder(m.current.api, "ed")).id;
  expect((await m.sh(waitFor("[ -d ed ]"))).code).toBe(0);
});
afterAll(() => m?.close());

const api = () => m.current.api;
const BODY = "apple one\napple two\nkeep this line\n";
const SAVED = "banana one\napple two\nkeep this line\n";

/** A note made through the API with tags and context, visible in the mount. */
async function prepare(name: string): Promise<any> {
  const note = await createNote(api(), {
    name,
    content: BODY,
    folderId,
    tags: ["alpha", "beta"],
    context: `context of ${name}`,
  });
  const r = await m.sh(waitFor(`[ -e ed/${name} ]`));
  expect(r.code).toBe(0);
  return note;
}

/** The note kept its identity and metadata, got the new content, and nothing else was left behind. */
async function expectSavedInPlace(note: any, content = SAVED) {
  const now = await noteAt(api(), `ed/${note.name}`);
  expect(now).toMatchObject({
    id: note.id,
    name: note.name,
    tags: ["alpha", "beta"],
    context: `context of ${note.name}`,
    content,
  });
  expect((await api().get(`/api/v1/files/${note.id}`)).body.content).toBe(content);
  const index = await flatIndex(api());
  const stem = note.name.replace(/\.md$/, "");
  const remote = index.files
    .filter((f) => f.folderId === folderId && f.name.includes(stem))
    .map((f) => f.name);
  expect(remote).toEqual([note.name]);
  const ls = await m.sh(`ls -A ed | grep -F ${JSON.stringify(stem)}`);
  expect(ls.stdout.trim().split("\n")).toEqual([note.name]);
  expect((await m.sh(`cat ed/${note.name}`)).stdout).toBe(content);
}

describe("editors save in place", () => {
  it("sed -i", async () => {
    const note = await prepare("sed.md");
    const r = await m.sh("sed -i 's/apple one/banana one/' ed/sed.md");
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    await expectSavedInPlace(note);
  });

  it("vim -es (defaults)", async () => {
    const note = await prepare("vim.md");
    const r = await m.sh("vim -es -c '%s/apple one/banana one/' -c wq ed/vim.md");
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    await expectSavedInPlace(note);
  });

  it("vim -N -u NONE with a swap file and a kept backup copy (backupcopy=auto)", async () => {
    const note = await prepare("vimswap.md");
    const r = await m.sh(
      "vim -N -es -u NONE -i NONE --cmd 'set swapfile directory=. backup writebackup backupcopy=auto backupdir=. backupskip=' -c '%s/apple one/banana one/' -c wq ed/vimswap.md; echo rc=$?; ls -A ed",
    );
    expect(r.stderr).toBe("");
    expect(r.stdout).toMatch(/^rc=0$/m);
    // 'backup' keeps vimswap.md~ (a local-only file holding the old body)
    expect(r.stdout.split("\n")).toContain("vimswap.md~");
    expect((await m.sh("cat ed/vimswap.md~")).stdout).toBe(BODY);
    expect((await m.sh("rm ed/vimswap.md~")).code).toBe(0);
    await expectSavedInPlace(note);
  });

  it("vim with backupcopy=no (rename the note away, write a new one)", async () => {
    const note = await prepare("vimno.md");
    const r = await m.sh(
      "vim -N -es -u NONE -i NONE --cmd 'set swapfile directory=. nobackup writebackup backupcopy=no backupskip=' -c '%s/apple one/banana one/' -c wq ed/vimno.md",
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    await expectSavedInPlace(note);
  });

  it("vim with backupcopy=no and 'backup' (the renamed-away note~ stays as a local file)", async () => {
    const note = await prepare("vimnob.md");
    const r = await m.sh(
      "vim -N -es -u NONE -i NONE --cmd 'set swapfile directory=. backup backupcopy=no backupdir=. backupskip=' -c '%s/apple one/banana one/' -c wq ed/vimnob.md; echo rc=$?; cat ed/vimnob.md~",
    );
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe(`rc=0\n${BODY}`);
    expect((await m.sh("rm ed/vimnob.md~")).code).toBe(0);
    await expectSavedInPlace(note);
  });

  it("python: write a temp file, fsync, os.replace over the note", async () => {
    const note = await prepare("py.md");
    const script = [
      "import os, tempfile",
      "fd, tmp = tempfile.mkstemp(dir='ed', prefix='.py.md.', suffix='.tmp')",
      `os.write(fd, ${JSON.stringify(SAVED)}.encode())`,
      "os.fsync(fd)",
      "os.close(fd)",
      "os.replace(tmp, 'ed/py.md')",
    ].join("\n");
    const r = await m.sh(`python3 -c ${q(script)}`);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    await expectSavedInPlace(note);
  });

  it("rsync of a local file over a note (temp file + rename)", async () => {
    const note = await prepare("rsync.md");
    const local = join(m.dirs.base, "rsync.md");
    writeFileSync(local, SAVED);
    const r = await m.sh(`rsync '${local}' ed/rsync.md`);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    await expectSavedInPlace(note);
  });
});

describe("local-only files", () => {
  it("non-note files are visible, never uploaded, and survive a remount with the same cache dir", async () => {
    const r = await m.sh(
      "printf 'backup body\\n' > ed/notes.bak && printf 'swap\\n' > ed/x.swp && ls -A ed && cat ed/notes.bak ed/x.swp && stat -c %s ed/notes.bak",
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const lines = r.stdout.split("\n");
    expect(lines).toEqual(expect.arrayContaining(["notes.bak", "x.swp"]));
    expect(lines.slice(-4)).toEqual(["backup body", "swap", "12", ""]);
    const names = (await flatIndex(api())).files.map((f) => f.name);
    expect(names).not.toContain("notes.bak");
    expect(names).not.toContain("x.swp");

    await m.remount();
    const again = await m.sh("ls -A ed; cat ed/notes.bak ed/x.swp; stat -c %s ed/notes.bak");
    expect(again.stderr).toBe("");
    expect(again.stdout.split("\n")).toEqual(expect.arrayContaining(["notes.bak", "x.swp"]));
    expect(again.stdout.split("\n").slice(-4)).toEqual(["backup body", "swap", "12", ""]);
    const after = (await flatIndex(api())).files.map((f) => f.name);
    expect(after).not.toContain("notes.bak");
    expect(after).not.toContain("x.swp");
  });

  it(">> appends to a local-only file", async () => {
    const r = await m.sh("printf 'first\\n' > ed/app.log && echo second >> ed/app.log && cat ed/app.log");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("first\nsecond\n");
    expect((await m.sh("stat -c %s ed/app.log")).stdout).toBe("13\n");
  });

  it("renaming a local-only file to a .md name uploads it", async () => {
    const r = await m.sh("mv ed/notes.bak ed/from-bak.md && ls -A ed");
    expect(r.code).toBe(0);
    expect(r.stdout.split("\n")).not.toContain("notes.bak");
    expect(r.stdout.split("\n")).toContain("from-bak.md");
    const note = await noteAt(api(), "ed/from-bak.md");
    expect([note.content, note.type, note.folderId]).toEqual(["backup body\n", "md", folderId]);
    expect((await m.sh("cat ed/from-bak.md")).stdout).toBe("backup body\n");
    // and a local-only file removed is gone for good
    expect((await m.sh("rm ed/x.swp && ls -A ed")).stdout.split("\n")).not.toContain("x.swp");
  });
});

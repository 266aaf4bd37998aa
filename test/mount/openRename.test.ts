// A note written through a descriptor and then renamed to a name that is not a note's (or removed)
// while still open: the descriptor follows the file (POSIX), so the file under its new name holds
// exactly the bytes written through it, and reads through the descriptor return them. The service
// is left as a rename of a closed note to such a name leaves it (docs/mount.md: the note stays
// bound to the renamed file; nothing written under the new name goes up).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  contentAt,
  createNote,
  findByPath,
  type MountFixture,
  mountFixture,
  sh,
  waitFor,
} from "../helpers/mount.ts";

let m: MountFixture;

beforeAll(async () => {
  m = mountFixture();
  await m.start();
});
afterAll(async () => {
  await m?.close();
});

const api = () => m.current.api;
const run = (script: string) => sh(script, { cwd: m.dirs.mnt });
/** A python script run in the mount: prints what it reads. */
const py = (code: string) => run(`python3 -c '${code}'`);
let n = 0;
async function folder(): Promise<string> {
  const name = `o${++n}`;
  expect((await m.sh(`mkdir ${name}`)).code).toBe(0);
  return name;
}

describe("a note renamed or removed while a writer has it open", () => {
  it("renamed to a non-note name: the new name holds what was written through the descriptor", async () => {
    const d = await folder();
    const dir = await findByPath(api(), d);
    await createNote(api(), { name: "g.md", content: "old bytes\n", folderId: dir.id });
    // The mount sees the note (the change feed), then a writer opens it, writes, and renames it away.
    expect((await run(`(${waitFor(`[ -e ${d}/g.md ]`, 5)}) && cat ${d}/g.md`)).stdout).toBe("old bytes\n");
    const r = await py(
      [
        "import os",
        `fd = os.open("${d}/g.md", os.O_RDWR)`,
        'os.write(fd, b"new bytes!\\n")',
        `os.rename("${d}/g.md", "${d}/g.bak")`,
        'print(os.pread(fd, 100, 0).decode(), end="")',
        'os.write(fd, b"more\\n")',
        "os.close(fd)",
      ].join("\n"),
    );
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("new bytes!\n");
    expect((await run(`cat ${d}/g.bak; ls ${d}`)).stdout).toBe("new bytes!\nmore\ng.bak\n");
    await m.sync();
    // As `mv g.md g.bak` of a closed note: the note stays on the service as it was, bound to g.bak.
    expect(await contentAt(api(), `${d}/g.md`)).toBe("old bytes\n");
    expect(await findByPath(api(), `${d}/g.bak`)).toBeUndefined();
    // Renamed back, it goes up as the note with what was written.
    expect((await m.sh(`mv ${d}/g.bak ${d}/g.md`)).code).toBe(0);
    expect(await contentAt(api(), `${d}/g.md`)).toBe("new bytes!\nmore\n");
  });

  it("a note made by the open and never saved: renamed away, it is a local file with its bytes", async () => {
    const d = await folder();
    const r = await py(
      [
        "import os",
        `fd = os.open("${d}/h.md", os.O_RDWR | os.O_CREAT, 0o644)`,
        'os.write(fd, b"fresh\\n")',
        `os.rename("${d}/h.md", "${d}/h.bak")`,
        'print(os.pread(fd, 100, 0).decode(), end="")',
        "os.close(fd)",
      ].join("\n"),
    );
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("fresh\n");
    expect((await run(`cat ${d}/h.bak; ls ${d}`)).stdout).toBe("fresh\nh.bak\n");
    await m.sync();
    expect(await findByPath(api(), `${d}/h.md`)).toBeUndefined();
    expect(await findByPath(api(), `${d}/h.bak`)).toBeUndefined();
  });

  it("renamed onto an existing local file: the rename succeeds and replaces it", async () => {
    const d = await folder();
    expect((await run(`echo stale > ${d}/k.bak`)).code).toBe(0);
    const r = await py(
      [
        "import os",
        `fd = os.open("${d}/k.md", os.O_RDWR | os.O_CREAT, 0o644)`,
        'os.write(fd, b"written\\n")',
        `os.rename("${d}/k.md", "${d}/k.bak")`,
        'print(os.pread(fd, 100, 0).decode(), end="")',
        "os.close(fd)",
      ].join("\n"),
    );
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("written\n");
    expect((await run(`cat ${d}/k.bak; ls ${d}`)).stdout).toBe("written\nk.bak\n");
    await m.sync();
    expect(await findByPath(api(), `${d}/k.md`)).toBeUndefined();
  });

  it("a note not delivered yet, renamed while open onto an existing local file", async () => {
    const d = await folder();
    // Its create still waits in the journal when the rename comes (the same shell, no pause).
    const r = await run(
      `echo stale > ${d}/j.bak && printf first > ${d}/j.md && python3 -c '${[
        "import os",
        `fd = os.open("${d}/j.md", os.O_RDWR)`,
        'os.write(fd, b"second")',
        `os.rename("${d}/j.md", "${d}/j.bak")`,
        'print(os.pread(fd, 100, 0).decode(), end="")',
        "os.close(fd)",
      ].join("\n")}'`,
    );
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("second");
    expect((await run(`cat ${d}/j.bak; echo; ls ${d}`)).stdout).toBe("second\nj.bak\n");
    await m.sync();
    // The note it was stays on the service as last saved, bound to j.bak (as after `mv j.md j.bak`).
    expect(await contentAt(api(), `${d}/j.md`)).toBe("first");
    expect(await findByPath(api(), `${d}/j.bak`)).toBeUndefined();
  });

  it("a local file renamed to a note name while open: the note holds what was written through it", async () => {
    const d = await folder();
    const r = await py(
      [
        "import os",
        `fd = os.open("${d}/w.tmp", os.O_RDWR | os.O_CREAT, 0o644)`,
        'os.write(fd, b"one\\n")',
        `os.rename("${d}/w.tmp", "${d}/w.md")`,
        'os.write(fd, b"two\\n")',
        'print(os.pread(fd, 100, 0).decode(), end="")',
        "os.close(fd)",
      ].join("\n"),
    );
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("one\ntwo\n");
    expect((await run(`cat ${d}/w.md; ls ${d}`)).stdout).toBe("one\ntwo\nw.md\n");
    await m.sync();
    expect(await contentAt(api(), `${d}/w.md`)).toBe("one\ntwo\n");
  });

  it("an existing note removed while open (unlink/14.t 6's order): the descriptor reads what it wrote", async () => {
    const d = await folder();
    expect((await run(`: > ${d}/v.md`)).code).toBe(0);
    const r = await py(
      [
        "import os",
        `fd = os.open("${d}/v.md", os.O_RDWR)`,
        'os.write(fd, b"Hello,_World!")',
        `os.unlink("${d}/v.md")`,
        'print(os.pread(fd, 13, 0).decode(), end="")',
        "os.close(fd)",
      ].join("\n"),
    );
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("Hello,_World!");
    await m.sync();
    expect((await run(`ls -A ${d}`)).stdout).toBe("");
    expect(await findByPath(api(), `${d}/v.md`)).toBeUndefined();
  });

  it("removed while open (pjdfstest unlink/14.t 6): reads through the descriptor return what it wrote", async () => {
    const d = await folder();
    const r = await py(
      [
        "import os",
        `fd = os.open("${d}/u.md", os.O_RDWR | os.O_CREAT, 0o644)`,
        'os.write(fd, b"kept\\n")',
        `os.unlink("${d}/u.md")`,
        'print(os.pread(fd, 100, 0).decode(), end="")',
        "os.close(fd)",
      ].join("\n"),
    );
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("kept\n");
    await m.sync();
    expect((await run(`ls -A ${d}`)).stdout).toBe("");
    expect(await findByPath(api(), `${d}/u.md`)).toBeUndefined();
  });
});

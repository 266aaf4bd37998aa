// One small test per user-visible bug of issue 13 ("What a user sees today", items 1-17), written
// from the expected behaviour. Every action on the mount runs in a child process; results are
// checked in the mount (another child) and on the service through the API. Item 2 is the
// model-based test (model.test.ts), item 17 the fsx exerciser (fsx.test.ts), which on the current
// code fails on arbitrary bytes (item 3) but not on text notes, so item 17 has no test here.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PY_REPLACE, PYTHON } from "../helpers/model/ops.ts";
import {
  attachmentAt,
  contentAt,
  createNote,
  findByPath,
  flatIndex,
  type MountFixture,
  mountFixture,
  noteAt,
  q,
  sh,
  updateNote,
  waitFor,
} from "../helpers/mount.ts";

let m: MountFixture;
const local = mkdtempSync("/var/tmp/txtfs-regress-");

beforeAll(async () => {
  m = mountFixture();
  await m.start();
});
afterAll(async () => {
  await m?.close();
  rmSync(local, { recursive: true, force: true });
});

const api = () => m.current.api;
/** Runs a script in the mount without waiting for delivery (the timing the user has). */
const run = (script: string, timeoutMs?: number) => sh(script, { cwd: m.dirs.mnt, timeoutMs });
/** A folder of its own for each test. */
let n = 0;
async function folder(): Promise<string> {
  const name = `t${++n}`;
  expect((await m.sh(`mkdir ${name}`)).code).toBe(0);
  return name;
}
/** Resolves once the child printed "open" (or ended: the assertions then show its output). */
function untilOpen(child: ChildProcess, out: () => string): Promise<void> {
  return new Promise<void>((resolve) => {
    const tick = setInterval(() => {
      if (out().includes("open") || child.exitCode !== null) {
        clearInterval(tick);
        resolve();
      }
    }, 20);
  });
}
/** The contents of the conflict copies in folder `d` on the service. */
async function conflictCopies(d: string): Promise<string[]> {
  const dir = await findByPath(api(), d);
  const copies = (await flatIndex(api())).files.filter(
    (f) => f.folderId === dir.id && f.name.includes("conflict"),
  );
  return Promise.all(copies.map(async (c) => (await api().get(`/api/v1/files/${c.id}`)).body.content));
}
const idOf = async (path: string) => (await run(`getfattr --only-values -n user.txtfs.id '${path}'`)).stdout;

describe("issue 13: what a user sees today", () => {
  it("1. a vim save right after creating a note is never lost (10 fresh notes)", async () => {
    const d = await folder();
    // vim's stderr goes to a file: with a readable stderr a hidden prompt can make vim wait (below).
    const r = await run(
      `cd ${d}; for i in $(seq 1 10); do printf 'banana\\ncat\\n' > v$i.md && vim -es -c '%s/a/b/g' -c wq v$i.md </dev/null 2>>${local}/vim1.err || echo "vim $i failed"; done; ` +
        "for i in $(seq 1 10); do printf '%s:' $i; tr '\\n' ' ' < v$i.md; echo; done",
    );
    const want = Array.from({ length: 10 }, (_, i) => `${i + 1}:bbnbnb cbt \n`).join("");
    expect(r.stdout).toBe(want);
    await m.sync();
    for (let i = 1; i <= 10; i++)
      expect((await noteAt(api(), `${d}/v${i}.md`)).content).toBe("bbnbnb\ncbt\n");
  });

  it("1. vim -es on fresh notes never stops to wait for an answer (stderr readable, as under a terminal)", async () => {
    const d = await folder();
    // Started with a socket as stderr (node's stdio), vim -es on a note just created sometimes reads
    // an answer from it (a hidden question: the file changed under it?) and hangs.
    const r = await run(
      `cd ${d}; for i in $(seq 1 10); do printf 'banana\\ncat\\n' > w$i.md && vim -es -c '%s/a/b/g' -c wq w$i.md </dev/null; done; echo done`,
      20_000,
    );
    expect(r.stdout).toBe("done\n");
  });

  it("1. a vim save right after an append to a note on the service is never lost (10 notes)", async () => {
    const d = await folder();
    expect((await m.sh(`cd ${d}; for i in $(seq 1 10); do echo pear > p$i.md; done`)).code).toBe(0);
    const r = await run(
      `cd ${d}; for i in $(seq 1 10); do echo apple >> p$i.md; vim -es -c '%s/a/b/g' -c wq p$i.md </dev/null; done; ` +
        "cat p*.md | sort | uniq -c | sed 's/^ *//'",
    );
    expect(r.stdout).toBe("10 bpple\n10 pebr\n");
    await m.sync();
    for (let i = 1; i <= 10; i++)
      expect((await noteAt(api(), `${d}/p${i}.md`)).content).toBe("pebr\nbpple\n");
  });

  it("3. bytes that are not UTF-8 are never altered: the file stays exact, here and as an attachment on the service, also after a remount", async () => {
    const d = await folder();
    const r = await run(`printf '\\xff\\xfe binary' > ${d}/b.md && od -An -tx1 ${d}/b.md`);
    expect(r.stdout.trim()).toBe("ff fe 20 62 69 6e 61 72 79");
    await m.sync();
    expect((await run(`wc -c < ${d}/b.md; od -An -tx1 ${d}/b.md`)).stdout).toBe(
      "9\n ff fe 20 62 69 6e 61 72 79\n",
    );
    expect(await findByPath(api(), `${d}/b.md`), "uploaded as altered text").toBeUndefined();
    expect((await attachmentAt(m.current, `${d}/b.md`))?.toString("hex")).toBe("fffe2062696e617279");
    await m.remount();
    expect((await run(`od -An -tx1 ${d}/b.md`)).stdout.trim()).toBe("ff fe 20 62 69 6e 61 72 79");
  });

  it("4. a note just written lists its attributes and takes tags at once", async () => {
    const d = await folder();
    const r = await run(
      `echo new > ${d}/n.md && getfattr -d -m - ${d}/n.md | grep -c '^user.txtfs.id=' && ` +
        `setfattr -n user.txtfs.tags -v now,here ${d}/n.md && getfattr --only-values -n user.txtfs.tags ${d}/n.md`,
    );
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("1\nnow,here");
    await m.sync();
    expect((await noteAt(api(), `${d}/n.md`)).tags).toEqual(["now", "here"]);
  });

  it("5. git checkout -- a.md keeps the note's id, tags and history", async () => {
    const d = await folder();
    const git = "git -c user.email=t@example.com -c user.name=t";
    expect(
      (await m.sh(`cd ${d} && echo v1 > a.md && git init -q && ${git} add a.md && ${git} commit -qm one`))
        .code,
    ).toBe(0);
    expect((await m.sh(`setfattr -n user.txtfs.tags -v kept ${d}/a.md`)).code).toBe(0);
    const before = await noteAt(api(), `${d}/a.md`);
    const r = await m.sh(`cd ${d} && echo v2 > a.md && ${git} checkout -- a.md && cat a.md`);
    expect(r.stdout).toBe("v1\n");
    const after = await noteAt(api(), `${d}/a.md`);
    expect(after).toMatchObject({ id: before.id, tags: ["kept"], content: "v1\n" });
    expect((await api().get(`/api/v1/files/${before.id}`)).status).toBe(200);
  });

  it("6. sed -i on a note another process holds open keeps its id and tags", async () => {
    const d = await folder();
    expect((await m.sh(`echo v1 > ${d}/c.md && setfattr -n user.txtfs.tags -v held ${d}/c.md`)).code).toBe(0);
    const before = await noteAt(api(), `${d}/c.md`);
    const r = await m.sh(`cd ${d} && exec 3<c.md && sed -i 's/v1/v2/' c.md; rc=$?; exec 3<&-; exit $rc`);
    expect(r.code).toBe(0);
    expect(await idOf(`${d}/c.md`)).toBe(before.id);
    expect(await noteAt(api(), `${d}/c.md`)).toMatchObject({
      id: before.id,
      tags: ["held"],
      content: "v2\n",
    });
  });

  it("6. perl -pi -e keeps the note's id and tags", async () => {
    const d = await folder();
    expect((await m.sh(`echo v1 > ${d}/p.md && setfattr -n user.txtfs.tags -v perl ${d}/p.md`)).code).toBe(0);
    const before = await noteAt(api(), `${d}/p.md`);
    expect((await m.sh(`perl -pi -e 's/v1/v2/' ${d}/p.md`)).code).toBe(0);
    expect(await noteAt(api(), `${d}/p.md`)).toMatchObject({
      id: before.id,
      tags: ["perl"],
      content: "v2\n",
    });
  });

  it("7. sed -i.bak leaves one note with the edit on the service (and the backup local)", async () => {
    const d = await folder();
    expect((await m.sh(`echo apple > ${d}/b.md`)).code).toBe(0);
    const before = await noteAt(api(), `${d}/b.md`);
    expect((await m.sh(`sed -i.bak 's/apple/pear/' ${d}/b.md`)).code).toBe(0);
    const index = await flatIndex(api());
    const dir = await findByPath(api(), d);
    const names = index.files.filter((f) => f.folderId === dir.id).map((f) => f.name);
    expect(names).toEqual(["b.md"]);
    expect(await noteAt(api(), `${d}/b.md`)).toMatchObject({ id: before.id, content: "pear\n" });
    await m.remount();
    expect((await run(`cat ${d}/b.md ${d}/b.md.bak; ls ${d}`)).stdout).toBe("pear\napple\nb.md\nb.md.bak\n");
  });

  it("8. names over 255 bytes are refused at once with ENAMETOOLONG", async () => {
    const d = await folder();
    const long = `${"x".repeat(300)}.md`;
    const r = await run(
      `cd ${d}; echo a > ok.md; (echo x > ${long}) 2>&1; mkdir ${"y".repeat(300)} 2>&1; mv ok.md ${long} 2>&1; ls`,
    );
    expect(r.stdout.match(/File name too long/g)?.length).toBe(3);
    expect(r.stdout.trim().split("\n").pop()).toBe("ok.md");
  });

  it("9. a descriptor opened before a remote edit reads what fstat reports (tail -f sees remote appends)", async () => {
    const d = await folder();
    expect((await m.sh(`echo one > ${d}/tail.md`)).code).toBe(0);
    const note = await noteAt(api(), `${d}/tail.md`);
    const script = [
      "import os,sys,time",
      `fd=os.open('${d}/tail.md', os.O_RDONLY)`,
      "os.read(fd, 100)",
      "print('open', flush=True)",
      "end=time.time()+5",
      "while os.fstat(fd).st_size != 8 and time.time() < end: time.sleep(0.05)",
      "print(os.fstat(fd).st_size, repr(os.pread(fd, 100, 0)), flush=True)",
    ].join("\n");
    const child = spawn(PYTHON, ["-c", script], { cwd: m.dirs.mnt });
    let out = "";
    child.stdout.on("data", (b) => {
      out += b;
    });
    await untilOpen(child, () => out);
    await updateNote(api(), note.id, { content: "one\ntwo\n" });
    if (child.exitCode === null) await new Promise((resolve) => child.once("exit", resolve));
    expect(out).toBe("open\n8 b'one\\ntwo\\n'\n");
  });

  it("10. a save through a descriptor opened before a remote edit keeps both versions (close-to-open)", async () => {
    const d = await folder();
    expect((await m.sh(`echo base > ${d}/c.md`)).code).toBe(0);
    const note = await noteAt(api(), `${d}/c.md`);
    const script = [
      "import os,time",
      `fd=os.open('${d}/c.md', os.O_RDWR)`,
      "os.read(fd, 100)",
      "print('open', flush=True)",
      "input()", // the test edits the note remotely meanwhile
      "end=time.time()+5",
      "while os.fstat(fd).st_size != 7 and time.time() < end: time.sleep(0.05)",
      "os.ftruncate(fd, 0); os.pwrite(fd, b'mine\\n', 0); os.close(fd); print('saved', flush=True)",
    ].join("\n");
    const child = spawn(PYTHON, ["-c", script], { cwd: m.dirs.mnt });
    let out = "";
    child.stdout.on("data", (b) => {
      out += b;
    });
    await untilOpen(child, () => out);
    await updateNote(api(), note.id, { content: "remote\n" });
    child.stdin.end("go\n");
    if (child.exitCode === null) await new Promise((resolve) => child.once("exit", resolve));
    expect(out).toBe("open\nsaved\n");
    await m.sync();
    expect((await api().get(`/api/v1/files/${note.id}`)).body.content).toBe("remote\n");
    expect(await conflictCopies(d)).toEqual(["mine\n"]);
  });

  it("11. mtimes set by the user are kept after delivery and a remount; a second rsync -a sends nothing", async () => {
    const d = await folder();
    const src = join(local, "rsync-src");
    rmSync(src, { recursive: true, force: true });
    const setup = await sh(
      `mkdir -p ${src} && for i in 1 2 3; do echo note $i > ${src}/n$i.md; done && touch -d '2001-02-03 04:05:06' ${src}/*`,
    );
    expect(setup.code).toBe(0);
    expect(
      (await m.sh(`echo t > ${d}/m.md && touch -d @981173106 ${d}/m.md && rsync -a ${src}/ ${d}/rs/`)).code,
    ).toBe(0);
    expect((await run(`stat -c %Y ${d}/m.md`)).stdout).toBe("981173106\n");
    await m.remount();
    expect((await run(`stat -c %Y ${d}/m.md`)).stdout).toBe("981173106\n");
    // Itemized changes: a file rsync would send again starts with ">f".
    const again = await run(`rsync -ai ${src}/ ${d}/rs/`);
    expect(again.stdout.split("\n").filter((l) => l.startsWith(">f"))).toEqual([]);
  });

  it("12. copying a note with its attributes (rsync -aX, cp --preserve=all) carries tags and prints nothing", async () => {
    const d = await folder();
    expect(
      (
        await m.sh(
          `echo x > ${d}/n.md && setfattr -n user.txtfs.tags -v t1 ${d}/n.md && setfattr -n user.txtfs.context -v ctx ${d}/n.md`,
        )
      ).code,
    ).toBe(0);
    const r1 = await m.sh(`rsync -aX ${d}/n.md ${d}/r.md`);
    expect(r1.stderr).toBe("");
    expect(r1.code).toBe(0);
    const r2 = await m.sh(`cp --preserve=all ${d}/n.md ${d}/c.md`);
    expect(r2.stderr).toBe("");
    expect(r2.code).toBe(0);
    for (const name of ["r.md", "c.md"])
      expect(await noteAt(api(), `${d}/${name}`)).toMatchObject({
        tags: ["t1"],
        context: "ctx",
        content: "x\n",
      });
  });

  it("13. git init creates no folders under .git on the service", async () => {
    const d = await folder();
    expect((await m.sh(`cd ${d} && git init -q && echo a > a.md`)).code).toBe(0);
    const dir = await findByPath(api(), d);
    const index = await flatIndex(api());
    expect(index.folders.filter((f) => f.parentFolderId === dir.id).map((f) => f.name)).toEqual([]);
    expect((await run(`ls -A ${d} | tr '\\n' ' '`)).stdout).toBe(".git a.md ");
  });

  it("14. utime sets atime and mtime apart; touch -m / -a change one each; truncate moves mtime at once", async () => {
    const d = await folder();
    const r = await run(
      `cd ${d}; echo x > u.md; ${PYTHON} -c "import os; os.utime('u.md', (1000000000, 2000000000))"; stat -c '%X %Y' u.md; ` +
        "touch -m -d @1500000000 u.md; stat -c '%X %Y' u.md; touch -a -d @1400000000 u.md; stat -c '%X %Y' u.md; " +
        "before=$(stat -c %Y u.md); truncate -s 0 u.md; after=$(stat -c %Y u.md); [ $after -gt $before ] && echo moved",
    );
    expect(r.stdout).toBe("1000000000 2000000000\n1000000000 1500000000\n1400000000 1500000000\nmoved\n");
  });

  it("15. ftruncate + pwrite pairs on one descriptor do not grow memory or fail", async () => {
    const d = await folder();
    const r = await run(
      `${PYTHON} -c "
import os
fd = os.open('${d}/grow.md', os.O_RDWR | os.O_CREAT)
for i in range(40):
    os.ftruncate(fd, 1000)
    os.pwrite(fd, b'x' * 100, 2000)
os.close(fd)
print(os.stat('${d}/grow.md').st_size)"`,
      30_000,
    );
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("2100\n");
  });

  it("16. truncate -s 1P answers EFBIG (notes and local-only files)", async () => {
    const d = await folder();
    const r = await run(
      `cd ${d}; echo a > t.md; echo a > t.bin; truncate -s 1P t.md 2>&1; truncate -s 1P t.bin 2>&1`,
    );
    expect(r.stdout.match(/File too large/g)?.length).toBe(2);
  });
});

// Found by the soak (scripts/soak, the remote-edits property): each failed there before its fix.
describe("issue 13: found by the soak", () => {
  it("our save kept as a conflict copy: the note reads as the service's version at once, and an append builds on what was read", async () => {
    const d = await folder();
    expect((await m.sh(`printf 'base1\\n' > ${d}/s.md`)).code).toBe(0);
    const note = await noteAt(api(), `${d}/s.md`);
    // Same length everywhere: only the times can tell the kernel that its cached pages are stale.
    // The remote edit is made from the script, between its read and its write, with no pause; the
    // script stats the note before each read, as `ls -l` or an editor would.
    const script = [
      "import os,sys,time,urllib.request",
      `p='${d}/s.md'`,
      "fd=os.open(p, os.O_RDWR); os.read(fd, 100)",
      `req=urllib.request.Request(sys.argv[1]+'/api/v1/files/${note.id}', method='PUT', data=b'{"content":"them1\\\\n"}', headers={'authorization':'Bearer '+sys.argv[2],'content-type':'application/json'})`,
      "urllib.request.urlopen(req).read()",
      "os.stat(p); print(repr(open(p,'rb').read()), flush=True)",
      "os.pwrite(fd, b'mine1\\n', 0); os.close(fd)", // saved, based on base1
      "os.stat(p); print(repr(open(p,'rb').read()), flush=True)",
      "time.sleep(0.3)", // delivered meanwhile: a conflict
      "os.stat(p); print(repr(open(p,'rb').read()), flush=True)",
      "f=open(p,'ab'); f.write(b'x\\n'); f.close()",
      "os.stat(p); print(repr(open(p,'rb').read()), flush=True)",
    ].join("\n");
    const r = await run(`${PYTHON} -c ${q(script)} ${q(api().base)} ${q(api().token ?? "")}`);
    expect(r.stderr).toBe("");
    // The first read may come before or after the mount heard of the remote edit (timing); the
    // write through the descriptor that read `base1` builds on `base1` either way.
    expect(r.stdout).toMatch(/^b'(base1|them1)\\n'\nb'mine1\\n'\nb'them1\\n'\nb'them1\\nx\\n'\n$/);
    await m.sync();
    expect((await api().get(`/api/v1/files/${note.id}`)).body.content).toBe("them1\nx\n");
    expect(await conflictCopies(d)).toEqual(["mine1\n"]);
  });

  it("a write through a descriptor builds on what it read, even after another open read a newer remote version", async () => {
    const d = await folder();
    expect((await m.sh(`printf 'base2\\n' > ${d}/r.md`)).code).toBe(0);
    const note = await noteAt(api(), `${d}/r.md`);
    const script = [
      "import json,os,sys,time,urllib.request",
      `p='${d}/r.md'`,
      "fd=os.open(p, os.O_RDWR); print(repr(os.read(fd, 100)), flush=True)",
      `req=urllib.request.Request(sys.argv[1]+'/api/v1/files/${note.id}', method='PUT', data=json.dumps({'content':'them2\\n'}).encode(), headers={'authorization':'Bearer '+sys.argv[2],'content-type':'application/json'})`,
      "etag=urllib.request.urlopen(req).headers['etag']",
      "t=time.time()",
      "while os.getxattr(p, 'user.txtfs.etag').decode().strip('\"') != etag.strip('\"') and time.time()-t < 5: time.sleep(0.005)",
      // Another open (a reader) while the first is still open: it reads the remote version.
      "print(repr(open(p,'rb').read()), flush=True)",
      "os.pwrite(fd, b'mine2\\n', 0); os.close(fd)", // built on base2: a conflict, both kept
    ].join("\n");
    const r = await run(`${PYTHON} -c ${q(script)} ${q(api().base)} ${q(api().token ?? "")}`);
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("b'base2\\n'\nb'them2\\n'\n");
    await m.sync();
    expect((await api().get(`/api/v1/files/${note.id}`)).body.content).toBe("them2\n");
    expect(await conflictCopies(d)).toEqual(["mine2\n"]);
  });

  // The kernel keeps a note's attributes for a second (attr_timeout): reads through its page cache
  // stop at the size it holds. A remote edit that arrives within that second must still read whole
  // (the open gets direct I/O), and an append must land after it.
  it("a remote edit read within the kernel's attribute timeout reads whole, and an append lands after it", async () => {
    const d = await folder();
    expect((await m.sh(`printf 'short\\n' > ${d}/g.md`)).code).toBe(0);
    const note = await noteAt(api(), `${d}/g.md`);
    const script = [
      "import json,os,sys,time,urllib.request",
      `p='${d}/g.md'`,
      "print(repr(open(p,'rb').read()), flush=True)",
      // A stat with no read after it (a read makes the next stat ask again): the kernel holds size 6.
      "time.sleep(1.2); os.stat(p); t=time.time()",
      `req=urllib.request.Request(sys.argv[1]+'/api/v1/files/${note.id}', method='PUT', data=json.dumps({'content':'short\\nand a much longer remote edit\\n'}).encode(), headers={'authorization':'Bearer '+sys.argv[2],'content-type':'application/json'})`,
      "etag=urllib.request.urlopen(req).headers['etag']",
      // Until the feed brought the edit to the mount (the xattr asks the daemon, not the kernel).
      "while os.getxattr(p, 'user.txtfs.etag').decode().strip('\"') != etag.strip('\"') and time.time()-t < 5: time.sleep(0.005)",
      "print(time.time()-t < 0.8, flush=True)",
      "print(repr(open(p,'rb').read()), flush=True)",
      "f=open(p,'ab'); f.write(b'x\\n'); f.close()",
      "print(repr(open(p,'rb').read()), flush=True)",
    ].join("\n");
    const r = await run(`${PYTHON} -c ${q(script)} ${q(api().base)} ${q(api().token ?? "")}`);
    expect(r.stderr).toBe("");
    const [first, inTime, whole, appended] = r.stdout.trim().split("\n");
    expect(first).toBe("b'short\\n'");
    expect(whole).toBe("b'short\\nand a much longer remote edit\\n'");
    expect(appended).toBe("b'short\\nand a much longer remote edit\\nx\\n'");
    await m.sync();
    expect((await api().get(`/api/v1/files/${note.id}`)).body.content).toBe(
      "short\nand a much longer remote edit\nx\n",
    );
    // Within the window, or the test proved nothing about it (the machine was too slow this time).
    if (inTime !== "True") console.warn("the remote edit arrived after the attribute timeout: not tested");
  });

  it("a note renamed remotely onto the name of one deleted remotely reads as itself, though both had the same size and time", async () => {
    const d = await folder();
    // Same size, same mtime: to the kernel's cache of the path, the two are alike.
    const setup = await m.sh(
      `cd ${d} && printf 'start b\\n' > b.md && printf 'start c\\n' > c.md && ` +
        "touch -d '2026-01-01 00:00:00' b.md c.md && cat c.md",
    );
    expect(setup.stdout).toBe("start c\n");
    const b = await noteAt(api(), `${d}/b.md`);
    const c = await noteAt(api(), `${d}/c.md`);
    expect((await api().delete(`/api/v1/files/${c.id}`)).status).toBe(200);
    await updateNote(api(), b.id, { name: "c.md" });
    const r = await run(
      `cd ${d} && (${waitFor(`[ "$(getfattr --only-values -n user.txtfs.id c.md 2>/dev/null)" = ${b.id} ]`, 5)}) && cat c.md`,
    );
    expect(r.stdout).toBe("start b\n");
  });

  it("so does one onto the name of a note only listed here, never read (its time is not moved: no pages of the other can be in the kernel)", async () => {
    const d = await folder();
    const dir = await findByPath(api(), d);
    const b = await createNote(api(), { name: "b.md", content: "start b\n", folderId: dir.id });
    const c = await createNote(api(), { name: "c.md", content: "start c\n", folderId: dir.id });
    // Alike to the kernel (`touch -c` sets the times without opening), listed, never opened here.
    const setup = await run(
      `cd ${d} && (${waitFor("[ -f b.md ] && [ -f c.md ]", 5)}) && ` +
        "touch -c -d '2026-01-01 00:00:00' b.md c.md && stat -c '%s %.3Y' c.md",
    );
    expect(setup.stdout).toBe(`8 ${Date.parse("2026-01-01T00:00:00") / 1000}.000\n`);
    expect((await api().delete(`/api/v1/files/${c.id}`)).status).toBe(200);
    await updateNote(api(), b.id, { name: "c.md" });
    const r = await run(
      `cd ${d} && (${waitFor(`[ "$(getfattr --only-values -n user.txtfs.id c.md 2>/dev/null)" = ${b.id} ]`, 5)}) && stat -c '%s %.3Y' c.md && cat c.md`,
    );
    expect(r.stdout).toBe(`${setup.stdout}start b\n`);
  });

  it("`>>` on a name whose note was just deleted (the new note continues it) starts at byte 0, not at the old size", async () => {
    const d = await folder();
    expect((await m.sh(`printf 'old text\\n' > ${d}/t.txt`)).code).toBe(0);
    const r = await run(
      `cd ${d} && rm t.txt && printf new >> t.txt && printf ' more' >> t.txt && od -An -c t.txt`,
    );
    expect(r.stdout.replace(/\s+/g, "")).toBe("newmore");
    await m.sync();
    expect(await contentAt(api(), `${d}/t.txt`)).toBe("new more");
  });

  it("tags set on a note kept local (bytes that are not UTF-8) stay with it through perl -pi and an rsync back to text", async () => {
    const d = await folder();
    expect((await m.sh(`printf 'text\\n' > ${d}/k.md`)).code).toBe(0);
    const before = await noteAt(api(), `${d}/k.md`);
    const src = join(local, "k-src.md");
    const r = await run(
      `cd ${d} && printf '\\377' | dd of=k.md bs=1 seek=1 conv=notrunc status=none && ` +
        "setfattr -n user.txtfs.tags -v alpha k.md && perl -pi -e 's/t/T/' k.md && " +
        "getfattr --only-values -n user.txtfs.tags k.md && echo && " +
        `printf 'text again\\n' > ${src} && rsync ${src} k.md && getfattr --only-values -n user.txtfs.tags k.md`,
    );
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("alpha\nalpha");
    await m.sync();
    expect(await noteAt(api(), `${d}/k.md`)).toMatchObject({
      id: before.id,
      tags: ["alpha"],
      content: "text again\n",
    });
  });

  it("a note kept local moved over another note leaves that note its own tags, as a note moved over it does", async () => {
    const d = await folder();
    expect(
      (
        await m.sh(
          `printf 'text' > ${d}/k.md && printf 'other' > ${d}/t.md && setfattr -n user.txtfs.tags -v keep ${d}/t.md`,
        )
      ).code,
    ).toBe(0);
    await m.sync();
    const target = await noteAt(api(), `${d}/t.md`);
    const r = await run(
      `cd ${d} && printf '\\377' | dd of=k.md bs=1 seek=1 conv=notrunc status=none && ` +
        "setfattr -n user.txtfs.tags -v alpha k.md && mv -T k.md t.md && printf 'text again' > t.md && " +
        "getfattr --only-values -n user.txtfs.tags t.md && echo && ls -A",
    );
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("keep\nt.md\n");
    await m.sync();
    expect(await noteAt(api(), `${d}/t.md`)).toMatchObject({
      id: target.id,
      tags: ["keep"],
      content: "text again",
    });
    const dir = await findByPath(api(), d);
    expect((await flatIndex(api())).files.filter((f) => f.folderId === dir.id && f.name === "k.md")).toEqual(
      [],
    );
  });

  it("os.replace over a note kept local (a truncate split a character) continues that note", async () => {
    const d = await folder();
    expect((await m.sh(`printf 'añejo' > ${d}/s.md`)).code).toBe(0);
    const before = await noteAt(api(), `${d}/s.md`);
    const r = await run(
      `cd ${d} && truncate -s 2 s.md && setfattr -n user.txtfs.tags -v kept s.md && ` +
        `${PYTHON} -c ${q(PY_REPLACE)} s.md 'new text' && getfattr --only-values -n user.txtfs.id s.md && ls -A`,
    );
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe(`${before.id}s.md\n`);
    await m.sync();
    expect(await noteAt(api(), `${d}/s.md`)).toMatchObject({
      id: before.id,
      tags: ["kept"],
      content: "new text",
    });
  });

  it("a sidecar of a note kept local (a truncate split a character) takes tags that go with it when it is text again", async () => {
    const d = await folder();
    expect((await m.sh(`printf 'añejo' > ${d}/s.md`)).code).toBe(0);
    const before = await noteAt(api(), `${d}/s.md`);
    const r = await run(
      // The first sidecar write leaves its name in the kernel's memory; the note is local right after.
      `cd ${d} && printf '{"tags":["one"]}' > s.md.meta.json && truncate -s 2 s.md && ` +
        `printf '{"tags":["side"]}' > s.md.meta.json && getfattr --only-values -n user.txtfs.tags s.md && echo && ` +
        `ls -A && printf 'text again' > s.md && getfattr --only-values -n user.txtfs.tags s.md`,
    );
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("side\ns.md\nside");
    await m.sync();
    expect(await noteAt(api(), `${d}/s.md`)).toMatchObject({
      id: before.id,
      tags: ["side"],
      content: "text again",
    });
  });

  it("a sidecar path written right after its note was removed (the kernel still remembered the name) makes a plain file", async () => {
    const d = await folder();
    const r = await run(
      `cd ${d} && echo x > g.md && cat g.md.meta.json > /dev/null && rm g.md && ` +
        `printf '{"tags":["x"]}' > g.md.meta.json && ls -A && cat g.md.meta.json`,
    );
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe('g.md.meta.json\n{"tags":["x"]}');
  });

  it("a sidecar written right after its note is made (the kernel remembered the name as absent) sets the tags, never makes a file", async () => {
    const d = await folder();
    const r = await run(
      `cd ${d}; cat n.md.meta.json 2>/dev/null; echo new > n.md && printf '{"tags":["side"]}' > n.md.meta.json && ` +
        "ls -A && getfattr --only-values -n user.txtfs.tags n.md",
    );
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("n.md\nside");
    await m.sync();
    expect((await noteAt(api(), `${d}/n.md`)).tags).toEqual(["side"]);
  });

  it("a note's time stays what it showed through our own rename and tags: vim saves a note made elsewhere right after `mv` onto it (seed 801)", async () => {
    const d = await folder();
    const dir = await findByPath(api(), d);
    for (const name of ["a.md", "c.md", "t.md"])
      await createNote(api(), { name, content: name === "c.md" ? "abc" : "other", folderId: dir.id });
    expect((await run(`cd ${d}; ${waitFor("[ -f a.md ] && [ -f c.md ] && [ -f t.md ]", 5)}`)).code).toBe(0);
    // Made elsewhere, so the mount shows the service's times: the rename's answer carries a newer
    // updatedAt, which must not become the note's mtime (vim, having read the note, then refuses
    // to write it: "changed since reading it", and answers itself no under -es).
    const before = await run(`cd ${d}; stat -c %Y.%y c.md t.md`);
    const r = await run(
      `cd ${d}; mv -T c.md a.md && setfattr -n user.txtfs.tags -v kept t.md && ` +
        `vim -u NONE -es -c '%s/a/b/ge' -c wq a.md </dev/null 2>/dev/null; cat a.md`,
    );
    expect(r).toMatchObject({ stdout: "bbc\n", stderr: "" });
    await m.sync();
    expect((await run(`cd ${d}; stat -c %Y.%y a.md t.md`)).stdout.split("\n")[1]).toBe(
      before.stdout.split("\n")[1],
    );
    expect((await noteAt(api(), `${d}/a.md`)).content).toBe("bbc\n");
    // A rename alone keeps the time too.
    const moved = await run(`cd ${d}; stat -c %Y.%y t.md; mv t.md u.md`);
    await m.sync();
    expect((await run(`cd ${d}; stat -c %Y.%y u.md`)).stdout).toBe(moved.stdout);
  });

  it("a note kept local when a truncate splits a character keeps its time: vim then saves it (model seed 1, LANG unset)", async () => {
    const d = await folder();
    // `truncate` cuts `ñ` in two: the note is kept as a local-only file from then on, the same
    // bytes and time. Its time moved by a millisecond at the next stat (the mount took it for
    // another file at the path), and vim, which read it before, refused its save, exit 0.
    const r = await run(
      `cd ${d}; printf %s 'añejoapple añejo' > b.md && truncate -c -s 14 b.md && stat -c %y b.md && sleep 1.2 && stat -c %y b.md && ` +
        `env -i PATH=/usr/bin:/bin vim -u NONE -es -c 'set backupcopy=yes' -c '%s/a/b/ge' -c wq b.md </dev/null; od -An -c b.md`,
    );
    const [first, second, ...bytes] = r.stdout.split("\n");
    expect(second, r.stderr).toBe(first);
    expect(bytes.join(" ").replace(/\s+/g, " ").trim()).toBe("b 303 261 e j o b p p l e b 303 \\n");
  });

  it("a note kept local before it was delivered, tagged and renamed over a note, brings none of its tags (soak seed 1212)", async () => {
    for (const held of [false, true]) {
      const d = await folder();
      expect((await m.sh(`echo kept > ${d}/a.md && setfattr -n user.txtfs.tags -v own ${d}/a.md`)).code).toBe(
        0,
      );
      await m.sync();
      const before = await noteAt(api(), `${d}/a.md`);
      // Cut in the middle of `ñ` at once (not delivered yet): kept local, a note nonetheless, then
      // tagged and moved over a.md; held open by another process, libfuse hides a.md first and
      // the file goes on as the note by its name (it brought its tags there: "alpha"). Written as
      // text again, a.md is that note with its own tags, as after any rename over a note.
      const hold = held ? `exec 3<${d}/a.md && ` : "";
      const r = await run(
        `printf %s 'añejoapple' > ${d}/b.md && truncate -c -s 2 ${d}/b.md && setfattr -n user.txtfs.tags -v alpha ${d}/b.md && ` +
          `${hold}mv -T ${d}/b.md ${d}/a.md; rc=$?; exec 3<&-; printf 'text\\n' > ${d}/a.md && ` +
          `getfattr --only-values -n user.txtfs.tags ${d}/a.md; exit $rc`,
      );
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout, `held: ${held}`).toBe("own");
      await m.sync();
      expect(await noteAt(api(), `${d}/a.md`)).toMatchObject({
        id: before.id,
        tags: ["own"],
        content: "text\n",
      });
    }
  });

  it("a note moved, kept local by a write that split a character, then extracted over by tar stays where it was moved (soak seed 1602)", async () => {
    const d = await folder();
    expect((await m.sh(`mkdir ${d}/d1 && printf 'banana\\ncat\\n' > ${d}/a.md`)).code).toBe(0);
    await m.sync();
    const before = await noteAt(api(), `${d}/a.md`);
    // Moved (the move still in the journal), then a write leaves half of an `ñ`: kept local, the
    // pending move dropped with the save it belonged to; tar -x unlinks it and creates it again,
    // which continues the note. Its save must carry the name and folder: sent alone, the service
    // kept the note at a.md, and the mount moved it back there.
    const stage = mkdtempSync(join(local, "tar-"));
    const r = await run(
      `cd ${d} && printf %s 'añejoañejo' | dd of=a.md bs=4096 seek=18 oflag=seek_bytes conv=notrunc status=none && ` +
        "mv -T a.md d1/b.md && printf %s 'bbananacat applecat' | dd of=d1/b.md bs=4096 seek=7 oflag=seek_bytes conv=notrunc status=none && " +
        `mkdir -p ${stage}/d1 && printf 'añejoappledog\\n' > ${stage}/d1/b.md && tar -cf ${stage}/t.tar -C ${stage} d1/b.md && ` +
        `tar -xf ${stage}/t.tar && ls -A . d1`,
    );
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe(".:\nd1\n\nd1:\nb.md\n");
    await m.sync();
    expect((await run(`cd ${d} && ls -A . d1 && cat d1/b.md`)).stdout).toBe(
      ".:\nd1\n\nd1:\nb.md\nañejoappledog\n",
    );
    expect(await noteAt(api(), `${d}/d1/b.md`)).toMatchObject({ id: before.id, content: "añejoappledog\n" });
    expect(await findByPath(api(), `${d}/a.md`)).toBeUndefined();
  });

  it("a note moved, then kept local before the move left, is moved on the service too: a new note under its old name is another note", async () => {
    const d = await folder();
    expect((await m.sh(`mkdir ${d}/d1 && printf 'banana\\ncat\\n' > ${d}/a.md`)).code).toBe(0);
    await m.sync();
    const before = await noteAt(api(), `${d}/a.md`);
    const r = await run(
      `cd ${d} && mv -T a.md d1/b.md && printf '\\303' | dd of=d1/b.md bs=1 seek=20 conv=notrunc status=none && ` +
        "printf 'new a\\n' > a.md && ls -A . d1",
    );
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe(".:\na.md\nd1\n\nd1:\nb.md\n");
    await m.sync();
    const dir = await findByPath(api(), d);
    const d1 = await findByPath(api(), `${d}/d1`);
    const files = (await flatIndex(api())).files;
    expect(files.filter((f) => f.folderId === dir.id).map((f) => f.name)).toEqual(["a.md"]);
    expect(files.filter((f) => f.folderId === d1.id).map((f) => [f.id, f.name])).toEqual([
      [before.id, "b.md"],
    ]);
    expect(await contentAt(api(), `${d}/a.md`)).toBe("new a\n");
  });

  it("a name another note moved onto is no longer the deleted note's: a file made there later is a new note (soak seed 4208)", async () => {
    // rm, then (within the delete's grace) another note moved onto the name and away again, then
    // rsync made a file there: it continued the deleted note (its id and tags came back).
    const d = await folder();
    expect(
      (await m.sh(`mkdir ${d}/d2 && printf 'old\\n' > ${d}/a.md && printf 'other\\n' > ${d}/d2/a.md`)).code,
    ).toBe(0);
    expect((await m.sh(`setfattr -n user.txtfs.tags -v alpha ${d}/a.md`)).code).toBe(0);
    await m.sync();
    const deleted = await noteAt(api(), `${d}/a.md`);
    const other = await noteAt(api(), `${d}/d2/a.md`);
    const stage = mkdtempSync(join(local, "rsync-"));
    const r = await run(
      `cd ${d} && rm a.md && mv -T d2/a.md a.md && printf 'more\\n' >> a.md && mv -T a.md d2/a.md && ` +
        `printf 'rsynced\\n' > ${stage}/src.md && rsync --checksum ${stage}/src.md a.md && ` +
        'printf \'[%s][%s]\' "$(getfattr --only-values -n user.txtfs.tags a.md)" "$(getfattr --only-values -n user.txtfs.tags d2/a.md)"',
    );
    expect(r.stdout).toBe("[][]");
    await m.sync();
    expect(await noteAt(api(), `${d}/d2/a.md`)).toMatchObject({
      id: other.id,
      content: "other\nmore\n",
      tags: [],
    });
    const made = await noteAt(api(), `${d}/a.md`);
    expect(made).toMatchObject({ content: "rsynced\n", tags: [] });
    expect(made.id).not.toBe(deleted.id);
    expect((await api().get(`/api/v1/files/${deleted.id}`)).status).toBe(404);
  });
});

// Regressions of issue 13 ("no save is ever lost or altered"), one small test per way a save was
// lost or a note's identity or times changed. Scripts run with no pauses between their steps: the
// bugs needed an edit to land while an earlier save was still pending or on its way.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  attachmentAt,
  contentAt,
  findByPath,
  flatIndex,
  type MountFixture,
  mountFixture,
  noteAt,
  sh,
} from "../helpers/mount.ts";

let m: MountFixture;

beforeAll(async () => {
  m = mountFixture();
  await m.start();
});
afterAll(() => m?.close());

const api = () => m.current.api;
/** Runs a script in the mount without waiting for delivery afterwards (m.sh waits). */
const run = (script: string) => sh(script, { cwd: m.dirs.mnt, timeoutMs: 60_000 });

describe("saves are never lost", () => {
  it("vim saves a note written a moment before (pending) and one just appended to (20 of 20)", async () => {
    // vim refuses to write when the file's mtime moved since it read it ("changed since reading"):
    // a pending note's mtime once followed the clock and a delivery reset it to the service's.
    const r = await run(`
      lost=0
      for i in $(seq 1 10); do
        printf 'banana\\ncat\\n' > v$i.md && vim -es -c '%s/a/b/g' -c wq v$i.md </dev/null || lost=$((lost+100))
        [ "$(head -1 v$i.md)" = bbnbnb ] || lost=$((lost+1))
        echo apple >> v$i.md; vim -es -c '%s/b/c/g' -c wq v$i.md </dev/null || lost=$((lost+100))
        [ "$(head -1 v$i.md)" = ccncnc ] || lost=$((lost+1))
      done
      echo lost=$lost`);
    expect(r.stdout.trim()).toBe("lost=0");
    await m.sync();
    expect((await noteAt(api(), "v7.md")).content).toBe("ccncnc\ncct\napple\n");
  });

  it("a pending note's mtime is stable until it is written again, and delivery does not move it", async () => {
    const r = await run(`
      printf x > t.md; a=$(stat -c %.9Y t.md); sleep 0.05; b=$(stat -c %.9Y t.md)
      sleep 1.2; c=$(stat -c %.9Y t.md) # delivered by now (saves gather at most 1 s)
      printf y >> t.md; d=$(stat -c %.9Y t.md)
      echo "$a $b $c $d"`);
    const [a, b, c, d] = r.stdout.trim().split(" ");
    expect(b).toBe(a);
    expect(c).toBe(a);
    expect(Number(d)).toBeGreaterThan(Number(a));
  });
});

describe("times are what programs set", () => {
  it("utimens sets mtime and atime separately; touch -m and touch -a change only theirs", async () => {
    const r = await run(`
      printf x > u.md
      python3 -c "import os; os.utime('u.md', (1000000000, 2000000000))"
      stat -c '%X %Y' u.md
      touch -m -d @1500000000 u.md; stat -c '%X %Y' u.md
      touch -a -d @1200000000 u.md; stat -c '%X %Y' u.md
      printf x > u.bin; touch -m -d @1500000000 u.bin; touch -a -d @1200000000 u.bin; stat -c '%X %Y' u.bin`);
    expect(r.stdout).toBe(
      "1000000000 2000000000\n1000000000 1500000000\n1200000000 1500000000\n1200000000 1500000000\n",
    );
  });

  it("truncate and O_TRUNC move mtime and ctime at once, before delivery", async () => {
    const r = await run(`
      printf abc > tr.md; touch -d @1000000000 tr.md; stat -c '%Y' tr.md
      truncate -s 1 tr.md; stat -c '%Y %Z' tr.md`);
    const [before, after] = r.stdout.trim().split("\n");
    expect(before).toBe("1000000000");
    const [mtime, ctime] = after!.split(" ").map(Number);
    expect(mtime).toBeGreaterThan(1_700_000_000);
    expect(ctime).toBeGreaterThan(1_700_000_000);
  });

  it("a second rsync -a transfers nothing, also after a remount", async () => {
    const src = `${m.dirs.base}/rsync-src`;
    const r = await sh(
      `mkdir -p ${src}/d && for i in 1 2 3; do echo "note $i" > ${src}/d/n$i.md; done && touch -d @1600000000 ${src}/d/*.md && ` +
        `rsync -a --stats ${src}/d/ ${m.dirs.mnt}/rs/ | grep 'files transferred'`,
      { timeoutMs: 30_000 },
    );
    expect(r.stdout).toContain("transferred: 3");
    const again = await sh(`rsync -a --stats ${src}/d/ ${m.dirs.mnt}/rs/ | grep 'files transferred'`);
    expect(again.stdout).toContain("transferred: 0");
    await m.sync();
    await m.remount();
    const after = await sh(`rsync -a --stats ${src}/d/ ${m.dirs.mnt}/rs/ | grep 'files transferred'`);
    expect(after.stdout).toContain("transferred: 0");
    expect((await run("stat -c %Y rs/n2.md")).stdout.trim()).toBe("1600000000");
  });
});

describe("bytes are never altered", () => {
  it("content that is not UTF-8 stays exactly its bytes (an attachment on the service), and is a note once it is text", async () => {
    const r = await run(`
      printf '\\xff\\xfe binary' > b.md; od -An -tx1 b.md | tr -d ' \\n'; echo
      stat -c %s b.md`);
    expect(r.stdout).toBe("fffe2062696e617279\n9\n");
    await m.sync();
    expect(await findByPath(api(), "b.md")).toBeUndefined();
    expect((await attachmentAt(m.current, "b.md"))?.toString("hex")).toBe("fffe2062696e617279");
    await m.remount();
    expect((await run("od -An -tx1 b.md | tr -d ' \\n'")).stdout).toBe("fffe2062696e617279");
    expect((await m.sh("printf 'text again' > b.md")).code).toBe(0);
    expect((await noteAt(api(), "b.md")).content).toBe("text again");
    expect(await attachmentAt(m.current, "b.md")).toBeUndefined();
  });

  it("an existing note written with bytes that are not UTF-8 keeps its identity for when it is text again", async () => {
    expect((await m.sh("echo hello > bin2.md && setfattr -n user.txtfs.tags -v keep bin2.md")).code).toBe(0);
    const note = await noteAt(api(), "bin2.md");
    expect((await m.sh("printf '\\x80\\x81' > bin2.md && od -An -tx1 bin2.md")).stdout.trim()).toBe("80 81");
    expect((await noteAt(api(), "bin2.md")).content).toBe("hello\n"); // the service keeps its text
    expect((await m.sh("echo fine > bin2.md")).code).toBe(0);
    expect(await noteAt(api(), "bin2.md")).toMatchObject({ id: note.id, content: "fine\n", tags: ["keep"] });
  });

  it("a note kept local that is moved takes its note along: a note made at the name it left is one of its own", async () => {
    // Once the note stayed where it was on the service, and the new note was a second one of that
    // name there (soak seed 373).
    expect((await m.sh("mkdir -p km/d && echo first > km/a.md")).code).toBe(0);
    const note = await noteAt(api(), "km/a.md");
    // No pauses: the move and the new note land while the earlier saves may still be pending.
    // The bytes that are not UTF-8 go in through one descriptor: a shell's `>` closes the emptied
    // note once before it writes, and under load that empty close reaches the service first.
    const r = await run(
      `python3 -c 'open("km/a.md", "wb").write(b"x\\xc3")' && mv km/a.md km/d/b.md && printf new > km/a.md && ls km/*`,
    );
    expect(r.stdout).toBe("km/a.md\n\nkm/d:\nb.md\n");
    await m.sync();
    const index = await flatIndex(api());
    const km = index.folders.find((f) => f.name === "km")!;
    expect(index.files.filter((f) => f.folderId === km.id).map((f) => f.name)).toEqual(["a.md"]);
    expect(await noteAt(api(), "km/d/b.md")).toMatchObject({ id: note.id, content: "first\n" });
    const fresh = await noteAt(api(), "km/a.md");
    expect(fresh).toMatchObject({ content: "new" });
    expect(fresh.id).not.toBe(note.id);
    expect((await run("od -An -tx1 km/d/b.md | tr -d ' \\n'")).stdout).toBe("78c3");
    // Text again: it goes up as the note, where it is now.
    expect((await m.sh("printf 'text again' > km/d/b.md")).code).toBe(0);
    expect(await noteAt(api(), "km/d/b.md")).toMatchObject({ id: note.id, content: "text again" });
  });
});

describe("a note keeps its identity however tools rewrite it", () => {
  async function tagged(name: string, content = "v1\n") {
    expect(
      (await m.sh(`printf ${JSON.stringify(content)} > ${name} && setfattr -n user.txtfs.tags -v t1 ${name}`))
        .code,
    ).toBe(0);
    return noteAt(api(), name);
  }

  it("delete + create of the same path (git checkout, tar -x, unzip -o) continues the note", async () => {
    const note = await tagged("g.md");
    expect((await m.sh("rm g.md && printf 'v2\\n' > g.md")).code).toBe(0);
    expect(await noteAt(api(), "g.md")).toMatchObject({ id: note.id, content: "v2\n", tags: ["t1"] });
    const r = await m.sh(
      "git init -q gitrepo && cd gitrepo && printf 'one\\n' > a.md && git add a.md && git -c user.email=t@t -c user.name=t commit -qm1 && " +
        "printf 'two\\n' > a.md && getfattr --only-values -n user.txtfs.id a.md > ../id-before && " +
        "git checkout -- a.md && getfattr --only-values -n user.txtfs.id a.md && echo && cat ../id-before",
    );
    const [after, before] = r.stdout.trim().split("\n");
    expect(after).toBe(before);
    expect(await contentAt(api(), "gitrepo/a.md")).toBe("one\n");
  });

  it("a note moved away under a name that is not a note's, then made again, continues: never two of one name on the service", async () => {
    // The note stays on the service while a file here stands for it (vim's backup pattern); once
    // that file had left the folder, a new note of the name was a second one of that name there.
    const note = await tagged("gm.md");
    expect((await m.sh("mkdir -p gmsub && mv gm.md gmsub/gm.bak && printf 'v2\\n' > gm.md")).code).toBe(0);
    await m.sync();
    const index = await flatIndex(api());
    expect(index.files.filter((f) => f.name === "gm.md")).toHaveLength(1);
    expect(await noteAt(api(), "gm.md")).toMatchObject({ id: note.id, content: "v2\n", tags: ["t1"] });
    expect((await m.sh("cat gmsub/gm.bak")).stdout).toBe("v1\n");
  });

  it("a note renamed aside into another folder leaves its name in its own folder: a note made under that name elsewhere is new, and stays where it was made", async () => {
    // Once the file standing for the note was matched by its name alone: `> wf/a.md` continued the
    // note of wf/d/a.md and showed up as wf/d/a.md (soak, seed 516).
    const made = await m.sh("mkdir -p wf/d && echo one > wf/d/a.md");
    expect(made.code).toBe(0);
    const note = await noteAt(api(), "wf/d/a.md");
    const r = await run("mv wf/d/a.md wf/old.md~ && printf two > wf/a.md && ls wf wf/d && cat wf/a.md");
    expect(r.stdout).toBe("wf:\na.md\nd\nold.md~\n\nwf/d:\ntwo");
    await m.sync();
    const fresh = await noteAt(api(), "wf/a.md");
    expect(fresh).toMatchObject({ content: "two" });
    expect(fresh.id).not.toBe(note.id);
    // The name it left is still the note's: made again there, it continues.
    expect((await m.sh("printf three > wf/d/a.md")).code).toBe(0);
    expect(await noteAt(api(), "wf/d/a.md")).toMatchObject({ id: note.id, content: "three" });
  });

  it("a note renamed aside whose folder is then removed goes with it: never moved up beside a note of its name", async () => {
    // The folder looks empty here, but the service still held the note there, and deleting a folder
    // moves what it holds up a level (soak with TXTFS_MODEL_ASIDE, seed 516).
    expect((await m.sh("mkdir -p rf/d && echo one > rf/d/a.md && echo top > rf/a.md")).code).toBe(0);
    const aside = await noteAt(api(), "rf/d/a.md");
    const r = await run("mv rf/d/a.md rf/old.md~ && rmdir rf/d && ls rf && cat rf/old.md~");
    expect(r.stdout).toBe("a.md\nold.md~\none\n");
    await m.sync();
    const index = await flatIndex(api());
    const rf = index.folders.find((f) => f.name === "rf")!;
    expect(index.folders.filter((f) => f.parentFolderId === rf.id)).toEqual([]);
    expect(index.files.filter((f) => f.folderId === rf.id).map((f) => f.name)).toEqual(["a.md"]);
    expect(index.files.some((f) => f.id === aside.id)).toBe(false);
    expect((await noteAt(api(), "rf/a.md")).content).toBe("top\n");
  });

  it("rename over a note held open (sed -i, perl -pi, os.replace) keeps its id and tags", async () => {
    const note = await tagged("c.md");
    const r = await m.sh(
      "exec 3<c.md; sed -i 's/v1/v2/' c.md; perl -pi -e 's/v2/v3/' c.md; " +
        "python3 -c \"open('c.tmp','w').write('v4\\n'); import os; os.replace('c.tmp','c.md')\"; exec 3<&-; cat c.md",
    );
    expect(r.stdout).toBe("v4\n");
    expect(await noteAt(api(), "c.md")).toMatchObject({ id: note.id, content: "v4\n", tags: ["t1"] });
  });

  it("sed -i.bak and perl -pi.bak keep the note and leave the backup local", async () => {
    const note = await tagged("s.md");
    const r = await m.sh(
      "sed -i.bak 's/v1/v2/' s.md && perl -pi.orig -e 's/v2/v3/' s.md && cat s.md s.md.bak s.md.orig",
    );
    expect(r.stdout).toBe("v3\nv1\nv2\n");
    expect(await noteAt(api(), "s.md")).toMatchObject({ id: note.id, content: "v3\n", tags: ["t1"] });
    const index = await flatIndex(api());
    expect(index.files.filter((f) => f.name.startsWith("s")).map((f) => f.name)).toEqual(["s.md"]);
    await m.remount();
    expect((await run("cat s.md")).stdout).toBe("v3\n");
  });
});

describe("what cannot be kept is refused at once", () => {
  it("names over 255 bytes answer ENAMETOOLONG at create, mkdir and rename, and nothing is made", async () => {
    const long = `${"n".repeat(253)}.md`;
    const r = await m.sh(
      `echo x > ${long}; echo "create $?"; mkdir ${"d".repeat(256)}; echo "mkdir $?"; ` +
        `echo y > short.md; mv short.md ${long}; echo "rename $?"; cat short.md`,
    );
    expect(r.stdout).toBe("create 1\nmkdir 1\nrename 1\ny\n");
    expect(r.stderr).toMatch(/File name too long/);
    expect((await flatIndex(api())).files.some((f) => f.name.length > 255)).toBe(false);
  });

  it("40 truncates and writes past the end on one descriptor keep memory bounded (fsx's EIO)", async () => {
    const r = await run(`python3 -c "
import os
fd = os.open('mem.md', os.O_RDWR | os.O_CREAT)
for i in range(40):
    os.ftruncate(fd, 1000)
    os.pwrite(fd, b'x' * 100, 2000)
os.close(fd)
print(os.path.getsize('mem.md'))"`);
    expect(r.stderr).toBe("");
    expect(r.stdout.trim()).toBe("2100");
  });
});

describe("reads and conflicts follow the rules", () => {
  it("a descriptor opened before a remote append reads what fstat reports (tail -f shows it)", async () => {
    expect((await m.sh("printf 'line1\\n' > tail.md")).code).toBe(0);
    const note = await noteAt(api(), "tail.md");
    const flag = `${m.dirs.base}/tail.opened`;
    const reader = run(`python3 -c "
import os, time
fd = os.open('tail.md', os.O_RDONLY)
first = os.read(fd, 100)
open('${flag}', 'w').close()
for i in range(200):
    if os.fstat(fd).st_size > len(first): break
    time.sleep(0.05)
print(repr(first + os.pread(fd, 100, len(first))))"`);
    await sh(`for i in $(seq 1 200); do [ -e ${flag} ] && exit 0; sleep 0.05; done; exit 1`);
    await api().put(`/api/v1/files/${note.id}`, { content: "line1\nline2\n" });
    expect((await reader).stdout.trim()).toBe("b'line1\\nline2\\n'");
  });

  it("close-to-open: a save through a descriptor opened before a remote edit keeps both", async () => {
    expect((await m.sh("printf 'base\\n' > cto.md")).code).toBe(0);
    const note = await noteAt(api(), "cto.md");
    // The writer opens, says so, and writes once the remote edit has been made (no timing guesses).
    const flag = `${m.dirs.base}/cto`;
    const writer = run(`python3 -c "
import os, time
fd = os.open('cto.md', os.O_RDWR)
open('${flag}.opened', 'w').close()
while not os.path.exists('${flag}.edited'): time.sleep(0.01)
time.sleep(1.5)  # the remote edit reaches this mount's tree meanwhile
os.ftruncate(fd, 0); os.pwrite(fd, b'ours\\n', 0); os.close(fd)"`);
    await sh(`for i in $(seq 1 200); do [ -e ${flag}.opened ] && exit 0; sleep 0.05; done; exit 1`);
    await api().put(`/api/v1/files/${note.id}`, { content: "theirs\n" });
    await sh(`touch ${flag}.edited`);
    expect((await writer).stderr).toBe("");
    await m.sync();
    expect((await api().get(`/api/v1/files/${note.id}`)).body.content).toBe("theirs\n");
    const copies = (await flatIndex(api())).files.filter((f) => f.name.startsWith("cto.conflict-"));
    expect(copies).toHaveLength(1);
    expect((await api().get(`/api/v1/files/${copies[0].id}`)).body.content).toBe("ours\n");
  });
});

describe("a pending note is a note", () => {
  it("lists and reads its attributes at once, and takes tags right after it is written", async () => {
    const r = await run(
      "echo x > px.md && setfattr -n user.txtfs.tags -v a,b px.md && getfattr --absolute-names -d -m - px.md | grep -c '^user.txtfs' && getfattr --only-values -n user.txtfs.tags px.md",
    );
    expect(r.stdout).toBe("8\na,b");
    await m.sync();
    expect(await noteAt(api(), "px.md")).toMatchObject({ content: "x\n", tags: ["a", "b"] });
  });

  it("copies with attributes carry context and tags and print nothing (cp --preserve=all, rsync -aX)", async () => {
    expect(
      (
        await m.sh(
          "echo orig > cpa.md && setfattr -n user.txtfs.tags -v red cpa.md && setfattr -n user.txtfs.context -v ctx cpa.md",
        )
      ).code,
    ).toBe(0);
    const r = await m.sh(
      "mkdir -p cpd && cp --preserve=all cpa.md cpd/cp.md && rsync -aX cpa.md cpd/rs.md; echo rsync=$?",
    );
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("rsync=0\n");
    const original = await noteAt(api(), "cpa.md");
    for (const copy of ["cpd/cp.md", "cpd/rs.md"]) {
      const note = await noteAt(api(), copy);
      expect(note).toMatchObject({ content: "orig\n", tags: ["red"], context: "ctx" });
      expect(note.id).not.toBe(original.id);
    }
  });
});

describe("folders tools keep their state in stay on this machine", () => {
  it("git init makes no folder on the service; a dot-folder goes up with its first note; node_modules never", async () => {
    const r = await m.sh(
      "mkdir lf && cd lf && git init -q repo && find repo/.git -type d | wc -l && " +
        "mkdir -p .obsidian/plugins && echo '{}' > .obsidian/app.json && " +
        "mkdir -p node_modules/pkg && echo '# readme' > node_modules/pkg/README.md && " +
        "mkdir -p .github/ISSUE_TEMPLATE && echo bug > .github/ISSUE_TEMPLATE/bug.md && " +
        "git -C repo status --short | wc -l",
    );
    expect(r.code).toBe(0);
    expect(Number(r.stdout.split("\n")[0])).toBeGreaterThan(5);
    const index = await flatIndex(api());
    const names = index.folders.map((f) => f.name).sort();
    expect(names).toContain("lf");
    expect(names).toContain("repo");
    expect(names).toContain(".github");
    expect(names).toContain("ISSUE_TEMPLATE");
    for (const local of [".git", "objects", "refs", ".obsidian", "plugins", "node_modules", "pkg"]) {
      expect(names, local).not.toContain(local);
    }
    expect(index.files.map((f) => f.name)).not.toContain("README.md");
    expect(await contentAt(api(), "lf/.github/ISSUE_TEMPLATE/bug.md")).toBe("bug\n");
    // Kept across a restart of the daemon, with what is inside.
    await m.remount();
    const after = await run(
      "git -C lf/repo rev-parse --git-dir && cat lf/.obsidian/app.json lf/node_modules/pkg/README.md",
    );
    expect(after.stdout).toBe(".git\n{}\n# readme\n");
    // Renamed to an ordinary name, a local folder becomes an ordinary one.
    expect((await m.sh("mv lf/.obsidian lf/obsidian-public")).code).toBe(0);
    expect((await flatIndex(api())).folders.map((f) => f.name)).toContain("obsidian-public");
    // mv of a note into a folder whose content stays local: copied there, the note deleted.
    expect(
      (await m.sh("echo n > lf/mvme.md && mv lf/mvme.md lf/node_modules/ && cat lf/node_modules/mvme.md"))
        .stdout,
    ).toBe("n\n");
    expect(await findByPath(api(), "lf/mvme.md")).toBeUndefined();
  });
});

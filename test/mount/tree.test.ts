// The tree and reads through a real mount: mkdir -p, ls -l, stat, find -newer, display names,
// duplicate names; cat, head, grep -rn, dd at offsets, less.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createFolder,
  createNote,
  findByPath,
  flatIndex,
  type MountFixture,
  mountFixture,
  noteAt,
  waitFor,
} from "../helpers/mount.ts";

let m: MountFixture;

beforeAll(async () => {
  m = mountFixture();
  await m.start();
});
afterAll(() => m?.close());

/** A deterministic body: numbered lines with multi-byte characters and a few needles. */
function bigBody(lines: number): string {
  const out: string[] = [];
  for (let i = 1; i <= lines; i++) {
    out.push(`line ${i} café ☕ ${(i * 7919) % 1000} ${i % 97 === 0 ? "NEEDLE" : "hay"}`);
  }
  return `${out.join("\n")}\n`;
}

describe("tree", () => {
  it("mkdir -p and files in nested folders land remotely, with exact sizes in ls -l and stat", async () => {
    const r = await m.sh(
      [
        "set -e",
        "mkdir -p proj/docs/deep",
        "printf 'hello\\n' > proj/a.md",
        "printf 'abcdefghij' > proj/docs/b.txt",
        "printf 'caf\\xc3\\xa9 \\xe2\\x98\\x95\\n' > proj/docs/deep/c.md", // 10 bytes, 7 characters
        "ls -l proj proj/docs proj/docs/deep",
      ].join("\n"),
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);

    const api = m.current.api;
    const index = await flatIndex(api);
    const proj = index.folders.find((f) => f.name === "proj" && f.parentFolderId === null);
    const docs = index.folders.find((f) => f.name === "docs" && f.parentFolderId === proj?.id);
    const deep = index.folders.find((f) => f.name === "deep" && f.parentFolderId === docs?.id);
    expect(proj && docs && deep).toBeTruthy();
    const a = await noteAt(api, "proj/a.md");
    const b = await noteAt(api, "proj/docs/b.txt");
    const c = await noteAt(api, "proj/docs/deep/c.md");
    expect([a.content, a.type, a.folderId]).toEqual(["hello\n", "md", proj.id]);
    expect([b.content, b.type, b.folderId]).toEqual(["abcdefghij", "txt", docs.id]);
    expect([c.content, c.type, c.folderId]).toEqual(["café ☕\n", "md", deep.id]);

    // ls -l: "-rw-r--r-- 1 root root 6 Nov 21 23:30 a.md"
    const sizes = new Map<string, number>();
    for (const line of r.stdout.split("\n")) {
      const f = line.trim().split(/\s+/);
      if (f.length >= 9 && f[0]!.startsWith("-")) sizes.set(f.slice(8).join(" "), Number(f[4]));
    }
    expect(Object.fromEntries(sizes)).toEqual({ "a.md": 6, "b.txt": 10, "c.md": 10 });
    expect(r.stdout).toMatch(/^d\S+\s+\d+\s+\S+\s+\S+\s+\d+.*\sdocs$/m);

    const st = await m.sh("stat -c '%s %Y' proj/a.md proj/docs/b.txt proj/docs/deep/c.md");
    expect(st.code).toBe(0);
    // Sizes exact; the mtime is this mount's (the write), the service's updatedAt comes with the
    // delivery a moment later: within a second of it.
    const secs = (iso: string) => Math.floor(Date.parse(iso) / 1000);
    const shown = st.stdout
      .trim()
      .split("\n")
      .map((l) => l.split(" ").map(Number));
    expect(shown.map(([size]) => size)).toEqual([6, 10, 10]);
    [a, b, c].forEach((note, i) => {
      expect(Math.abs(shown[i]![1]! - secs(note.updatedAt))).toBeLessThanOrEqual(1);
    });
  });

  it("mtime follows the note's updatedAt, and find -newer sees what changed later", async () => {
    let r = await m.sh("set -e; mkdir newer; echo old > newer/old.md; echo mid > newer/mid.md");
    expect(r.code).toBe(0);
    await new Promise((res) => setTimeout(res, 1100));
    r = await m.sh("set -e; echo new > newer/new.md; echo changed >> newer/mid.md");
    expect(r.code).toBe(0);
    const api = m.current.api;
    const mid = await noteAt(api, "newer/mid.md");
    expect(mid.content).toBe("mid\nchanged\n");
    const st = await m.sh("stat -c %Y newer/mid.md");
    // The mtime is this mount's (the write), the service's updatedAt a moment later (the delivery).
    expect(
      Math.abs(Number(st.stdout.trim()) - Math.floor(Date.parse(mid.updatedAt) / 1000)),
    ).toBeLessThanOrEqual(1);

    r = await m.sh("find newer -newer newer/old.md -type f | sort");
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split("\n")).toEqual(["newer/mid.md", "newer/new.md"]);

    // touch -d moves the mtime shown by the mount (the service keeps its own updatedAt)
    r = await m.sh("touch -d @1577836800 newer/new.md && stat -c %Y newer/new.md");
    expect(r.stdout.trim()).toBe("1577836800");
    r = await m.sh("find newer -newer newer/new.md -type f | sort");
    expect(r.stdout.trim().split("\n")).toEqual(["newer/mid.md", "newer/old.md"]);
  });

  it("shows a note whose name lacks its extension with the extension appended", async () => {
    const api = m.current.api;
    const note = await createNote(api, { name: "plain", fileType: "md", content: "plain body\n" });
    expect(note.type).toBe("md");
    const r = await m.sh(`${waitFor("[ -e plain.md ]")}`);
    expect(r.code).toBe(0);
    const ls = await m.sh("ls -1; cat plain.md; getfattr --only-values -n user.txtfs.id plain.md");
    const names = ls.stdout.split("\n");
    expect(names).toContain("plain.md");
    expect(names).not.toContain("plain");
    expect(ls.stdout).toContain(`plain body\n${note.id}`);

    // writing to it keeps the remote name as it was
    const w = await m.sh("echo more >> plain.md");
    expect(w.code).toBe(0);
    const after = (await api.get(`/api/v1/files/${note.id}`)).body;
    expect(after).toMatchObject({ name: "plain", type: "md", content: "plain body\nmore\n" });
  });

  it("shows two notes with one name in a folder under stable, distinct names across a remount", async () => {
    let api = m.current.api;
    const folder = await createFolder(api, "dups");
    const first = await createNote(api, { name: "same.md", content: "first\n", folderId: folder.id });
    const second = await createNote(api, { name: "same.md", content: "second\n", folderId: folder.id });
    expect(first.name).toBe(second.name);
    const listing = async () => {
      const r = await m.sh(waitFor("[ $(ls dups | wc -l) -ge 2 ]"));
      expect(r.code).toBe(0);
      const l = await m.sh(
        'cd dups && for f in *; do printf \'%s\\t%s\\t%s\\n\' "$f" "$(getfattr --only-values -n user.txtfs.id "$f")" "$(cat "$f")"; done',
      );
      expect(l.code).toBe(0);
      return l.stdout
        .trim()
        .split("\n")
        .map((line) => line.split("\t"));
    };
    const before = await listing();
    expect(before).toHaveLength(2);
    const byId = new Map(before.map(([name, id, body]) => [id, { name, body }]));
    expect(byId.get(first.id)?.body).toBe("first");
    expect(byId.get(second.id)?.body).toBe("second");
    const names = before.map(([name]) => name!).sort();
    expect(names).toContain("same.md");
    const other = names.find((n) => n !== "same.md")!;
    expect(other).toMatch(/^same[ .(\-_~].*\.md$/);

    await m.remount();
    api = m.current.api;
    const after = await listing();
    expect(after.sort()).toEqual(before.sort());
    // the service still holds both under the one name
    const index = await flatIndex(api);
    expect(index.files.filter((f) => f.folderId === folder.id).map((f) => f.name)).toEqual([
      "same.md",
      "same.md",
    ]);
  });

  it("once one of two items of one name goes, the other shows under the plain name again (soak seed 4102)", async () => {
    const api = m.current.api;
    const folder = await createFolder(api, "dups-gone");
    const first = await createNote(api, { name: "same.md", content: "first\n", folderId: folder.id });
    await createNote(api, { name: "same.md", content: "second\n", folderId: folder.id });
    const olderSub = await createFolder(api, "sub", folder.id);
    const newerSub = await createFolder(api, "sub", folder.id);
    await createNote(api, { name: "in.md", content: "inside\n", folderId: newerSub.id });
    const shown = await m.sh(waitFor("[ $(ls dups-gone | wc -l) -ge 4 ]"));
    expect(shown.code).toBe(0);
    expect(
      (await m.sh("ls dups-gone")).stdout.split("\n").filter((n) => n === "same.md" || n === "sub"),
    ).toEqual(["same.md", "sub"]);
    // The plain names are the older ones'; they go (a delete elsewhere, as the feed brings it).
    expect((await api.delete(`/api/v1/files/${first.id}`)).status).toBe(200);
    expect((await api.delete(`/api/v1/folders/${olderSub.id}`)).status).toBe(200);
    const r = await m.sh(waitFor("[ \"$(ls dups-gone | tr '\\n' ' ')\" = 'same.md sub ' ]"));
    expect(r.code).toBe(0);
    expect((await m.sh("ls dups-gone")).stdout).toBe("same.md\nsub\n");
    expect((await m.sh("cat dups-gone/same.md dups-gone/sub/in.md")).stdout).toBe("second\ninside\n");
  });
});

describe("reads", () => {
  const body = bigBody(3000); // ~130 KB, multi-byte characters
  const bytes = Buffer.from(body, "utf8");
  let id: string;

  beforeAll(async () => {
    const api = m.current.api;
    const folder = await createFolder(api, "reads");
    id = (await createNote(api, { name: "big.md", content: body, folderId: folder.id })).id;
    await createNote(api, { name: "small.txt", content: "one\nNEEDLE two\nthree\n", folderId: folder.id });
    await createNote(api, { name: "none.md", content: "nothing here\n", folderId: folder.id });
    const r = await m.sh(waitFor("[ -e reads/big.md ] && [ -e reads/small.txt ] && [ -e reads/none.md ]"));
    expect(r.code).toBe(0);
  });

  it("cat returns the exact bytes and ls -l / stat the exact size", async () => {
    const r = await m.sh("cat reads/big.md | sha256sum; stat -c %s reads/big.md; wc -c < reads/big.md");
    const { createHash } = await import("node:crypto");
    const sha = createHash("sha256").update(bytes).digest("hex");
    expect(r.stdout.split("\n")).toEqual([`${sha}  -`, String(bytes.length), String(bytes.length), ""]);
  });

  it("head -c returns a prefix", async () => {
    const r = await m.sh("head -c 100 reads/big.md | od -An -tx1 -v | tr -d ' \\n'");
    expect(r.stdout).toBe(bytes.subarray(0, 100).toString("hex"));
    const lines = await m.sh("head -n 3 reads/big.md");
    expect(lines.stdout).toBe(`${body.split("\n").slice(0, 3).join("\n")}\n`);
  });

  it("grep -rn finds every match with file names and line numbers", async () => {
    const r = await m.sh("grep -rn NEEDLE reads");
    expect(r.code).toBe(0);
    const expected = body
      .split("\n")
      .map((line, i) => [line, i + 1] as const)
      .filter(([line]) => line.includes("NEEDLE"))
      .map(([line, n]) => `reads/big.md:${n}:${line}`);
    expected.push("reads/small.txt:2:NEEDLE two");
    expect(r.stdout.trim().split("\n").sort()).toEqual(expected.sort());
    const none = await m.sh("grep -rn NOTTHERE reads");
    expect(none.code).toBe(1);
    expect(none.stdout).toBe("");
  });

  it("dd reads at random offsets return the right bytes", async () => {
    // a fixed list of offsets, inside, across 4 KiB page boundaries and at the end
    const cases: [number, number][] = [
      [0, 1],
      [4095, 2],
      [4096, 4096],
      [12_345, 777],
      [65_530, 20],
      [bytes.length - 10, 10],
      [bytes.length - 3, 100], // short read at the end
      [bytes.length + 100, 10], // past the end: nothing
    ];
    const script = cases
      .map(
        ([skip, count]) =>
          `dd if=reads/big.md iflag=skip_bytes,count_bytes skip=${skip} count=${count} bs=4096 status=none | od -An -tx1 -v | tr -d ' \\n'; echo`,
      )
      .join("\n");
    const r = await m.sh(script);
    expect(r.code).toBe(0);
    expect(r.stdout.split("\n").slice(0, cases.length)).toEqual(
      cases.map(([skip, count]) => bytes.subarray(skip, skip + count).toString("hex")),
    );
    // bs-sized blocks: skip=3 blocks of 1000, 2 blocks
    const blocks = await m.sh("dd if=reads/big.md bs=1000 skip=3 count=2 status=none | sha256sum");
    const { createHash } = await import("node:crypto");
    expect(blocks.stdout).toBe(
      `${createHash("sha256").update(bytes.subarray(3000, 5000)).digest("hex")}  -\n`,
    );
  });

  it("less -F prints a short file and exits", async () => {
    const r = await m.sh("less -F reads/small.txt < /dev/null | cat");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("one\nNEEDLE two\nthree\n");
  });

  it("reading a note does not change it remotely", async () => {
    const rec = await findByPath(m.current.api, "reads/big.md");
    expect(rec.id).toBe(id);
    const detail = (await m.current.api.get(`/api/v1/files/${id}`)).body;
    expect(detail.content).toBe(body);
    expect(detail.etag).toBe(rec.etag);
  });
});

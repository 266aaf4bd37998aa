import { describe, expect, it } from "vitest";
import { MountError, parseMountOptions } from "../../src/fuse/index.ts";
import { StaleWindow } from "../../src/fuse/kernelCache/staleWindow.ts";
import { disambiguated, displayName, isNoteName } from "../../src/vfs/names.ts";
import { Tree } from "../../src/vfs/tree.ts";

describe("-o options", () => {
  it("maps libfuse option names to the mount's, values kept", () => {
    expect(parseMountOptions(["allow_other,umask=022", "fsname=notes", "ro"])).toEqual({
      allowOther: true,
      umask: "022",
      fsname: "notes",
    });
  });
  it("refuses unknown options clearly", () => {
    expect(() => parseMountOptions(["big_writes"])).toThrow(MountError);
    expect(() => parseMountOptions(["big_writes"])).toThrow(/unsupported -o option "big_writes"/);
    // The kernel's timeouts are txtfs's own (it tells the kernel of every change): said so.
    expect(() => parseMountOptions(["attr_timeout=5"])).toThrow(
      /-o attr_timeout is not supported: txtfs tells/,
    );
  });
});

describe("the stale window (opens with direct I/O)", () => {
  let now = 0;
  const window = () => new StaleWindow(1500, () => now);
  it("holds a changed path for the window, then lets it go; other paths are untouched", () => {
    now = 0;
    const w = window();
    w.changed("/a.md");
    now = 1499;
    expect(w.mayBeStale("/a.md")).toBe(true);
    expect(w.mayBeStale("/b.md")).toBe(false);
    now = 1500;
    expect(w.mayBeStale("/a.md")).toBe(false);
  });
  it("a change of anything holds every path; too many paths at once count as anything", () => {
    now = 0;
    const w = window();
    w.changed();
    expect(w.mayBeStale("/any.md")).toBe(true);
    now = 2000;
    expect(w.mayBeStale("/any.md")).toBe(false);
    for (let i = 0; i < 10_001; i++) w.changed(`/n${i}.md`);
    expect(w.mayBeStale("/never-changed.md")).toBe(true);
    now = 4000;
    w.changed("/late.md"); // the burst has passed: pruned, per path again
    expect(w.mayBeStale("/late.md")).toBe(true);
    expect(w.mayBeStale("/n5.md")).toBe(false);
  });
});

describe("names", () => {
  it("only .md and .txt are notes", () => {
    for (const n of ["a.md", "B.TXT", "x.y.md"]) expect(isNoteName(n)).toBe(true);
    for (const n of ["a.md~", ".a.md.swp", "4913", "sedAbC123", ".fuse_hidden0001.md", "notes.bak"]) {
      expect(isNoteName(n)).toBe(false);
    }
  });
  it("shows a remote name with its type's extension", () => {
    expect(displayName("plan", "md")).toBe("plan.md");
    expect(displayName("plan.txt", "md")).toBe("plan.txt");
    expect(disambiguated("a.md", "f_01M8ABCDEFGHJKMNPQRSTV3F9K")).toBe("a (tv3f9k).md");
  });
});

describe("tree", () => {
  const file = (id: string, name: string, folderId: string | null = null) => ({
    id,
    name,
    context: "",
    tags: [],
    type: "md" as const,
    availability: "cloud+local" as const,
    size: 1,
    folderId,
    createdAt: "2026-01-01T00:00:00.000Z",
    updatedAt: "2026-01-01T00:00:00.000Z",
    endpoint: "",
    raw: "",
    access: "owner" as const,
    role: "owner" as const,
    etag: '"1-x"',
    contentHash: "x",
  });

  it("gives duplicates a stable suffix: the oldest id keeps the plain name, whatever the arrival order", () => {
    const a = new Tree();
    a.load([], [file("f_01A", "n.md"), file("f_01B", "n.md")]);
    const b = new Tree();
    b.upsertFile(file("f_01B", "n.md"));
    b.upsertFile(file("f_01A", "n.md"));
    for (const t of [a, b]) expect([...t.root.children.keys()].sort()).toEqual(["n (f_01b).md", "n.md"]);
    expect(a.lookup("/n.md")).toMatchObject({ id: "f_01A" });
    expect(b.lookup("/n.md")).toMatchObject({ id: "f_01A" });
  });

  it("keeps files whose folder arrives later, and moves them in when it does", () => {
    const t = new Tree();
    t.upsertFile(file("f_1", "x.md", "d_1"));
    expect(t.lookup("/x.md")).toBeDefined();
    t.upsertFolder({
      id: "d_1",
      name: "dir",
      context: "",
      tags: [],
      parentFolderId: null,
      fileCount: 1,
      createdAt: "2026-01-01T00:00:00.000Z",
      updatedAt: "2026-01-01T00:00:00.000Z",
      endpoint: "",
      access: "owner",
      role: "owner",
    });
    expect(t.lookup("/x.md")).toBeUndefined();
    expect(t.lookup("/dir/x.md")).toMatchObject({ id: "f_1" });
  });
});

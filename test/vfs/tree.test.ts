import { describe, expect, it } from "vitest";
import { Tree } from "../../src/vfs/tree.ts";

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

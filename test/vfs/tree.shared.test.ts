// The mount's `Shared with me/OWNER/` placement, in memory.
import { describe, expect, it } from "vitest";
import type { TxtFile, TxtFolder } from "../../src/lib/apiTypes.ts";
import { SHARED_DIR } from "../../src/vfs/sharedFolders.ts";
import { Tree } from "../../src/vfs/tree.ts";

const at = "2026-01-01T00:00:00.000Z";
const file = (id: string, name: string, extra: Partial<TxtFile> = {}): TxtFile => ({
  id,
  name,
  context: "",
  tags: [],
  type: "md",
  availability: "cloud",
  size: 1,
  folderId: null,
  createdAt: at,
  updatedAt: at,
  endpoint: "",
  raw: "",
  access: "owner",
  role: "owner",
  etag: `"${id}"`,
  contentHash: "",
  ...extra,
});
const folder = (id: string, name: string, extra: Partial<TxtFolder> = {}): TxtFolder => ({
  id,
  name,
  context: "",
  tags: [],
  parentFolderId: null,
  fileCount: 0,
  createdAt: at,
  updatedAt: at,
  endpoint: "",
  access: "owner",
  role: "owner",
  ...extra,
});
const shared = { access: "shared" as const, role: "reader" as const, ownerId: "u_alice" };

describe("Shared with me", () => {
  it("places shared tops under their owner, keeps shared subtrees whole, and own items at the top", () => {
    const tree = new Tree();
    tree.setOwner("u_alice", "alice@example.com");
    tree.load(
      [
        folder("d_team", "Team", { ...shared, parentFolderId: "d_hidden" }),
        folder("d_sub", "sub", { ...shared, parentFolderId: "d_team" }),
      ],
      [
        file("f_mine", "mine.md"),
        file("f_solo", "solo.md", { ...shared, folderId: "d_hidden" }),
        file("f_in", "in.md", { ...shared, folderId: "d_sub" }),
      ],
    );
    expect([...tree.root.children.keys()].sort()).toEqual([SHARED_DIR, "mine.md"]);
    expect(tree.lookup(`/${SHARED_DIR}/alice@example.com/solo.md`)?.kind).toBe("file");
    expect(tree.lookup(`/${SHARED_DIR}/alice@example.com/Team/sub/in.md`)?.kind).toBe("file");
    expect(tree.lookup(`/${SHARED_DIR}`)).toMatchObject({ kind: "dir", id: null, meta: { role: "reader" } });
  });

  it("names an owner's folder by id until the email is known, then renames it", () => {
    const tree = new Tree();
    tree.upsertFile(file("f_1", "a.md", { ...shared, ownerId: "u_bob" }));
    expect(tree.lookup(`/${SHARED_DIR}/u_bob/a.md`)).toBeDefined();
    tree.setOwner("u_bob", "bob@example.com");
    expect(tree.lookup(`/${SHARED_DIR}/u_bob`)).toBeUndefined();
    expect(tree.lookup(`/${SHARED_DIR}/bob@example.com/a.md`)).toBeDefined();
  });

  it("drops an owner's folder, and Shared with me, when the last shared item goes", () => {
    const tree = new Tree();
    tree.setOwner("u_alice", "alice@example.com");
    tree.upsertFile(file("f_1", "a.md", shared));
    tree.upsertFolder(folder("d_1", "Team", shared));
    tree.removeFile("f_1");
    expect(tree.lookup(`/${SHARED_DIR}/alice@example.com/Team`)).toBeDefined();
    tree.removeFolder("d_1");
    expect(tree.lookup(`/${SHARED_DIR}`)).toBeUndefined();
    expect([...tree.root.children.keys()]).toEqual([]);
  });

  it("a shared item whose folder arrives later is adopted by it", () => {
    const tree = new Tree();
    tree.setOwner("u_alice", "alice@example.com");
    tree.upsertFile(file("f_1", "a.md", { ...shared, folderId: "d_1" }));
    expect(tree.lookup(`/${SHARED_DIR}/alice@example.com/a.md`)).toBeDefined();
    tree.upsertFolder(folder("d_1", "Team", shared));
    expect(tree.lookup(`/${SHARED_DIR}/alice@example.com/Team/a.md`)).toBeDefined();
    expect(tree.lookup(`/${SHARED_DIR}/alice@example.com/a.md`)).toBeUndefined();
  });
});

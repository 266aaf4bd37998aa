// A folder and notes made here, whose change-feed records arrive before the answer of the bulk
// request that created them: every note stays listed in its folder (seen with 10 folders of 100
// notes made by one shell loop: the first request's 198 notes vanished from `ls`, while the
// service had them all).
import { describe, expect, it } from "vitest";
import type { TxtFile, TxtFolder } from "../../src/lib/apiTypes.ts";
import { type DirNode, type FileNode, Tree } from "../../src/vfs/tree.ts";

const at = "2026-01-01T00:00:00.000Z";
const folder = (id: string, name: string): TxtFolder => ({
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
});
const file = (id: string, name: string, folderId: string): TxtFile => ({
  id,
  name,
  context: "",
  tags: [],
  type: "md",
  availability: "cloud",
  size: 1,
  folderId,
  createdAt: at,
  updatedAt: at,
  endpoint: "",
  raw: "",
  access: "owner",
  role: "owner",
  etag: `"${id}"`,
  contentHash: "",
});

describe("the feed before the bulk answer", () => {
  it("keeps every note made here in its folder, under its own name", () => {
    const tree = new Tree();
    const dir: DirNode = {
      kind: "dir",
      name: "d",
      parent: tree.root,
      id: null,
      meta: null,
      children: new Map(),
      createKey: "k",
    };
    tree.addChild(tree.root, dir);
    const made: FileNode[] = ["a.md", "b.md"].map((name) => {
      const node: FileNode = {
        kind: "file",
        name,
        parent: dir,
        id: null,
        meta: null,
        remoteName: name,
        createKey: `k-${name}`,
      };
      tree.addChild(dir, node);
      return node;
    });
    // The feed: the folder, then its notes (not known by id yet: their creates are on their way).
    tree.upsertFolder(folder("d_1", "d"));
    tree.upsertFile(file("f_a", "a.md", "d_1"));
    tree.upsertFile(file("f_b", "b.md", "d_1"));
    // The bulk answer: the folder, then each note.
    tree.bindFolder(dir, folder("d_1", "d"));
    tree.bindFile(made[0]!, file("f_a", "a.md", "d_1"));
    tree.bindFile(made[1]!, file("f_b", "b.md", "d_1"));
    expect([...dir.children.keys()].sort()).toEqual(["a.md", "b.md"]);
    expect(tree.lookup("/d/a.md")).toBe(made[0]);
    expect(tree.lookup("/d/b.md")).toBe(made[1]);
    expect(tree.files.get("f_a")).toBe(made[0]);
    expect([...tree.root.children.keys()]).toEqual(["d"]);
  });
});

describe("records of one note arriving out of order", () => {
  const version = (rev: number, size: number, updatedAt: string): TxtFile => ({
    ...file("f1", "n.md", "d1"),
    folderId: null,
    etag: `"${rev}-h${rev}"`,
    contentHash: `h${rev}`,
    size,
    updatedAt,
  });

  it("never steps back to an older revision, also when both share a millisecond (soak seed 192)", () => {
    const tree = new Tree();
    tree.upsertFile(version(1, 3, at));
    const same = "2026-01-01T00:00:01.000Z";
    tree.upsertFile(version(3, 4, same), true); // the answer to our second save
    tree.upsertFile(version(2, 3, same)); // the feed's record of the first, read before it
    expect(tree.files.get("f1")!.meta).toMatchObject({ etag: '"3-h3"', size: 4 });
    tree.upsertFile(version(4, 9, "2026-01-01T00:00:02.000Z"));
    expect(tree.files.get("f1")!.meta).toMatchObject({ etag: '"4-h4"', size: 9 });
  });

  it("orders by time when an ETag names no revision", () => {
    const tree = new Tree();
    tree.upsertFile({ ...version(1, 3, "2026-01-01T00:00:02.000Z"), etag: '"x"' });
    tree.upsertFile({ ...version(1, 5, "2026-01-01T00:00:01.000Z"), etag: '"y"' });
    expect(tree.files.get("f1")!.meta).toMatchObject({ etag: '"x"', size: 3 });
  });
});

describe("a note deleted remotely and created again by our save", () => {
  it("takes the new note's record, though its revision starts again at 1", () => {
    const tree = new Tree();
    const old: TxtFile = { ...file("f1", "n.md", "d1"), folderId: null, etag: '"4-h4"', contentHash: "h4" };
    tree.upsertFile(old);
    const node = tree.files.get("f1")!;
    tree.removeFile("f1");
    node.id = null;
    tree.addChild(tree.root, node);
    tree.bindFile(node, { ...old, id: "f2", etag: '"1-h5"', contentHash: "h5", size: 7 });
    expect(node.meta).toMatchObject({ id: "f2", etag: '"1-h5"', size: 7 });
  });
});

describe("two notes of one name, and the one shown plain goes", () => {
  const same = (id: string): TxtFile => ({ ...file(id, "a.md", "d1"), folderId: null });
  const listed = (tree: Tree) =>
    [...tree.root.children.entries()].map(([k, n]) => [k, n.kind === "local" ? "local" : n.id]).sort();

  it("the other takes the plain name", () => {
    const tree = new Tree();
    tree.upsertFile(same("f_1"));
    tree.upsertFile(same("f_2"));
    expect(listed(tree)).toEqual([
      ["a (f_2).md", "f_2"],
      ["a.md", "f_1"],
    ]);
    tree.removeFile("f_1");
    expect(listed(tree)).toEqual([["a.md", "f_2"]]);
  });

  it("both stay listed when the gone one comes back at once (deleted remotely, saved again: soak seed 5031)", () => {
    // noteSend.ts: a save that met a 404 takes its note out and puts it back as a note to create.
    // Its old name was the other's by then: put back under it, it replaced the other in the
    // folder, which the service still had and the mount no longer listed.
    const tree = new Tree();
    tree.upsertFile(same("f_1"));
    tree.upsertFile(same("f_2"));
    const node = tree.files.get("f_1")!;
    tree.removeFile("f_1");
    node.id = null;
    tree.addChild(tree.root, node, true);
    expect(listed(tree)).toEqual([
      ["a (f_2).md", "f_2"],
      ["a.md", null],
    ]);
    expect(tree.lookup("/a (f_2).md")).toBe(tree.files.get("f_2"));
  });
});

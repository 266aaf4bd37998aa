import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  mkfile as createFile,
  expectError,
  mkdir,
  startTestServer,
  type TestServer,
  type TestUser,
} from "../helpers/server.ts";

let t: TestServer;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  t = await startTestServer();
  alice = await t.user();
  bob = await t.user();
});
afterAll(() => t.close());

const mkfile = (user: TestUser, name: string, folderId: string | null = null, content = `body of ${name}`) =>
  createFile(user, { name, folderId, content });

const getFolder = async (user: TestUser, id: string) => (await user.api.get(`/api/me/folders/${id}`)).body;
const listed = async (user: TestUser) =>
  (await user.api.get("/api/me/folders")).body.folders as { id: string; [k: string]: any }[];
const fileOf = async (user: TestUser, id: string) => (await user.api.get(`/api/v1/files/${id}`)).body;

describe("createFolder", () => {
  it("POST /api/me/folders answers 200 with the folder and its defaults", async () => {
    const res = await alice.api.post("/api/me/folders", { name: "Research" });
    expect(res.status).toBe(200);
    const f = res.body.folder;
    expect(f).toMatchObject({
      name: "Research",
      context: "",
      tags: [],
      parentFolderId: null,
      fileCount: 0,
      access: "owner",
      role: "owner",
    });
    expect(f.id).toMatch(/^d_/);
    expect(f.endpoint).toBe(`/api/v1/folders/${f.id}`);
    expect(Date.parse(f.createdAt)).not.toBeNaN();
    expect(f.updatedAt).toBe(f.createdAt);
    expect(res.headers.get("location")).toBe(`/api/v1/folders/${f.id}`);
    expect((await listed(alice)).map((x) => x.id)).toContain(f.id);
  });

  it("POST /api/v1/folders (mkdir) answers 201 with Location, storing context and tags", async () => {
    const res = await alice.api.post("/api/v1/folders", {
      name: "Skills",
      context: "agent skills",
      tags: ["agents", " skills ", "agents"],
    });
    expect(res.status).toBe(201);
    expect(res.headers.get("location")).toBe(`/api/v1/folders/${res.body.folder.id}`);
    // tags are trimmed and de-duplicated
    expect(res.body.folder).toMatchObject({ context: "agent skills", tags: ["agents", "skills"] });
    expect(await getFolder(alice, res.body.folder.id)).toMatchObject({
      name: "Skills",
      context: "agent skills",
      tags: ["agents", "skills"],
    });
  });

  it("nests under parentFolderId, and parentFolderId null creates at the root", async () => {
    const top = await mkdir(alice, { name: "top" });
    const mid = await mkdir(alice, { name: "mid", parentFolderId: top.id });
    const low = (await alice.api.post("/api/me/folders", { name: "low", parentFolderId: mid.id })).body
      .folder;
    expect(mid.parentFolderId).toBe(top.id);
    expect(low.parentFolderId).toBe(mid.id);
    const atRoot = await mkdir(alice, { name: "r", parentFolderId: null });
    expect(atRoot.parentFolderId).toBeNull();
    const byId = new Map((await listed(alice)).map((f) => [f.id, f]));
    expect(byId.get(mid.id)?.parentFolderId).toBe(top.id);
    expect(byId.get(low.id)?.parentFolderId).toBe(mid.id);
  });

  it("accepts the limits exactly", async () => {
    const res = await alice.api.post("/api/v1/folders", {
      name: `${"é".repeat(127)}a`, // 255 bytes
      context: "😀".repeat(4000), // 4000 characters
      tags: Array.from({ length: 16 }, (_, i) => `t${i}`),
    });
    expect(res.status).toBe(201);
    expect(res.body.folder.tags).toHaveLength(16);
  });

  it.each([
    ["an empty name", { name: "" }, "name"],
    ["a name with '/'", { name: "a/b" }, "name"],
    ["a name with NUL", { name: "a\u0000b" }, "name"],
    ["a 256-byte ASCII name", { name: "x".repeat(256) }, "name"],
    ["a 256-byte UTF-8 name", { name: "é".repeat(128) }, "name"],
    ["'.'", { name: "." }, "name"],
    ["'..'", { name: ".." }, "name"],
    ["a numeric name", { name: 7 }, "name"],
    ["a missing name", { context: "no name" }, "name"],
    ["4001 characters of context", { name: "ok", context: "x".repeat(4001) }, "context"],
    ["a numeric context", { name: "ok", context: 12 }, "context"],
    ["17 tags", { name: "ok", tags: Array.from({ length: 17 }, (_, i) => `t${i}`) }, "tags"],
    ["tags as a string", { name: "ok", tags: "a,b" }, "tags"],
    ["a numeric tag", { name: "ok", tags: [1] }, "tags"],
    ["a tag with a comma", { name: "ok", tags: ["a,b"] }, "tags"],
    ["a blank tag", { name: "ok", tags: [" "] }, "tags"],
    ["a numeric parentFolderId", { name: "ok", parentFolderId: 5 }, "parentFolderId"],
    ["an empty parentFolderId", { name: "ok", parentFolderId: "" }, "parentFolderId"],
    ["an array parentFolderId", { name: "ok", parentFolderId: ["d_x"] }, "parentFolderId"],
    ["an unknown field", { name: "ok", bogus: true }, "bogus"],
  ])("rejects %s with 400 naming the field, creating nothing", async (_label, body, field) => {
    const before = await listed(alice);
    for (const path of ["/api/me/folders", "/api/v1/folders"]) {
      const err = expectError(await alice.api.post(path, body), 400, "validation_failed");
      expect(err.message).toContain(field);
      expect(JSON.stringify(err.details)).toContain(field);
    }
    expect(await listed(alice)).toEqual(before);
  });

  it("rejects a non-object body", async () => {
    const before = await listed(alice);
    expectError(await alice.api.post("/api/v1/folders", ["x"]), 400, "validation_failed");
    expectError(
      await alice.api.request("POST", "/api/v1/folders", {
        body: "{",
        headers: { "content-type": "application/json" },
      }),
      400,
      "invalid_json",
    );
    expect(await listed(alice)).toEqual(before);
  });

  it("404s for an unknown parent and for another user's folder, creating nothing", async () => {
    const bobs = await mkdir(bob, { name: "bob-private" });
    const before = await listed(alice);
    for (const parentFolderId of ["d_nope", bobs.id]) {
      const err = expectError(
        await alice.api.post("/api/v1/folders", { name: "child", parentFolderId }),
        404,
        "not_found",
      );
      expect(err.message).toContain("parentFolderId");
    }
    expect(await listed(alice)).toEqual(before);
    expect((await getFolder(bob, bobs.id)).fileCount).toBe(0);
    expect((await bob.api.get(`/api/v1/folders/${bobs.id}`)).body.folders).toEqual([]);
  });
});

describe("listFolders, getFolder and readdir", () => {
  it("listFolders shows only the caller's folders", async () => {
    const mine = await mkdir(alice, { name: "mine" });
    const theirs = await mkdir(bob, { name: "theirs" });
    const a = (await listed(alice)).map((f) => f.id);
    const b = (await listed(bob)).map((f) => f.id);
    expect(a).toContain(mine.id);
    expect(a).not.toContain(theirs.id);
    expect(b).toContain(theirs.id);
    expect(b).not.toContain(mine.id);
  });

  it("getFolder returns the TxtFolder with its direct files, bodies included", async () => {
    const dir = await mkdir(alice, { name: "withFiles", context: "c", tags: ["x"] });
    const sub = await mkdir(alice, { name: "sub", parentFolderId: dir.id });
    const f1 = await mkfile(alice, "one.md", dir.id, "# one\n");
    const f2 = await mkfile(alice, "two.txt", dir.id, "two");
    await mkfile(alice, "deeper.md", sub.id, "not direct");
    await mkfile(alice, "rootfile.md", null);
    const res = await alice.api.get(`/api/me/folders/${dir.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: dir.id,
      name: "withFiles",
      context: "c",
      tags: ["x"],
      parentFolderId: null,
      fileCount: 2,
      endpoint: `/api/v1/folders/${dir.id}`,
    });
    expect(res.body.files).toHaveLength(2);
    const byId = new Map(res.body.files.map((f: any) => [f.id, f]));
    expect(byId.get(f1.id)).toMatchObject({
      name: "one.md",
      content: "# one\n",
      type: "md",
      folderId: dir.id,
      size: 6,
      access: "owner",
      role: "owner",
    });
    expect(byId.get(f2.id)).toMatchObject({ name: "two.txt", content: "two", type: "txt" });
  });

  it("readdir lists subfolders and files without bodies", async () => {
    const dir = await mkdir(alice, { name: "rd" });
    const s1 = await mkdir(alice, { name: "s1", parentFolderId: dir.id });
    const s2 = await mkdir(alice, { name: "s2", parentFolderId: dir.id });
    await mkdir(alice, { name: "grandchild", parentFolderId: s1.id });
    const f = await mkfile(alice, "in-rd.md", dir.id, "secret body");
    await mkfile(alice, "in-s1.md", s1.id);
    await mkfile(alice, "in-s1b.md", s1.id);
    const res = await alice.api.get(`/api/v1/folders/${dir.id}`);
    expect(res.status).toBe(200);
    expect(res.body.folder).toMatchObject({ id: dir.id, name: "rd", fileCount: 1 });
    expect(res.body.folder.files).toBeUndefined();
    expect(res.body.folders.map((x: any) => x.id).sort()).toEqual([s1.id, s2.id].sort());
    const s1Entry = res.body.folders.find((x: any) => x.id === s1.id);
    expect(s1Entry).toMatchObject({ name: "s1", parentFolderId: dir.id, fileCount: 2 });
    expect(res.body.folders.find((x: any) => x.id === s2.id).fileCount).toBe(0);
    expect(res.body.files.map((x: any) => x.id)).toEqual([f.id]);
    expect(res.body.files[0]).toMatchObject({ name: "in-rd.md", size: 11, folderId: dir.id });
    expect(res.body.files[0]).not.toHaveProperty("content");
    expect(res.text).not.toContain("secret body");
  });

  it("readdir of `root` lists the caller's top-level folders and root files only", async () => {
    const u = await t.user();
    const top = await mkdir(u, { name: "top" });
    const nested = await mkdir(u, { name: "nested", parentFolderId: top.id });
    const rootFile = await mkfile(u, "r.md", null, "root body");
    await mkfile(u, "t.md", top.id);
    await mkfile(bob, "bobs-root.md", null);
    const res = await u.api.get("/api/v1/folders/root");
    expect(res.status).toBe(200);
    expect(res.body.folder).toBeNull();
    expect(res.body.folders.map((x: any) => x.id)).toEqual([top.id]);
    expect(res.body.folders[0].fileCount).toBe(1);
    expect(res.body.files.map((x: any) => x.id)).toEqual([rootFile.id]);
    expect(res.body.files[0]).not.toHaveProperty("content");
    expect(res.text).not.toContain("root body");
    expect(res.text).not.toContain(nested.id);
  });

  it("fileCount stays right across listFolders, getFolder, readdir, /api/me and /api/me/files", async () => {
    const u = await t.user();
    const dir = await mkdir(u, { name: "counted" });
    const other = await mkdir(u, { name: "other" });
    const counts = async (id: string) => {
      const me = (await u.api.get("/api/me")).body.folders.find((f: any) => f.id === id);
      const flat = (await u.api.get("/api/me/files")).body.folders.find((f: any) => f.id === id);
      const list = (await listed(u)).find((f) => f.id === id)!;
      const single = await getFolder(u, id);
      const rd = (await u.api.get(`/api/v1/folders/${id}`)).body.folder;
      const inRoot = (await u.api.get("/api/v1/folders/root")).body.folders.find((f: any) => f.id === id);
      const all = [
        me.fileCount,
        flat.fileCount,
        list.fileCount,
        single.fileCount,
        rd.fileCount,
        inRoot.fileCount,
      ];
      expect(new Set(all).size, JSON.stringify(all)).toBe(1);
      expect(single.files).toHaveLength(all[0]);
      return all[0];
    };
    expect(await counts(dir.id)).toBe(0);
    const a = await mkfile(u, "a.md", dir.id);
    const b = await mkfile(u, "b.md", dir.id);
    await mkfile(u, "c.md", dir.id);
    expect(await counts(dir.id)).toBe(3);
    await u.api.put(`/api/v1/files/${a.id}`, { folderId: other.id });
    expect(await counts(dir.id)).toBe(2);
    expect(await counts(other.id)).toBe(1);
    await u.api.delete(`/api/v1/files/${b.id}`);
    expect(await counts(dir.id)).toBe(1);
    // the PUT response carries the count too
    expect((await u.api.put(`/api/me/folders/${dir.id}`, { context: "n" })).body.folder.fileCount).toBe(1);
  });

  it("404s for unknown ids and for another user's folder, revealing nothing", async () => {
    const bobs = await mkdir(bob, { name: "hidden", context: "bob's context" });
    await mkfile(bob, "hidden.md", bobs.id, "bob's body");
    for (const path of [`/api/me/folders/${bobs.id}`, `/api/v1/folders/${bobs.id}`]) {
      const theirs = expectError(await alice.api.get(path), 404, "not_found");
      const unknown = expectError(await alice.api.get(path.replace(bobs.id, "d_unknown")), 404, "not_found");
      // Same answer as for an id that does not exist (modulo the id itself).
      expect(theirs.message.replace(bobs.id, "ID")).toBe(unknown.message.replace("d_unknown", "ID"));
      expect(theirs.resolution).toBe(unknown.resolution);
    }
    const put = await alice.api.put(`/api/me/folders/${bobs.id}`, { name: "stolen" });
    expectError(put, 404, "not_found");
    expect(put.text).not.toContain("hidden");
    expectError(
      await alice.api.put(`/api/v1/folders/${bobs.id}`, { parentFolderId: null }),
      404,
      "not_found",
    );
    expectError(await alice.api.delete(`/api/me/folders/${bobs.id}`), 404, "not_found");
    expectError(await alice.api.delete(`/api/v1/folders/${bobs.id}`), 404, "not_found");
    expectError(await alice.api.get("/api/me/folders/d_missing"), 404, "not_found");
    expectError(await alice.api.put("/api/me/folders/d_missing", { name: "x" }), 404, "not_found");
    expectError(await alice.api.delete("/api/v1/folders/d_missing"), 404, "not_found");
    // bob's folder is untouched
    expect(await getFolder(bob, bobs.id)).toMatchObject({
      name: "hidden",
      context: "bob's context",
      parentFolderId: null,
      fileCount: 1,
    });
  });
});

describe("updateFolder", () => {
  it("renames and changes context and tags, bumping updatedAt", async () => {
    const dir = await mkdir(alice, { name: "before", context: "old", tags: ["a"] });
    await mkfile(alice, "kept.md", dir.id);
    for (const [path, patch, expected] of [
      [`/api/me/folders/${dir.id}`, { name: "after" }, { name: "after", context: "old", tags: ["a"] }],
      [`/api/v1/folders/${dir.id}`, { context: "new" }, { name: "after", context: "new", tags: ["a"] }],
      [
        `/api/me/folders/${dir.id}`,
        { tags: ["b", "c"] },
        { name: "after", context: "new", tags: ["b", "c"] },
      ],
      [`/api/v1/folders/${dir.id}`, { tags: [], context: "" }, { name: "after", context: "", tags: [] }],
    ] as const) {
      const prev = await getFolder(alice, dir.id);
      const res = await alice.api.put(path, patch);
      expect(res.status).toBe(200);
      expect(res.body.folder).toMatchObject({ ...expected, id: dir.id, fileCount: 1, parentFolderId: null });
      expect(res.body.folder.updatedAt > prev.updatedAt).toBe(true);
      expect(res.body.folder.createdAt).toBe(dir.createdAt);
      expect(await getFolder(alice, dir.id)).toMatchObject(expected);
    }
  });

  it("an identical PUT changes nothing", async () => {
    const dir = await mkdir(alice, { name: "same", tags: ["t"] });
    const res = await alice.api.put(`/api/me/folders/${dir.id}`, {
      name: "same",
      tags: ["t"],
      parentFolderId: null,
    });
    expect(res.status).toBe(200);
    expect(res.body.folder.updatedAt).toBe(dir.updatedAt);
  });

  it("moves with parentFolderId, and null moves back to the root", async () => {
    const a = await mkdir(alice, { name: "A" });
    const b = await mkdir(alice, { name: "B" });
    const moving = await mkdir(alice, { name: "moving" });
    const inside = await mkdir(alice, { name: "inside", parentFolderId: moving.id });
    const file = await mkfile(alice, "rides-along.md", moving.id);
    const res = await alice.api.put(`/api/v1/folders/${moving.id}`, { parentFolderId: a.id });
    expect(res.body.folder.parentFolderId).toBe(a.id);
    expect((await alice.api.get(`/api/v1/folders/${a.id}`)).body.folders.map((f: any) => f.id)).toEqual([
      moving.id,
    ]);
    expect(
      (await alice.api.put(`/api/me/folders/${moving.id}`, { parentFolderId: b.id })).body.folder
        .parentFolderId,
    ).toBe(b.id);
    expect((await alice.api.get(`/api/v1/folders/${a.id}`)).body.folders).toEqual([]);
    // its subtree moves with it unchanged
    expect((await getFolder(alice, inside.id)).parentFolderId).toBe(moving.id);
    expect((await fileOf(alice, file.id)).folderId).toBe(moving.id);
    const back = await alice.api.put(`/api/v1/folders/${moving.id}`, { parentFolderId: null });
    expect(back.body.folder.parentFolderId).toBeNull();
    expect((await alice.api.get("/api/v1/folders/root")).body.folders.map((f: any) => f.id)).toContain(
      moving.id,
    );
  });

  it("moving into itself or a descendant answers 409 folder_cycle and changes nothing", async () => {
    const top = await mkdir(alice, { name: "cyc-top" });
    const child = await mkdir(alice, { name: "cyc-child", parentFolderId: top.id });
    const grandchild = await mkdir(alice, { name: "cyc-grandchild", parentFolderId: child.id });
    const snapshot = async () =>
      Promise.all([top.id, child.id, grandchild.id].map((id) => getFolder(alice, id)));
    const before = await snapshot();
    for (const target of [top.id, child.id, grandchild.id]) {
      for (const path of [`/api/me/folders/${top.id}`, `/api/v1/folders/${top.id}`]) {
        const err = expectError(
          await alice.api.put(path, { parentFolderId: target, name: "renamed-too" }),
          409,
          "folder_cycle",
        );
        expect(err.message).toContain("parentFolderId");
      }
    }
    expectError(
      await alice.api.put(`/api/me/folders/${child.id}`, { parentFolderId: grandchild.id }),
      409,
      "folder_cycle",
    );
    expect(await snapshot()).toEqual(before);
  });

  it.each([
    ["an empty name", { name: "" }, "name"],
    ["a name with '/'", { name: "x/y" }, "name"],
    ["a name with NUL", { name: "nul\u0000" }, "name"],
    ["a 256-byte name", { name: "x".repeat(256) }, "name"],
    ["'.'", { name: "." }, "name"],
    ["'..'", { name: ".." }, "name"],
    ["a null name", { name: null }, "name"],
    ["4001 characters of context", { context: "x".repeat(4001) }, "context"],
    ["an array context", { context: ["x"] }, "context"],
    ["17 tags", { tags: Array.from({ length: 17 }, (_, i) => `t${i}`) }, "tags"],
    ["tags as a string", { tags: "x" }, "tags"],
    ["a tag with a comma", { tags: ["ok", "bad,tag"] }, "tags"],
    ["a numeric parentFolderId", { parentFolderId: 1 }, "parentFolderId"],
    ["an empty parentFolderId", { parentFolderId: "" }, "parentFolderId"],
    ["an object parentFolderId", { parentFolderId: {} }, "parentFolderId"],
    ["a read-only field", { fileCount: 3 }, "fileCount"],
    ["an unknown field beside a valid one", { name: "fine", unknownField: 1 }, "unknownField"],
  ])("rejects %s with 400 naming the field and changes nothing", async (_label, patch, field) => {
    const parent = await mkdir(alice, { name: "keep-parent" });
    const dir = await mkdir(alice, { name: "keep", context: "ctx", tags: ["k"], parentFolderId: parent.id });
    const before = await getFolder(alice, dir.id);
    for (const path of [`/api/me/folders/${dir.id}`, `/api/v1/folders/${dir.id}`]) {
      const err = expectError(await alice.api.put(path, patch), 400, "validation_failed");
      expect(err.message).toContain(field);
      expect(JSON.stringify(err.details)).toContain(field);
    }
    expect(await getFolder(alice, dir.id)).toEqual(before);
  });

  it("404s for an unknown or foreign parent and changes nothing", async () => {
    const dir = await mkdir(alice, { name: "stays" });
    const bobs = await mkdir(bob, { name: "bobs-parent" });
    const before = await getFolder(alice, dir.id);
    for (const parentFolderId of ["d_nope", bobs.id]) {
      const err = expectError(
        await alice.api.put(`/api/v1/folders/${dir.id}`, { parentFolderId, name: "renamed" }),
        404,
        "not_found",
      );
      expect(err.message).toContain("parentFolderId");
    }
    expect(await getFolder(alice, dir.id)).toEqual(before);
    expect((await bob.api.get(`/api/v1/folders/${bobs.id}`)).body.folders).toEqual([]);
  });
});

describe("deleteFolder", () => {
  // parent > doomed > {child > grandchild, files f1 f2 ; child holds file deep}
  async function tree(user: TestUser, nested: boolean) {
    const parent = nested ? await mkdir(user, { name: "parent" }) : null;
    const doomed = await mkdir(user, { name: "doomed", parentFolderId: parent?.id ?? null });
    const child = await mkdir(user, { name: "child", parentFolderId: doomed.id });
    const child2 = await mkdir(user, { name: "child2", parentFolderId: doomed.id });
    const grandchild = await mkdir(user, { name: "grandchild", parentFolderId: child.id });
    const f1 = await mkfile(user, "f1.md", doomed.id, "one");
    const f2 = await mkfile(user, "f2.txt", doomed.id, "two");
    const deep = await mkfile(user, "deep.md", child.id, "deep");
    const deeper = await mkfile(user, "deeper.md", grandchild.id, "deeper");
    const bystander = await mkfile(user, "bystander.md", parent?.id ?? null);
    return { parent, doomed, child, child2, grandchild, f1, f2, deep, deeper, bystander };
  }

  for (const [label, nested, path] of [
    ["a nested folder via /api/me", true, "/api/me/folders/"],
    ["a nested folder via /api/v1 (rmdir)", true, "/api/v1/folders/"],
    ["a root-level folder via /api/me", false, "/api/me/folders/"],
    ["a root-level folder via /api/v1 (rmdir)", false, "/api/v1/folders/"],
  ] as const) {
    it(`deleting ${label} moves direct files and subfolders up exactly one level`, async () => {
      const u = await t.user();
      const x = await tree(u, nested);
      const up = x.parent?.id ?? null;
      const res = await u.api.delete(`${path}${x.doomed.id}`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: x.doomed.id, deleted: true, movedTo: up });
      expect([...res.body.movedFileIds].sort()).toEqual([x.f1.id, x.f2.id].sort());
      expect([...res.body.movedFolderIds].sort()).toEqual([x.child.id, x.child2.id].sort());

      // the folder is gone everywhere
      expectError(await u.api.get(`/api/me/folders/${x.doomed.id}`), 404, "not_found");
      expectError(await u.api.get(`/api/v1/folders/${x.doomed.id}`), 404, "not_found");
      expect((await listed(u)).map((f) => f.id)).not.toContain(x.doomed.id);
      expectError(await u.api.delete(`${path}${x.doomed.id}`), 404, "not_found");

      // direct files moved up, content and names intact
      for (const f of [x.f1, x.f2]) {
        const now = await fileOf(u, f.id);
        expect(now).toMatchObject({ folderId: up, name: f.name, content: f.content });
        expect(now.etag).not.toBe(f.etag);
      }
      // direct subfolders moved up
      expect((await getFolder(u, x.child.id)).parentFolderId).toBe(up);
      expect((await getFolder(u, x.child2.id)).parentFolderId).toBe(up);
      // grandchildren stayed where they were
      expect((await getFolder(u, x.grandchild.id)).parentFolderId).toBe(x.child.id);
      expect((await fileOf(u, x.deep.id)).folderId).toBe(x.child.id);
      expect((await fileOf(u, x.deeper.id)).folderId).toBe(x.grandchild.id);
      expect((await fileOf(u, x.bystander.id)).folderId).toBe(up);

      // the new parent's listing shows the promoted children
      const rd = (await u.api.get(`/api/v1/folders/${up ?? "root"}`)).body;
      expect(rd.folders.map((f: any) => f.id).sort()).toEqual([x.child.id, x.child2.id].sort());
      expect(rd.files.map((f: any) => f.id).sort()).toEqual([x.f1.id, x.f2.id, x.bystander.id].sort());
      if (x.parent) {
        expect((await getFolder(u, x.parent.id)).fileCount).toBe(3);
        expect((await listed(u)).find((f) => f.id === x.parent!.id)?.fileCount).toBe(3);
      } else {
        const me = (await u.api.get("/api/me")).body;
        expect(me.rootFiles.map((f: any) => f.id).sort()).toEqual([x.f1.id, x.f2.id, x.bystander.id].sort());
      }
      expect((await getFolder(u, x.child.id)).fileCount).toBe(1);
    });
  }

  it("deleting an empty folder removes just it", async () => {
    const parent = await mkdir(alice, { name: "p" });
    const empty = await mkdir(alice, { name: "empty", parentFolderId: parent.id });
    const res = await alice.api.delete(`/api/v1/folders/${empty.id}`);
    expect(res.body).toMatchObject({
      deleted: true,
      movedFileIds: [],
      movedFolderIds: [],
      movedTo: parent.id,
    });
    expect((await alice.api.get(`/api/v1/folders/${parent.id}`)).body.folders).toEqual([]);
  });

  it("another user cannot delete the folder; nothing moves", async () => {
    const dir = await mkdir(alice, { name: "guarded" });
    const f = await mkfile(alice, "inside.md", dir.id);
    expectError(await bob.api.delete(`/api/me/folders/${dir.id}`), 404, "not_found");
    expect((await getFolder(alice, dir.id)).files.map((x: any) => x.id)).toEqual([f.id]);
  });
});

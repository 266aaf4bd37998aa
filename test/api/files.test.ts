import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, startTestServer, type TestServer, type TestUser } from "../helpers/server.ts";

let t: TestServer;
let alice: TestUser;

beforeAll(async () => {
  t = await startTestServer();
  alice = await t.user();
});
afterAll(() => t.close());

describe("createFile", () => {
  it("creates with the spec's defaults and returns the file detail", async () => {
    const res = await alice.api.post("/api/me/files", { name: "notes.md", content: "# Hi\n" });
    expect(res.status).toBe(200);
    const f = res.body.file;
    expect(f).toMatchObject({
      name: "notes.md",
      content: "# Hi\n",
      context: "",
      tags: [],
      type: "md",
      availability: "cloud+local",
      folderId: null,
      access: "owner",
      role: "owner",
      size: 5,
    });
    expect(f.id).toMatch(/^f_/);
    expect(Date.parse(f.createdAt)).not.toBeNaN();
    expect(res.headers.get("etag")).toBe(f.etag);
  });

  it("derives fileType from the extension when omitted (.md -> md, otherwise txt)", async () => {
    for (const [name, type] of [
      ["a.md", "md"],
      ["B.MD", "md"],
      ["c.txt", "txt"],
      ["noext", "txt"],
      ["d.markdown", "txt"],
    ]) {
      const res = await alice.api.post("/api/v1/files", { name });
      expect(res.status).toBe(201);
      expect(res.body.file.type).toBe(type);
    }
    const explicit = await alice.api.post("/api/v1/files", { name: "e.txt", fileType: "md" });
    expect(explicit.body.file.type).toBe("md");
  });

  it("counts size in UTF-8 bytes", async () => {
    const res = await alice.api.post("/api/v1/files", { name: "u.txt", content: "é€😀" });
    expect(res.body.file.size).toBe(2 + 3 + 4);
  });

  it.each([
    [{ name: "" }, "name"],
    [{ name: "a/b.md" }, "name"],
    [{ name: "a\u0000b.md" }, "name"],
    [{ name: "x".repeat(256) }, "name"],
    [{ name: "é".repeat(128) }, "name"], // 256 bytes
    [{ name: ".." }, "name"],
    [{ name: "a.md", context: "x".repeat(4001) }, "context"],
    [{ name: "a.md", tags: Array.from({ length: 17 }, (_, i) => `t${i}`) }, "tags"],
    [{ name: "a.md", tags: ["a,b"] }, "tags"],
    [{ name: "a.md", tags: [""] }, "tags"],
    [{ name: "a.md", tags: "x" }, "tags"],
    [{ name: "a.md", fileType: "pdf" }, "fileType"],
    [{ name: "a.md", availability: "local" }, "availability"],
    [{ name: 42 }, "name"],
    [{ content: "no name" }, "name"],
    [{ name: "a.md", bogus: 1 }, "bogus"],
  ])("rejects %j with 400 naming %s, creating nothing", async (body, field) => {
    const before = (await alice.api.get("/api/me/files")).body.files.length;
    const res = await alice.api.post("/api/v1/files", body);
    const err = expectError(res, 400, "validation_failed");
    expect(err.message).toContain(field);
    expect(JSON.stringify(err.details)).toContain(field);
    expect((await alice.api.get("/api/me/files")).body.files.length).toBe(before);
  });

  it("accepts the limits exactly", async () => {
    const res = await alice.api.post("/api/v1/files", {
      name: `${"é".repeat(127)}a`, // 255 bytes
      context: "😀".repeat(4000), // 4000 characters
      tags: Array.from({ length: 16 }, (_, i) => `t${i}`),
    });
    expect(res.status).toBe(201);
  });

  it("rejects bad JSON with 400 invalid_json", async () => {
    const res = await alice.api.request("POST", "/api/v1/files", {
      body: '{"name": ',
      headers: { "content-type": "application/json" },
    });
    expectError(res, 400, "invalid_json");
  });

  it("rejects content over 5 MiB with 413", async () => {
    const res = await alice.api.post("/api/v1/files", {
      name: "big.txt",
      content: "x".repeat(5 * 1024 * 1024 + 1),
    });
    expectError(res, 413, "payload_too_large");
  });

  it("404s for an unknown folderId and creates nothing", async () => {
    const before = (await alice.api.get("/api/me/files")).body.files.length;
    const res = await alice.api.post("/api/v1/files", { name: "x.md", folderId: "d_nope" });
    expectError(res, 404, "not_found");
    expect((await alice.api.get("/api/me/files")).body.files.length).toBe(before);
  });
});

describe("getFile, getFileRaw and conditional requests", () => {
  it("returns the detail with a strong ETag and 304 on If-None-Match", async () => {
    const { file } = (await alice.api.post("/api/me/files", { name: "c.md", content: "body" })).body;
    for (const path of [`/api/me/files/${file.id}`, `/api/v1/files/${file.id}`]) {
      const res = await alice.api.get(path);
      expect(res.status).toBe(200);
      expect(res.body.content).toBe("body");
      const etag = res.headers.get("etag")!;
      expect(etag).toMatch(/^"[^"]+"$/);
      const again = await alice.api.get(path, { "if-none-match": etag });
      expect(again.status).toBe(304);
      expect(again.text).toBe("");
      expect(again.headers.get("etag")).toBe(etag);
      expect(again.headers.get("x-request-id")).toBeTruthy();
      expect(again.headers.get("ratelimit-remaining")).toBeTruthy();
      // weak comparison and lists work for If-None-Match
      expect((await alice.api.get(path, { "if-none-match": `"other", W/${etag}` })).status).toBe(304);
      expect((await alice.api.get(path, { "if-none-match": '"other"' })).status).toBe(200);
    }
  });

  it("serves the raw body as text with the same ETag", async () => {
    const { file } = (await alice.api.post("/api/v1/files", { name: "r.txt", content: "line1\nline2\n" }))
      .body;
    const res = await alice.api.get(`/api/me/files/${file.id}/raw`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
    expect(res.text).toBe("line1\nline2\n");
    expect((await alice.api.get(`/api/v1/files/${file.id}/raw`, { "if-none-match": file.etag })).status).toBe(
      304,
    );
  });

  it("404s for unknown ids and for other users' files", async () => {
    const bob = await t.user();
    const { file } = (await alice.api.post("/api/v1/files", { name: "private.md" })).body;
    expectError(await alice.api.get("/api/me/files/f_missing"), 404, "not_found");
    expectError(await bob.api.get(`/api/me/files/${file.id}`), 404, "not_found");
    expectError(await bob.api.get(`/api/v1/files/${file.id}/raw`), 404, "not_found");
    expectError(await bob.api.put(`/api/v1/files/${file.id}`, { content: "x" }), 404, "not_found");
    expect((await alice.api.get(`/api/v1/files/${file.id}`)).body.content).toBe("");
  });
});

describe("updateFile", () => {
  it("updates content and metadata, bumping ETag and updatedAt", async () => {
    const { file } = (await alice.api.post("/api/v1/files", { name: "u.md", content: "v1" })).body;
    const res = await alice.api.put(`/api/me/files/${file.id}`, {
      content: "v2",
      tags: ["a", "b"],
      context: "ctx",
    });
    expect(res.status).toBe(200);
    expect(res.body.file).toMatchObject({
      id: file.id,
      content: "v2",
      tags: ["a", "b"],
      context: "ctx",
      size: 2,
    });
    expect(res.body.file.etag).not.toBe(file.etag);
    expect(res.body.file.updatedAt > file.updatedAt).toBe(true);
    expect(res.body.file.createdAt).toBe(file.createdAt);
  });

  it("changing availability changes updatedAt (the spec's transition)", async () => {
    const { file } = (await alice.api.post("/api/v1/files", { name: "av.md" })).body;
    const res = await alice.api.put(`/api/v1/files/${file.id}`, { availability: "cloud" });
    expect(res.body.file.availability).toBe("cloud");
    expect(res.body.file.updatedAt > file.updatedAt).toBe(true);
  });

  it("an identical PUT creates no new revision", async () => {
    const { file } = (await alice.api.post("/api/v1/files", { name: "same.md", content: "x" })).body;
    const res = await alice.api.put(`/api/v1/files/${file.id}`, { content: "x" });
    expect(res.body.file.etag).toBe(file.etag);
  });

  it("renaming to .md/.txt carries the type; other names keep it", async () => {
    const { file } = (await alice.api.post("/api/v1/files", { name: "n.txt" })).body;
    expect((await alice.api.put(`/api/v1/files/${file.id}`, { name: "n.md" })).body.file.type).toBe("md");
    expect((await alice.api.put(`/api/v1/files/${file.id}`, { name: "n" })).body.file.type).toBe("md");
  });

  it("If-Match: matching tag writes, stale tag answers 412 and changes nothing", async () => {
    const { file } = (await alice.api.post("/api/v1/files", { name: "im.md", content: "a" })).body;
    const ok = await alice.api.put(`/api/v1/files/${file.id}`, { content: "b" }, { "if-match": file.etag });
    expect(ok.status).toBe(200);
    const stale = await alice.api.put(
      `/api/v1/files/${file.id}`,
      { content: "c" },
      { "if-match": file.etag },
    );
    const err = expectError(stale, 412, "precondition_failed");
    expect(err.details.currentEtag).toBe(ok.body.file.etag);
    expect((await alice.api.get(`/api/v1/files/${file.id}`)).body.content).toBe("b");
    // a weak tag never satisfies If-Match (strong comparison)
    expectError(
      await alice.api.put(
        `/api/v1/files/${file.id}`,
        { content: "d" },
        { "if-match": `W/${ok.body.file.etag}` },
      ),
      412,
      "precondition_failed",
    );
    expect(
      (await alice.api.put(`/api/v1/files/${file.id}`, { content: "e" }, { "if-match": "*" })).status,
    ).toBe(200);
  });

  it.each([
    [{ name: "" }, "name"],
    [{ name: "a/b" }, "name"],
    [{ context: "x".repeat(4001) }, "context"],
    [{ tags: Array.from({ length: 17 }, (_, i) => `t${i}`) }, "tags"],
    [{ availability: "nowhere" }, "availability"],
    [{ fileType: "doc" }, "fileType"],
    [{ content: 5 }, "content"],
    [{ folderId: 3 }, "folderId"],
  ])("rejects %j with 400 naming %s and changes nothing", async (patch, field) => {
    const { file } = (
      await alice.api.post("/api/v1/files", { name: "keep.md", content: "orig", tags: ["k"] })
    ).body;
    const res = await alice.api.put(`/api/v1/files/${file.id}`, patch);
    expect(expectError(res, 400, "validation_failed").message).toContain(field);
    const now = (await alice.api.get(`/api/v1/files/${file.id}`)).body;
    expect(now).toMatchObject({ name: "keep.md", content: "orig", tags: ["k"], etag: file.etag });
  });

  it("moves between folders and back to the root", async () => {
    const { folder } = (await alice.api.post("/api/me/folders", { name: "dest" })).body;
    const { file } = (await alice.api.post("/api/v1/files", { name: "mv.md" })).body;
    expect(
      (await alice.api.put(`/api/v1/files/${file.id}`, { folderId: folder.id })).body.file.folderId,
    ).toBe(folder.id);
    expect(
      (await alice.api.put(`/api/v1/files/${file.id}`, { folderId: null })).body.file.folderId,
    ).toBeNull();
    expectError(await alice.api.put(`/api/v1/files/${file.id}`, { folderId: "d_nope" }), 404, "not_found");
  });
});

describe("unlink", () => {
  it("deletes a file; it is gone afterwards; a second delete 404s", async () => {
    const { file } = (await alice.api.post("/api/v1/files", { name: "gone.md" })).body;
    const res = await alice.api.delete(`/api/v1/files/${file.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: file.id, deleted: true });
    expectError(await alice.api.get(`/api/v1/files/${file.id}`), 404, "not_found");
    expectError(await alice.api.delete(`/api/v1/files/${file.id}`), 404, "not_found");
  });

  it("honours If-Match", async () => {
    const { file } = (await alice.api.post("/api/v1/files", { name: "guarded.md" })).body;
    expectError(
      await alice.api.delete(`/api/v1/files/${file.id}`, { "if-match": '"0-x"' }),
      412,
      "precondition_failed",
    );
    expect((await alice.api.get(`/api/v1/files/${file.id}`)).status).toBe(200);
  });
});

describe("version history", () => {
  it("records a version per content change and keeps at most the latest 100 unlabelled ones", async () => {
    const { file } = (await alice.api.post("/api/v1/files", { name: "hist.md", content: "v0" })).body;
    for (let i = 1; i <= 105; i++) await alice.api.put(`/api/v1/files/${file.id}`, { content: `v${i}` });
    const rows = await t.server.store.read((tx) => tx.versions.listForFile(file.id));
    expect(rows).toHaveLength(100);
    expect(rows[0]!.version_number).toBe(106);
    expect(rows.at(-1)!.version_number).toBe(7);
    expect(rows.every((r) => r.source === "api" && r.author_user_id === alice.id)).toBe(true);
    // metadata-only changes make no version
    await alice.api.put(`/api/v1/files/${file.id}`, { tags: ["t"] });
    expect(await t.server.store.read((tx) => tx.versions.listForFile(file.id))).toHaveLength(100);
  });
});

describe("the top level as a folder", () => {
  it("GET /api/me/folders/root returns the root files with their bodies, only the caller's", async () => {
    const carol = await t.user();
    await carol.api.post("/api/v1/files", { name: "top.md", content: "at the root" });
    const { folder } = (await carol.api.post("/api/v1/folders", { name: "sub" })).body;
    await carol.api.post("/api/v1/files", { name: "inner.md", content: "x", folderId: folder.id });
    const res = await carol.api.get("/api/me/folders/root");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: "root", parentFolderId: null, fileCount: 1 });
    expect(res.body.files.map((f: { name: string; content: string }) => [f.name, f.content])).toEqual([
      ["top.md", "at the root"],
    ]);
  });
});

describe("listFlatFiles (GET /api/me/files)", () => {
  it("streams the same JSON as one document: 2,500 notes over several chunks, a shared one, the feed head", async () => {
    const bob = await t.user();
    for (let b = 0; b < 5; b++) {
      const push = Array.from({ length: 500 }, (_, i) => ({
        id: `c${i}`,
        op: "file.create",
        body: { name: `n-${b}-${i}.md`, content: `note "${b}/${i}" ñ\n`, tags: i % 2 ? ["t"] : [] },
      }));
      expect((await bob.api.post("/api/v1/sync", { cursor: "latest", push })).status).toBe(200);
    }
    const shared = (await alice.api.post("/api/me/files", { name: "from-alice.md", content: "hi" })).body
      .file;
    expect(
      (await alice.api.post("/api/v1/shares", { fileId: shared.id, email: bob.email, role: "reader" }))
        .status,
    ).toBe(201);
    const res = await bob.api.get("/api/me/files");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    // What serializing the document at once gives (key order, escapes, no stray commas), with each
    // record on a line of its own, as the header says (JSON.stringify leaves no line end in a string).
    expect(res.text.replaceAll("\n", "")).toBe(JSON.stringify(res.body));
    expect(res.headers.get("x-txtfs-listing")).toBe("lines");
    const lines = res.text.split("\n");
    expect(lines[0]).toBe('{"files":[');
    expect(lines.slice(1, -1).map((l) => JSON.parse(l.replace(/,$/, "")))).toEqual(res.body.files);
    expect(lines.at(-1)).toMatch(/^\],"folders":/);
    const { files, owners, cursor, folders } = res.body;
    expect(files).toHaveLength(2501);
    expect(files.map((f: { id: string }) => f.id)).toEqual(files.map((f: { id: string }) => f.id).toSorted());
    expect(files.find((f: { name: string }) => f.name === "n-3-7.md")).toMatchObject({
      tags: ["t"],
      role: "owner",
    });
    expect(files.find((f: { id: string }) => f.id === shared.id)).toMatchObject({
      role: "reader",
      access: "shared",
    });
    expect(owners).toEqual([expect.objectContaining({ email: alice.email })]);
    expect(folders).toEqual([]);
    expect(cursor).toBeGreaterThanOrEqual(2501);
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newId } from "../../src/lib/ids.ts";
import {
  expectError,
  mkdir,
  mkfile,
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

/** Every file the user can see, with bodies, keyed by id (reads each one singly). */
async function allFiles(user: TestUser) {
  const { files } = (await user.api.get("/api/me/files")).body;
  const out = new Map<string, any>();
  for (const f of files) out.set(f.id, (await user.api.get(`/api/v1/files/${f.id}`)).body);
  return out;
}

const folderNames = async (user: TestUser) =>
  ((await user.api.get("/api/me/folders")).body.folders as any[]).map((f) => f.name).sort();

describe("discover", () => {
  it("answers without credentials and lists verbs with method and path", async () => {
    const res = await t.client().get("/api/v1");
    expect(res.status).toBe(200);
    expect(res.headers.get("api-version")).toBe("v1");
    expect(res.body).toMatchObject({ apiVersion: "v1", status: "beta" });
    const verbs = res.body.verbs as { verb: string; method: string; path: string; scope: string | null }[];
    expect(verbs.length).toBeGreaterThan(10);
    for (const v of verbs) {
      expect(v.method).toMatch(/^(GET|POST|PUT|PATCH|DELETE)$/);
      expect(v.path).toMatch(/^\/api\/v1(\/|$)/);
      // every verb except discover itself names the key scope its route really has
      // (`any`: a valid credential, no particular scope — the identities verbs)
      if (v.verb === "discover") expect(v.scope).toBeNull();
      else if (v.verb === "users" || v.verb === "use") expect(v.scope, v.verb).toBe("any");
      else
        expect(v.scope, v.verb).toMatch(
          /^((files|folders|collaboration|shares):(read|write)|ai:(use|read))$/,
        );
    }
    // the spec's verbs this server serves are listed under the spec's method and path
    const listed = new Set(verbs.map((v) => `${v.verb} ${v.method} ${v.path}`));
    for (const spec of [
      "discover GET /api/v1",
      "list GET /api/v1/files",
      "read GET /api/v1/files/:id",
      "raw GET /api/v1/files/:id/raw",
      "write PUT /api/v1/files/:id",
      "create POST /api/v1/files",
      "upload POST /api/v1/files/upload",
      "import POST /api/v1/files/import",
      "unlink DELETE /api/v1/files/:id",
      "readdir GET /api/v1/folders/:id",
      "mkdir POST /api/v1/folders",
      "connect POST /api/v1/files/:id/connections",
      "changes GET /api/v1/changes",
      "temp-url POST /api/v1/files/:id/share",
      "comment POST /api/v1/files/:id/comments",
      "suggest POST /api/v1/files/:id/suggestions",
      "commit POST /api/v1/files/:id/versions",
      "skills GET /api/v1/skills",
      "share POST /api/v1/shares",
      "folder share POST /api/v1/folders/:id/share",
      "theme GET /api/v1/theme",
      "theme-save PUT /api/v1/theme",
      "ideate POST /api/v1/ideation",
      "grow POST /api/v1/files/:id/ideate",
      "render POST /api/v1/artifacts",
      "models GET /api/v1/artifacts/models",
      "scan POST /api/v1/transcriptions",
    ]) {
      expect(listed, spec).toContain(spec);
    }
  });

  it("every verb it lists is actually served", async () => {
    const u = await t.user();
    const verbs = (await t.client().get("/api/v1")).body.verbs as {
      verb: string;
      method: string;
      path: string;
    }[];
    // the check below can fail: an unserved route answers route_not_found
    expectError(await u.api.get("/api/v1/nope"), 404, "route_not_found");
    expectError(await u.api.request("PATCH", "/api/v1/files"), 405, "method_not_allowed");
    for (const v of verbs) {
      const path = v.path.replace(":id", "f_00000000000000000000000000");
      const res = await u.api.request(
        v.method,
        path,
        v.method === "GET" || v.method === "DELETE" ? {} : { json: {} },
      );
      expect(res.body?.error?.code, `${v.method} ${v.path}: ${res.text}`).not.toBe("route_not_found");
      expect(res.status, `${v.method} ${v.path}`).not.toBe(405);
      // (search needs its `q`: without one it is a 400 naming it)
      if (v.method === "GET" && !v.path.includes(":id") && v.verb !== "search") {
        expect(res.status, `${v.method} ${v.path}: ${res.text}`).toBe(200);
      }
    }
  });
});

describe("list (GET /api/v1/files)", () => {
  let u: TestUser;
  let ids: string[];

  beforeAll(async () => {
    u = await t.user();
    ids = [];
    for (let i = 0; i < 25; i++) {
      ids.push((await mkfile(u, { name: `n${i}.md`, content: `secret body ${i}` })).id);
    }
  });

  it("never includes bodies", async () => {
    const res = await u.api.get("/api/v1/files");
    expect(res.status).toBe(200);
    expect(res.body.files).toHaveLength(25);
    for (const f of res.body.files) {
      expect(f).not.toHaveProperty("content");
      expect(f).toMatchObject({ access: "owner", role: "owner", folderId: null, type: "md" });
      expect(f.endpoint).toBe(`/api/v1/files/${f.id}`);
      expect(f.raw).toBe(`/api/v1/files/${f.id}/raw`);
    }
    expect(res.text).not.toContain("secret body");
    expect(res.body).toMatchObject({ hasMore: false, nextCursor: null });
  });

  it("pages with limit and nextCursor: every id exactly once, in order", async () => {
    const pages: any[] = [];
    let cursor: string | null = null;
    do {
      const q: string = cursor ? `?limit=10&cursor=${encodeURIComponent(cursor)}` : "?limit=10";
      const res = await u.api.get(`/api/v1/files${q}`);
      expect(res.status, res.text).toBe(200);
      pages.push(res.body);
      cursor = res.body.nextCursor;
      expect(pages.length).toBeLessThan(10);
    } while (cursor);
    expect(pages.map((p) => p.files.length)).toEqual([10, 10, 5]);
    expect(pages.map((p) => p.hasMore)).toEqual([true, true, false]);
    expect(pages.at(-1).nextCursor).toBeNull();
    expect(pages.flatMap((p) => p.files.map((f: any) => f.id))).toEqual(ids);
    expect(pages.some((p) => JSON.stringify(p).includes("secret body"))).toBe(false);
  });

  it("hasMore is exact at the page boundary", async () => {
    const all = await u.api.get("/api/v1/files?limit=25");
    expect(all.body).toMatchObject({ hasMore: false, nextCursor: null });
    expect(all.body.files).toHaveLength(25);
    const first = await u.api.get("/api/v1/files?limit=24");
    expect(first.body.hasMore).toBe(true);
    const rest = await u.api.get(`/api/v1/files?limit=24&cursor=${first.body.nextCursor}`);
    expect(rest.body.files.map((f: any) => f.id)).toEqual([ids[24]]);
    expect(rest.body).toMatchObject({ hasMore: false, nextCursor: null });
    const one = await u.api.get("/api/v1/files?limit=1");
    expect(one.body.files.map((f: any) => f.id)).toEqual([ids[0]]);
    expect((await u.api.get("/api/v1/files?limit=1000")).body.files).toHaveLength(25);
  });

  it.each([["0"], ["1001"], ["abc"], ["-1"], [""], ["1.5"], ["true"], ["0x10"], ["1e2"]])(
    "rejects limit=%s with 400 validation_failed naming limit",
    async (limit) => {
      const err = expectError(await u.api.get(`/api/v1/files?limit=${limit}`), 400, "validation_failed");
      expect(err.message).toContain("limit");
      expect(JSON.stringify(err.details)).toContain("limit");
    },
  );

  it.each([
    ["garbage", "zzz"],
    ["a raw id", "f_0000"],
    ["base64 of a non-id", Buffer.from("hello").toString("base64url")],
  ])("rejects %s as cursor with 400 invalid_cursor", async (_label, cursor) => {
    expectError(await u.api.get(`/api/v1/files?cursor=${cursor}`), 400, "invalid_cursor");
  });

  it("filters by folderId (direct files only), and another user's folder is not found", async () => {
    const v = await t.user();
    const dir = await mkdir(v, { name: "f" });
    const sub = await mkdir(v, { name: "sub", parentFolderId: dir.id });
    const inDir = [
      await mkfile(v, { name: "a.md", folderId: dir.id }),
      await mkfile(v, { name: "b.md", folderId: dir.id }),
    ];
    await mkfile(v, { name: "deep.md", folderId: sub.id });
    await mkfile(v, { name: "root.md" });
    const res = await v.api.get(`/api/v1/files?folderId=${dir.id}`);
    expect(res.body.files.map((f: any) => f.id)).toEqual(inDir.map((f) => f.id));
    expect(res.body.files.every((f: any) => f.folderId === dir.id)).toBe(true);
    // paging within the filter
    const p1 = await v.api.get(`/api/v1/files?folderId=${dir.id}&limit=1`);
    expect(p1.body).toMatchObject({ hasMore: true });
    const p2 = await v.api.get(`/api/v1/files?folderId=${dir.id}&limit=1&cursor=${p1.body.nextCursor}`);
    expect([...p1.body.files, ...p2.body.files].map((f: any) => f.id)).toEqual(inDir.map((f) => f.id));
    expect(p2.body.hasMore).toBe(false);
    expectError(await bob.api.get(`/api/v1/files?folderId=${dir.id}`), 404, "not_found");
    expectError(await v.api.get("/api/v1/files?folderId="), 400, "validation_failed");
  });

  it("includes files shared with the caller, marked shared, and only those", async () => {
    const owner = await t.user();
    const grantee = await t.user();
    const shared = await mkfile(owner, { name: "shared.md" });
    await mkfile(owner, { name: "not-shared.md" });
    const now = new Date().toISOString();
    await t.server.store.transaction((tx) =>
      tx.shares.insert({
        id: newId("s"),
        resource_type: "file",
        resource_id: shared.id,
        owner_id: owner.id,
        grantee_id: grantee.id,
        grantee_email: grantee.email,
        role: "reader",
        status: "active",
        created_by: owner.id,
        created_at: now,
        updated_at: now,
        expires_at: null,
      }),
    );
    const res = await grantee.api.get("/api/v1/files");
    expect(res.body.files).toEqual([
      expect.objectContaining({ id: shared.id, access: "shared", role: "reader" }),
    ]);
  });

  it("requires credentials", async () => {
    expectError(await t.client().get("/api/v1/files"), 401, "unauthenticated");
    expectError(await t.client("txt_bogus").get("/api/v1/files"), 401, "invalid_api_key");
  });
});

describe("upload (POST /api/v1/files/upload)", () => {
  const upload = (user: TestUser, query: string, body: string, type: string) =>
    user.api.request("POST", `/api/v1/files/upload?${query}`, { body, headers: { "content-type": type } });

  it("creates a file from a text/markdown body, byte-exact", async () => {
    const text = "# Title\r\n\nline with trailing spaces   \n\tünïcødé 😀\n\n";
    const res = await upload(alice, "name=x.md", text, "text/markdown");
    expect(res.status).toBe(201);
    const f = res.body.file;
    expect(f).toMatchObject({
      name: "x.md",
      content: text,
      type: "md",
      folderId: null,
      size: Buffer.byteLength(text),
    });
    expect(res.headers.get("location")).toBe(`/api/v1/files/${f.id}`);
    expect(res.headers.get("etag")).toBe(f.etag);
    const raw = await alice.api.get(`/api/v1/files/${f.id}/raw`);
    expect(raw.text).toBe(text);
  });

  it("a .txt name stays txt even with a text/markdown body; an extensionless name follows the body", async () => {
    expect((await upload(alice, "name=t.txt", "x", "text/markdown")).body.file.type).toBe("txt");
    expect((await upload(alice, "name=README", "x", "text/markdown")).body.file.type).toBe("md");
    expect((await upload(alice, "name=LOG", "x", "text/plain")).body.file.type).toBe("txt");
  });

  it("takes text/plain and derives the type from the name", async () => {
    const txt = await upload(alice, "name=y.txt", "plain", "text/plain");
    expect(txt.status).toBe(201);
    expect(txt.body.file).toMatchObject({ name: "y.txt", type: "txt", content: "plain" });
    const md = await upload(alice, "name=z.md", "*md*", "text/plain; charset=utf-8");
    expect(md.body.file).toMatchObject({ name: "z.md", type: "md", content: "*md*" });
    const empty = await upload(alice, "name=empty.txt", "", "text/plain");
    expect(empty.status).toBe(201);
    expect(empty.body.file).toMatchObject({ content: "", size: 0 });
  });

  it("puts the file into folderId with context and comma-separated tags", async () => {
    const dir = await mkdir(alice, { name: "uploads" });
    const res = await upload(
      alice,
      `name=${encodeURIComponent("my note.md")}&folderId=${dir.id}&context=ctx&tags=a,%20b,,a`,
      "hello",
      "text/markdown",
    );
    expect(res.status).toBe(201);
    expect(res.body.file).toMatchObject({
      name: "my note.md",
      folderId: dir.id,
      context: "ctx",
      tags: ["a", "b"],
    });
    expect((await alice.api.get(`/api/me/folders/${dir.id}`)).body.files.map((f: any) => f.id)).toEqual([
      res.body.file.id,
    ]);
  });

  it("rejects a JSON body with 415, creating nothing", async () => {
    const before = (await alice.api.get("/api/me/files")).body.files.length;
    const res = await alice.api.post("/api/v1/files/upload?name=j.md", { content: "x" });
    expectError(res, 415, "unsupported_media_type");
    const octet = expectError(
      await upload(alice, "name=o.md", "x", "application/octet-stream"),
      415,
      "unsupported_media_type",
    );
    expect(octet.message).toContain("application/octet-stream");
    expect((await alice.api.get("/api/me/files")).body.files.length).toBe(before);
  });

  it.each([
    ["a missing name", "", "name"],
    ["an empty name", "name=", "name"],
    ["a name with '/'", `name=${encodeURIComponent("a/b.md")}`, "name"],
    ["a name with NUL", "name=a%00b.md", "name"],
    ["'..'", "name=..", "name"],
    ["4001 characters of context", `name=c.md&context=${"x".repeat(4001)}`, "context"],
    ["17 tags", `name=t.md&tags=${Array.from({ length: 17 }, (_, i) => `t${i}`).join(",")}`, "tags"],
    ["an empty folderId", "name=f.md&folderId=", "folderId"],
  ])("rejects %s with 400 naming the field, creating nothing", async (_label, query, field) => {
    const before = (await alice.api.get("/api/me/files")).body.files.length;
    const err = expectError(await upload(alice, query, "body", "text/plain"), 400, "validation_failed");
    expect(err.message).toContain(field);
    expect((await alice.api.get("/api/me/files")).body.files.length).toBe(before);
  });

  it("404s for an unknown or foreign folderId, and 413s over 5 MiB, creating nothing", async () => {
    const before = (await alice.api.get("/api/me/files")).body.files.length;
    const bobs = await mkdir(bob, { name: "bob-uploads" });
    for (const folderId of ["d_nope", bobs.id]) {
      expectError(await upload(alice, `name=u.md&folderId=${folderId}`, "x", "text/plain"), 404, "not_found");
    }
    expectError(
      await upload(alice, "name=big.txt", "x".repeat(5 * 1024 * 1024 + 1), "text/plain"),
      413,
      "payload_too_large",
    );
    expect((await alice.api.get("/api/me/files")).body.files.length).toBe(before);
    expect((await bob.api.get(`/api/me/folders/${bobs.id}`)).body.files).toEqual([]);
  });
});

describe("import (POST /api/v1/files/import)", () => {
  it("creates nested folders once, files in them, and reuses existing folders", async () => {
    const u = await t.user();
    const existing = await mkdir(u, { name: "existing" });
    const res = await u.api.post("/api/v1/files/import", {
      files: [
        { path: "notes/a.md", content: "A", tags: ["t"] },
        { path: "notes/sub/b.md", content: "B", context: "ctx" },
        { path: "notes/sub/c.txt", content: "C" },
        { path: "top.md", content: "T" },
        { path: "existing/e.md", content: "E" },
        { path: "notes/sub/d.md", content: "D" },
      ],
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.summary).toMatchObject({ created: 6, updated: 0, skipped: 0, foldersCreated: 2 });
    expect(res.body.folders.map((f: any) => f.path)).toEqual(["notes", "notes/sub"]);
    expect(res.body.files.map((f: any) => f.status)).toEqual(Array(6).fill("created"));
    expect(res.text).not.toContain('"content"');
    expect(await folderNames(u)).toEqual(["existing", "notes", "sub"]);

    const [notes, sub] = res.body.folders.map((f: any) => f.id);
    const root = (await u.api.get("/api/v1/folders/root")).body;
    expect(root.folders.map((f: any) => f.id).sort()).toEqual([existing.id, notes].sort());
    expect(root.files.map((f: any) => f.name)).toEqual(["top.md"]);
    const notesDir = (await u.api.get(`/api/me/folders/${notes}`)).body;
    expect(notesDir.files.map((f: any) => [f.name, f.content, f.tags])).toEqual([["a.md", "A", ["t"]]]);
    const subDir = (await u.api.get(`/api/me/folders/${sub}`)).body;
    expect(subDir.parentFolderId).toBe(notes);
    expect(subDir.files.map((f: any) => [f.name, f.content, f.type])).toEqual([
      ["b.md", "B", "md"],
      ["c.txt", "C", "txt"],
      ["d.md", "D", "md"],
    ]);
    expect(subDir.files[0].context).toBe("ctx");
    expect((await u.api.get(`/api/me/folders/${existing.id}`)).body.files.map((f: any) => f.name)).toEqual([
      "e.md",
    ]);

    // a second import reuses every folder
    const again = await u.api.post("/api/v1/files/import", {
      files: [{ path: "notes/sub/new.md" }, { path: "notes/new2.md" }],
    });
    expect(again.body.summary).toMatchObject({ created: 2, foldersCreated: 0 });
    expect(again.body.folders).toEqual([]);
    expect(await folderNames(u)).toEqual(["existing", "notes", "sub"]);
    expect((await u.api.get(`/api/me/folders/${sub}`)).body.fileCount).toBe(4);
  });

  it("imports relative to a base folderId", async () => {
    const u = await t.user();
    const base = await mkdir(u, { name: "base" });
    const res = await u.api.post("/api/v1/files/import", {
      folderId: base.id,
      files: [{ path: "x.md" }, { path: "inner/y.md" }],
    });
    expect(res.status).toBe(200);
    const rd = (await u.api.get(`/api/v1/folders/${base.id}`)).body;
    expect(rd.files.map((f: any) => f.name)).toEqual(["x.md"]);
    expect(rd.folders.map((f: any) => f.name)).toEqual(["inner"]);
    expect((await u.api.get("/api/v1/folders/root")).body.folders.map((f: any) => f.id)).toEqual([base.id]);
  });

  describe("onExisting", () => {
    let u: TestUser;
    let a: any;
    beforeAll(async () => {
      u = await t.user();
      const res = await u.api.post("/api/v1/files/import", {
        files: [{ path: "d/a.md", content: "original", tags: ["keep"] }],
      });
      a = (await u.api.get(`/api/v1/files/${res.body.files[0].id}`)).body;
    });
    const current = async () => (await u.api.get(`/api/v1/files/${a.id}`)).body;

    it("skip leaves the existing file alone", async () => {
      const res = await u.api.post("/api/v1/files/import", {
        onExisting: "skip",
        files: [{ path: "d/a.md", content: "ignored" }],
      });
      expect(res.body.files).toEqual([
        expect.objectContaining({ id: a.id, status: "skipped", etag: a.etag }),
      ]);
      expect(res.body.summary).toMatchObject({ skipped: 1, created: 0 });
      expect(await current()).toMatchObject({ content: "original", etag: a.etag });
    });

    it("fail answers 409 and applies nothing from the whole import", async () => {
      const before = await allFiles(u);
      const folders = await folderNames(u);
      const res = await u.api.post("/api/v1/files/import", {
        onExisting: "fail",
        files: [
          { path: "fresh/new.md", content: "n" },
          { path: "d/other.md" },
          { path: "d/a.md", content: "x" },
        ],
      });
      const err = expectError(res, 409, "conflict");
      expect(err.details).toMatchObject({ index: 2, path: "d/a.md", fileId: a.id });
      expect(await allFiles(u)).toEqual(before);
      expect(await folderNames(u)).toEqual(folders);
    });

    it("fail also catches a duplicate path inside one import", async () => {
      const before = await allFiles(u);
      expectError(
        await u.api.post("/api/v1/files/import", {
          onExisting: "fail",
          files: [{ path: "dup/x.md" }, { path: "dup/x.md" }],
        }),
        409,
        "conflict",
      );
      expect(await allFiles(u)).toEqual(before);
      expect(await folderNames(u)).not.toContain("dup");
    });

    it("copy keeps the existing file and creates the new one beside it under a free name", async () => {
      const res = await u.api.post("/api/v1/files/import", {
        onExisting: "copy",
        files: [
          { path: "d/a.md", content: "copy one" },
          { path: "d/a.md", content: "copy two" },
        ],
      });
      expect(res.status).toBe(200);
      expect(res.body.summary).toMatchObject({ copied: 2, created: 0, updated: 0 });
      const [one, two] = res.body.files;
      expect(one).toMatchObject({ status: "copied", name: "a (1).md", path: "d/a.md" });
      expect(two).toMatchObject({ status: "copied", name: "a (2).md" });
      expect(one.id).not.toBe(a.id);
      expect(await current()).toMatchObject({ content: "original", etag: a.etag });
      const dir = (await u.api.get(`/api/me/folders/${a.folderId}`)).body;
      const byName = Object.fromEntries(dir.files.map((f: any) => [f.name, f.content]));
      expect(byName).toMatchObject({ "a.md": "original", "a (1).md": "copy one", "a (2).md": "copy two" });
      expect(new Set(dir.files.map((f: any) => f.name)).size).toBe(dir.files.length);
      expect(dir.files.find((f: any) => f.name === "a (1).md").type).toBe("md");
    });

    it("update (the default) rewrites the existing file in place; identical content is unchanged", async () => {
      const res = await u.api.post("/api/v1/files/import", {
        files: [{ path: "d/a.md", content: "updated", context: "new ctx" }],
      });
      expect(res.body.files).toEqual([expect.objectContaining({ id: a.id, status: "updated" })]);
      const now = await current();
      expect(now).toMatchObject({ id: a.id, content: "updated", context: "new ctx", tags: ["keep"] });
      expect(now.etag).not.toBe(a.etag);
      const same = await u.api.post("/api/v1/files/import", {
        onExisting: "update",
        files: [{ path: "d/a.md", content: "updated" }],
      });
      expect(same.body.files).toEqual([
        expect.objectContaining({ id: a.id, status: "unchanged", etag: now.etag }),
      ]);
      expect(same.body.summary).toMatchObject({ unchanged: 1, updated: 0 });
    });
  });

  it.each([
    ["a path segment with NUL", { path: "bad/x\u0000y/z.md" }, "files[2].path"],
    ["a '..' segment", { path: "bad/../z.md" }, "files[2].path"],
    ["a too-long name", { path: `bad/${"n".repeat(256)}.md` }, "files[2].path"],
    ["an empty path", { path: "//" }, "files[2].path"],
    ["4001 characters of context", { path: "bad/z.md", context: "x".repeat(4001) }, "files[2].context"],
    ["17 tags", { path: "bad/z.md", tags: Array.from({ length: 17 }, (_, i) => `t${i}`) }, "files[2].tags"],
    ["a tag with a comma", { path: "bad/z.md", tags: ["a,b"] }, "files[2].tags"],
    ["a wrong type", { path: "bad/z.md", content: 5 }, "content"],
    ["an unknown item field", { path: "bad/z.md", owner: "x" }, "owner"],
    ["a bad fileType", { path: "bad/z.md", fileType: "pdf" }, "fileType"],
  ])("an item with %s fails the whole import with 400 (one transaction)", async (_label, item, field) => {
    const u = await t.user();
    const seeded = await u.api.post("/api/v1/files/import", {
      files: [{ path: "keep/old.md", content: "old" }],
    });
    expect(seeded.status).toBe(200);
    const before = await allFiles(u);
    const folders = await folderNames(u);
    const res = await u.api.post("/api/v1/files/import", {
      files: [
        { path: "keep/old.md", content: "overwritten?" }, // would update an existing file
        { path: "brand/new/file.md", content: "new" }, // would create two folders and a file
        item,
      ],
    });
    const err = expectError(res, 400, "validation_failed");
    expect(err.message).toContain(field);
    expect(await allFiles(u)).toEqual(before);
    expect(await folderNames(u)).toEqual(folders);
  });

  it.each([
    ["an empty files array", { files: [] }, "files"],
    ["no files", {}, "files"],
    ["files as an object", { files: { path: "a.md" } }, "files"],
    ["a bad onExisting", { files: [{ path: "a.md" }], onExisting: "merge" }, "onExisting"],
    ["an empty folderId", { files: [{ path: "a.md" }], folderId: "" }, "folderId"],
    ["an unknown field", { files: [{ path: "a.md" }], atomic: false }, "atomic"],
  ])("rejects %s with 400, importing nothing", async (_label, body, field) => {
    const u = await t.user();
    const err = expectError(await u.api.post("/api/v1/files/import", body), 400, "validation_failed");
    expect(err.message).toContain(field);
    expect((await u.api.get("/api/me/files")).body).toMatchObject({ files: [], folders: [] });
  });

  it("404s for an unknown or foreign base folder, importing nothing", async () => {
    const u = await t.user();
    const bobs = await mkdir(bob, { name: "bob-import-target" });
    for (const folderId of ["d_nope", bobs.id]) {
      expectError(
        await u.api.post("/api/v1/files/import", { folderId, files: [{ path: "sub/a.md" }] }),
        404,
        "not_found",
      );
    }
    expect((await u.api.get("/api/me/files")).body).toMatchObject({ files: [], folders: [] });
    expect((await bob.api.get(`/api/v1/folders/${bobs.id}`)).body).toMatchObject({ folders: [], files: [] });
  });
});

describe("GET /api/me and GET /api/me/files", () => {
  it("GET /api/me: user, null identity, folders, and root files without bodies", async () => {
    const u = await t.user();
    const dir = await mkdir(u, { name: "docs", context: "c" });
    const sub = await mkdir(u, { name: "inner", parentFolderId: dir.id });
    const rootFile = await mkfile(u, { name: "readme.md", content: "root body" });
    await mkfile(u, { name: "inside.md", folderId: dir.id, content: "folder body" });
    await mkfile(bob, { name: "bobs-root.md" });
    const res = await u.api.get("/api/me");
    expect(res.status).toBe(200);
    expect(res.body.user).toEqual({ id: u.id, email: u.email, name: expect.any(String) });
    expect(res.body.identity).toBeNull();
    expect(res.body.folders.map((f: any) => [f.id, f.parentFolderId, f.fileCount])).toEqual([
      [dir.id, null, 1],
      [sub.id, dir.id, 0],
    ]);
    expect(res.body.folders[0]).toMatchObject({ name: "docs", context: "c" });
    expect(res.body.folders[0]).not.toHaveProperty("files");
    expect(res.body.rootFiles.map((f: any) => f.id)).toEqual([rootFile.id]);
    expect(res.body.rootFiles[0]).not.toHaveProperty("content");
    expect(res.text).not.toContain("root body");
    expect(res.text).not.toContain("folder body");
    expect(res.headers.get("api-version")).toBe("v1");
    expect(res.headers.get("ratelimit-limit")).toMatch(/^\d+$/);
    expectError(await t.client().get("/api/me"), 401, "unauthenticated");
  });

  it("GET /api/me/files: every file and folder without bodies, plus a feed cursor to follow", async () => {
    const u = await t.user();
    const dir = await mkdir(u, { name: "idx" });
    const a = await mkfile(u, { name: "a.md", content: "body a" });
    const b = await mkfile(u, { name: "b.md", folderId: dir.id, content: "body b" });
    await mkfile(bob, { name: "not-mine.md" });
    const res = await u.api.get("/api/me/files");
    expect(res.status).toBe(200);
    expect(res.body.files.map((f: any) => f.id)).toEqual([a.id, b.id]);
    expect(res.body.files.map((f: any) => f.folderId)).toEqual([null, dir.id]);
    for (const f of res.body.files) expect(f).not.toHaveProperty("content");
    expect(res.text).not.toContain("body a");
    expect(res.body.folders.map((f: any) => [f.id, f.fileCount])).toEqual([[dir.id, 1]]);
    expect(Number.isInteger(res.body.cursor)).toBe(true);
    expect(res.body.cursor).toBeGreaterThan(0);

    // following the feed from the cursor shows exactly what happened since
    const head = await u.api.get(`/api/v1/changes?cursor=${res.body.cursor}`);
    expect(head.body.changes).toEqual([]);
    const c = await mkfile(u, { name: "c.md" });
    const next = await u.api.get(`/api/v1/changes?cursor=${res.body.cursor}`);
    expect(next.body.changes.map((x: any) => x.id)).toEqual([c.id]);
    expect((await u.api.get("/api/me/files")).body.cursor).toBeGreaterThan(res.body.cursor);
  });
});

describe("empty folder ids are rejected, not read as the root", () => {
  it("create and write of a file with folderId '' answer 400 and change nothing", async () => {
    const u = await t.user();
    const dir = await mkdir(u, { name: "home" });
    const f = await mkfile(u, { name: "stay.md", folderId: dir.id });
    const create = expectError(
      await u.api.post("/api/v1/files", { name: "n.md", folderId: "" }),
      400,
      "validation_failed",
    );
    expect(create.message).toContain("folderId");
    expectError(await u.api.put(`/api/v1/files/${f.id}`, { folderId: "" }), 400, "validation_failed");
    expect((await u.api.get(`/api/v1/files/${f.id}`)).body).toMatchObject({ folderId: dir.id, etag: f.etag });
    expect((await u.api.get("/api/me/files")).body.files).toHaveLength(1);
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, mkfile, startTestServer, type TestServer, type TestUser } from "../helpers/server.ts";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

async function state(u: TestUser) {
  const res = await u.api.get("/api/me/files");
  return {
    files: res.body.files.map((f: any) => [f.name, f.etag]).sort(),
    folders: res.body.folders.map((f: any) => f.name).sort(),
    cursor: res.body.cursor,
  };
}

describe("batch", () => {
  it("applies operations in order; later ones refer to earlier results", async () => {
    const u = await t.user();
    const old = await mkfile(u, { name: "old.md", content: "old" });
    const res = await u.api.post("/api/v1/batch", {
      operations: [
        { id: "dir", op: "folder.create", body: { name: "Research" } },
        { id: "n", op: "file.create", body: { name: "n.md", content: "one", folderId: { ref: "dir" } } },
        { id: "w", op: "file.update", target: { ref: "n" }, body: { content: "two", tags: ["x"] } },
        {
          id: "mv",
          op: "file.update",
          target: old.id,
          ifMatch: old.etag,
          body: { name: "moved.md", folderId: { ref: "dir" } },
        },
        {
          id: "c",
          op: "connection.create",
          target: { ref: "n" },
          body: { targetFileId: old.id, reason: "r" },
        },
        { id: "sub", op: "folder.create", body: { name: "sub", parentFolderId: { ref: "dir" } } },
        { id: "rm", op: "folder.delete", target: { ref: "sub" } },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.results.map((r: any) => [r.id, r.status])).toEqual([
      ["dir", 201],
      ["n", 201],
      ["w", 200],
      ["mv", 200],
      ["c", 200],
      ["sub", 201],
      ["rm", 200],
    ]);
    const dirId = res.body.results[0].itemId;
    const n = res.body.results[2];
    expect(n.body.file).toMatchObject({ name: "n.md", folderId: dirId, tags: ["x"] });
    expect(n.body.file.content).toBeUndefined();
    const read = await u.api.get(`/api/v1/files/${n.itemId}`);
    expect(read.body.content).toBe("two");
    expect(read.headers.get("etag")).toBe(n.etag);
    expect((await u.api.get(`/api/v1/files/${old.id}`)).body).toMatchObject({
      name: "moved.md",
      folderId: dirId,
    });
    // the seq range covers the batch's own changes in the feed, in order
    const feed = await u.api.get(`/api/v1/changes?cursor=${res.body.seq.from - 1}`);
    expect(feed.body.changes.at(-1).seq).toBe(res.body.seq.to);
    const seqs = res.body.results.filter((r: any) => r.seq).map((r: any) => r.seq);
    expect(seqs).toEqual([...seqs].sort((a: number, b: number) => a - b));
  });

  it("is atomic: a failing operation rolls back the ones before it", async () => {
    const u = await t.user();
    const a = await mkfile(u, { name: "a.md", content: "a" });
    const before = await state(u);
    const res = await u.api.post("/api/v1/batch", {
      operations: [
        { id: "x", op: "file.create", body: { name: "x.md", content: "x" } },
        { id: "d", op: "folder.create", body: { name: "D" } },
        { id: "u", op: "file.update", target: a.id, body: { content: "changed" } },
        { id: "bad", op: "file.update", target: a.id, ifMatch: a.etag, body: { content: "stale" } },
      ],
    });
    const e = expectError(res, 412, "precondition_failed");
    expect(e.details[0]).toMatchObject({ operationId: "bad", index: 3, code: "precondition_failed" });
    expect(e.details[0].currentEtag).toBeTruthy();
    expect(await state(u)).toEqual(before);
    expect((await u.api.get(`/api/v1/files/${a.id}`)).body.content).toBe("a");
    // a limit breach, an unknown target and a bad ref also roll everything back
    for (const [op, status, code] of [
      [
        {
          op: "file.create",
          body: {
            name: "t.md",
            tags: Array(20)
              .fill("t")
              .map((x, i) => x + i),
          },
        },
        400,
        "validation_failed",
      ],
      [{ op: "file.delete", target: "f_nope" }, 404, "not_found"],
      [{ op: "file.update", target: { ref: "later" }, body: {} }, 400, "validation_failed"],
    ] as const) {
      const r = await u.api.post("/api/v1/batch", {
        operations: [{ id: "x", op: "file.create", body: { name: "x.md" } }, op],
      });
      expectError(r, status, code);
      expect(await state(u)).toEqual(before);
    }
  });

  it("non-atomic: each operation stands alone, dependents of a failure get 424", async () => {
    const u = await t.user();
    const res = await u.api.post("/api/v1/batch", {
      atomic: false,
      operations: [
        { id: "ok", op: "file.create", body: { name: "ok.md" } },
        { id: "bad", op: "folder.create", body: { name: "a/b" } },
        { id: "dep", op: "file.create", body: { name: "in.md", folderId: { ref: "bad" } } },
        { id: "ok2", op: "file.update", target: { ref: "ok" }, body: { content: "2" } },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.results.map((r: any) => [r.id, r.status, r.error?.code])).toEqual([
      ["ok", 201, undefined],
      ["bad", 400, "validation_failed"],
      ["dep", 424, "failed_dependency"],
      ["ok2", 200, undefined],
    ]);
    expect((await state(u)).files.map((f: string[]) => f[0])).toEqual(["ok.md"]);
  });

  it("replays with Idempotency-Key instead of applying twice", async () => {
    const u = await t.user();
    const body = { operations: [{ op: "file.create", body: { name: "once.md", content: "1" } }] };
    const h = { "idempotency-key": "batch-1" };
    const first = await u.api.post("/api/v1/batch", body, h);
    const again = await u.api.post("/api/v1/batch", body, h);
    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
    expect((await state(u)).files).toHaveLength(1);
    expectError(
      await u.api.post("/api/v1/batch", { operations: [{ op: "folder.create", body: { name: "z" } }] }, h),
      422,
      "idempotency_key_reused",
    );
  });

  it("rejects bad input with nothing changed: schema, size, scope", async () => {
    const u = await t.user();
    const before = await state(u);
    const e = expectError(
      await u.api.post("/api/v1/batch", {
        operations: [{ op: "file.create", body: { name: "a.md", color: "red" } }],
      }),
      400,
      "validation_failed",
    );
    expect(e.details[0].field).toBe("operations[0].body.color");
    expectError(
      await u.api.post("/api/v1/batch", { operations: [{ op: "file.explode" }] }),
      400,
      "validation_failed",
    );
    expectError(await u.api.post("/api/v1/batch", { operations: [] }), 400, "validation_failed");
    const many = Array.from({ length: 101 }, (_, i) => ({ op: "file.create", body: { name: `${i}.md` } }));
    expectError(await u.api.post("/api/v1/batch", { operations: many }), 413, "payload_too_large");
    const big = "x".repeat(4 * 1024 * 1024);
    const huge = [1, 2, 3].map((i) => ({ op: "file.create", body: { name: `${i}.md`, content: big } }));
    expectError(await u.api.post("/api/v1/batch", { operations: huge }), 413, "payload_too_large");
    const dup = [
      { id: "a", op: "file.create", body: { name: "1.md" } },
      { id: "a", op: "file.create", body: { name: "2.md" } },
    ];
    expectError(await u.api.post("/api/v1/batch", { operations: dup }), 400, "validation_failed");
    const filesOnly = await t.user(undefined, ["files:read", "files:write"]);
    const r = await filesOnly.api.post("/api/v1/batch", {
      operations: [
        { op: "file.create", body: { name: "f.md" } },
        { op: "folder.create", body: { name: "d" } },
      ],
    });
    expectError(r, 403, "insufficient_scope");
    expect((await filesOnly.api.get("/api/me/files")).body.files).toHaveLength(0);
    expect(await state(u)).toEqual(before);
  });
});

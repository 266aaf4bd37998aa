import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { purgeTombstones } from "../../src/server/domain/feed.ts";
import { expectError, startTestServer, type TestServer, type TestUser } from "../helpers/server.ts";

let t: TestServer;

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

interface Change {
  seq: number;
  kind: string;
  id: string;
  deleted: boolean;
  reason?: string;
  file?: { name: string; folderId: string | null; etag: string; content?: string };
  folder?: { name: string; parentFolderId: string | null; fileCount: number };
}

async function feed(u: TestUser, cursor: number | string, extra = "") {
  const res = await u.api.get(`/api/v1/changes?cursor=${cursor}${extra}`);
  expect(res.status).toBe(200);
  return res.body as { changes: Change[]; cursor: number; hasMore: boolean };
}

describe("change feed", () => {
  it("records creates, updates and deletes in order, with tombstones, never bodies", async () => {
    const u = await t.user();
    const start = await feed(u, 0);
    expect(start).toEqual({ changes: [], cursor: 0, hasMore: false });
    const { file } = (await u.api.post("/api/v1/files", { name: "a.md", content: "secret body" })).body;
    const { folder } = (await u.api.post("/api/v1/folders", { name: "dir" })).body;
    const upd = await u.api.put(`/api/v1/files/${file.id}`, { folderId: folder.id });
    const page = await feed(u, 0);
    // one row per item at its latest state: the file appears once, after the folder
    expect(page.changes.map((c) => [c.kind, c.id])).toEqual([
      ["folder", folder.id],
      ["file", file.id],
    ]);
    expect(page.changes[1]!.file).toMatchObject({
      name: "a.md",
      folderId: folder.id,
      etag: upd.body.file.etag,
    });
    expect(JSON.stringify(page)).not.toContain("secret body");
    expect(page.changes[0]!.seq).toBeLessThan(page.changes[1]!.seq);
    const cursor = page.cursor;

    await u.api.delete(`/api/v1/files/${file.id}`);
    const after = await feed(u, cursor);
    expect(after.changes).toHaveLength(1);
    expect(after.changes[0]).toMatchObject({ kind: "file", id: file.id, deleted: true, reason: "deleted" });
    expect(after.changes[0]!.file).toBeUndefined();
    // from 0 a new client gets the state, without tombstones
    expect((await feed(u, 0)).changes.map((c) => c.id)).toEqual([folder.id]);
    // nothing new: same cursor back
    const idle = await feed(u, after.cursor);
    expect(idle).toEqual({ changes: [], cursor: after.cursor, hasMore: false });
  });

  it("is per account: another user's changes never show", async () => {
    const a = await t.user();
    const b = await t.user();
    await a.api.post("/api/v1/files", { name: "mine.md" });
    expect((await feed(b, 0)).changes).toHaveLength(0);
  });

  it("pages with limit and hasMore, each change exactly once", async () => {
    const u = await t.user();
    for (let i = 0; i < 7; i++) await u.api.post("/api/v1/files", { name: `n${i}.md` });
    const seen: string[] = [];
    let cursor = 0;
    for (;;) {
      const page = await feed(u, cursor, "&limit=3");
      seen.push(...page.changes.map((c) => c.file!.name));
      cursor = page.cursor;
      if (!page.hasMore) break;
    }
    expect(seen).toEqual(["n0.md", "n1.md", "n2.md", "n3.md", "n4.md", "n5.md", "n6.md"]);
  });

  it("folder delete publishes the children's moves before the folder's tombstone", async () => {
    const u = await t.user();
    const { folder: outer } = (await u.api.post("/api/v1/folders", { name: "outer" })).body;
    const { folder: inner } = (
      await u.api.post("/api/v1/folders", { name: "inner", parentFolderId: outer.id })
    ).body;
    const { file } = (await u.api.post("/api/v1/files", { name: "f.md", folderId: inner.id })).body;
    const { folder: sub } = (await u.api.post("/api/v1/folders", { name: "sub", parentFolderId: inner.id }))
      .body;
    const { cursor } = await feed(u, 0);
    await u.api.delete(`/api/v1/folders/${inner.id}`);
    const { changes } = await feed(u, cursor);
    const order = changes.map((c) => c.id);
    expect(order.indexOf(inner.id)).toBe(changes.length - 1);
    expect(changes.find((c) => c.id === file.id)!.file!.folderId).toBe(outer.id);
    expect(changes.find((c) => c.id === sub.id)!.folder!.parentFolderId).toBe(outer.id);
    expect(changes.at(-1)).toMatchObject({ deleted: true, kind: "folder" });
  });

  it("reports current fileCount on folder records", async () => {
    const u = await t.user();
    const { folder } = (await u.api.post("/api/v1/folders", { name: "c" })).body;
    await u.api.post("/api/v1/files", { name: "1.md", folderId: folder.id });
    await u.api.post("/api/v1/files", { name: "2.md", folderId: folder.id });
    const rec = (await feed(u, 0)).changes.find((c) => c.id === folder.id)!;
    expect(rec.folder!.fileCount).toBe(2);
  });

  it("cursor=latest returns the head with no changes", async () => {
    const u = await t.user();
    await u.api.post("/api/v1/files", { name: "x.md" });
    await u.api.post("/api/v1/files", { name: "y.md" });
    const latest = await feed(u, "latest");
    expect(latest.changes).toEqual([]);
    expect(latest.cursor).toBe(2);
  });

  it.each([["abc"], ["-1"], ["1.5"], ["99999"]])(
    "rejects cursor=%s with 400 invalid_cursor",
    async (cursor) => {
      const u = await t.user();
      expectError(await u.api.get(`/api/v1/changes?cursor=${cursor}`), 400, "invalid_cursor");
    },
  );

  it("rejects bad limit and wait values", async () => {
    const u = await t.user();
    expectError(await u.api.get("/api/v1/changes?cursor=0&limit=0"), 400, "validation_failed");
    expectError(await u.api.get("/api/v1/changes?cursor=0&limit=5000"), 400, "validation_failed");
    expectError(await u.api.get("/api/v1/changes?cursor=0&wait=61"), 400, "validation_failed");
  });

  it("a cursor older than the retained tombstones answers 410 cursor_expired", async () => {
    const u = await t.user();
    const { file } = (await u.api.post("/api/v1/files", { name: "old.md" })).body;
    const { cursor } = await feed(u, 0);
    await u.api.delete(`/api/v1/files/${file.id}`);
    await u.api.post("/api/v1/files", { name: "later.md" });
    // purge with a retention of -1 days: every tombstone so far is "old"
    await t.server.store.transaction((tx) => purgeTombstones(tx, -1));
    const err = expectError(await u.api.get(`/api/v1/changes?cursor=${cursor}`), 410, "cursor_expired");
    expect(err.resolution).toMatch(/cursor=0/);
    // restarting from 0 works and holds the current state
    expect((await feed(u, 0)).changes.map((c) => c.file!.name)).toEqual(["later.md"]);
  });

  it("long-polls: wait returns as soon as a change commits", async () => {
    const u = await t.user();
    const { cursor } = await feed(u, "latest");
    const started = Date.now();
    const pending = u.api.get(`/api/v1/changes?cursor=${cursor}&wait=20`);
    await new Promise((r) => setTimeout(r, 300));
    await u.api.post("/api/v1/files", { name: "wake.md" });
    const res = await pending;
    expect(res.body.changes.map((c: Change) => c.file!.name)).toEqual(["wake.md"]);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("long-polls: with nothing happening, answers empty after the wait", async () => {
    const u = await t.user();
    const started = Date.now();
    const res = await u.api.get("/api/v1/changes?cursor=latest&wait=1");
    expect(res.status).toBe(200);
    expect(res.body.changes).toEqual([]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, mkfile, startTestServer, type TestServer, type TestUser } from "../helpers/server.ts";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

async function device(u: TestUser, name: string) {
  return (await u.api.post("/api/v1/devices", { name, platform: "linux" })).body.device.id as string;
}

describe("sync", () => {
  it("two clients: pushes apply, stale bases conflict (never dropped), pulls skip own echoes", async () => {
    const u = await t.user();
    const a = await device(u, "laptop");
    const b = await device(u, "phone");
    const note = await mkfile(u, { name: "note.md", content: "v1" });
    const other = await mkfile(u, { name: "other.md", content: "o" });
    // both clients are caught up
    const startA = (await u.api.post("/api/v1/sync", { deviceId: a, cursor: 0 })).body;
    expect(startA.changes.map((c: any) => c.id).sort()).toEqual([note.id, other.id].sort());
    const startB = (await u.api.post("/api/v1/sync", { deviceId: b, cursor: 0 })).body;

    // A edits note and creates a file; it gets no echo of them
    const pushA = await u.api.post("/api/v1/sync", {
      deviceId: a,
      cursor: startA.cursor,
      push: [
        { id: "e", op: "file.update", target: note.id, baseEtag: note.etag, body: { content: "from A" } },
        { id: "n", op: "file.create", body: { name: "new.md", content: "A's" } },
      ],
    });
    expect(pushA.status).toBe(200);
    expect(pushA.body.pushResults.map((r: any) => [r.id, r.status])).toEqual([
      ["e", 200],
      ["n", 201],
    ]);
    expect(pushA.body.changes).toEqual([]);
    expect(pushA.body.conflicts).toBe(0);

    // B edits the same note from the old base, asks for a copy; and deletes `other` from a stale base
    await u.api.put(`/api/v1/files/${other.id}`, { tags: ["moved-on"] });
    const pushB = await u.api.post("/api/v1/sync", {
      deviceId: b,
      cursor: startB.cursor,
      push: [
        {
          id: "e",
          op: "file.update",
          target: note.id,
          baseEtag: note.etag,
          body: { content: "from B" },
          onConflict: "copy",
        },
        { id: "d", op: "file.delete", target: other.id, baseEtag: other.etag },
        { id: "x", op: "file.update", target: note.id, baseEtag: note.etag, body: { content: "B again" } },
      ],
    });
    expect(pushB.status).toBe(200);
    const [e, d, x] = pushB.body.pushResults;
    expect(pushB.body.conflicts).toBe(3);
    expect(e).toMatchObject({
      status: 409,
      error: { code: "conflict" },
      conflict: { reason: "changed_remotely" },
    });
    expect(e.conflict.currentEtag).toBe(pushA.body.pushResults[0].etag);
    expect(e.conflict.copy.name).toMatch(/^note \(conflicted copy phone \d{4}-\d\d-\d\d \d{6}\)\.md$/);
    expect(d).toMatchObject({ status: 409, conflict: { reason: "changed_remotely" } });
    expect(x).toMatchObject({ status: 409, error: { code: "conflict" } });
    expect(x.conflict.copy).toBeUndefined();
    // both sides kept: A's content stays, B's is in the copy, `other` is not deleted
    expect((await u.api.get(`/api/v1/files/${note.id}`)).body.content).toBe("from A");
    expect((await u.api.get(`/api/v1/files/${e.conflict.copy.id}`)).body.content).toBe("from B");
    expect((await u.api.get(`/api/v1/files/${other.id}`)).status).toBe(200);
    // B pulls A's changes and the tag change, but not its own copy's creation
    const ids = pushB.body.changes.map((c: any) => c.id);
    expect(ids).toEqual(expect.arrayContaining([note.id, other.id, pushA.body.pushResults[1].itemId]));
    expect(ids).not.toContain(e.conflict.copy.id);
    // A pulls B's copy
    const pullA = (await u.api.post("/api/v1/sync", { deviceId: a, cursor: pushA.body.cursor })).body;
    expect(pullA.changes.map((c: any) => c.id)).toEqual(
      expect.arrayContaining([e.conflict.copy.id, other.id]),
    );
    // the device cursor follows the sync
    const dev = (await u.api.get(`/api/v1/devices/${a}`)).body.device;
    expect(dev.cursor).toBe(pullA.cursor);

    // an edit of a file deleted remotely is a conflict too, and a copy keeps it
    await u.api.delete(`/api/v1/files/${other.id}`);
    const gone = await u.api.post("/api/v1/sync", {
      deviceId: a,
      cursor: pullA.cursor,
      push: [
        {
          op: "file.update",
          target: other.id,
          body: { name: "other.md", content: "keep me" },
          onConflict: "copy",
        },
      ],
    });
    const g = gone.body.pushResults[0];
    expect(g).toMatchObject({ status: 409, conflict: { reason: "deleted_remotely" } });
    expect((await u.api.get(`/api/v1/files/${g.conflict.copy.id}`)).body.content).toBe("keep me");
    expect(gone.body.changes.find((c: any) => c.id === other.id)).toMatchObject({ deleted: true });
  });

  it("rejects a bad cursor, device or push with nothing applied", async () => {
    const u = await t.user();
    const before = (await u.api.get("/api/me/files")).body;
    const push = [{ op: "file.create", body: { name: "never.md" } }];
    expectError(await u.api.post("/api/v1/sync", { cursor: "abc", push }), 400, "invalid_cursor");
    expectError(await u.api.post("/api/v1/sync", { cursor: 999999, push }), 400, "invalid_cursor");
    expectError(await u.api.post("/api/v1/sync", { cursor: 0, deviceId: "dv_nope", push }), 404, "not_found");
    expectError(
      await u.api.post("/api/v1/sync", { cursor: 0, push: [{ op: "file.create", body: { nam: "x" } }] }),
      400,
      "validation_failed",
    );
    const many = Array.from({ length: 501 }, (_, i) => ({ op: "file.create", body: { name: `${i}.md` } }));
    expectError(await u.api.post("/api/v1/sync", { cursor: 0, push: many }), 413, "payload_too_large");
    expect((await u.api.get("/api/me/files")).body).toEqual(before);
    // cursor=latest: from now on
    const latest = (await u.api.post("/api/v1/sync", { cursor: "latest" })).body;
    expect(latest).toMatchObject({ changes: [], cursor: before.cursor, hasMore: false, pushResults: [] });
    // pull only needs files:read; a push needs files:write per change
    const reader = await t.user(undefined, ["files:read"]);
    const r = await reader.api.post("/api/v1/sync", { cursor: 0, push });
    expect(r.status).toBe(200);
    expect(r.body.pushResults[0]).toMatchObject({ status: 403, error: { code: "insufficient_scope" } });
    expect((await reader.api.get("/api/me/files")).body.files).toEqual([]);
  });
});

// An extension of the spec (docs/api.md, "Appends"): `file.append` adds bytes at the end of
// whatever version the file has, so a writer that only appends never reads it and never conflicts.
describe("file.append", () => {
  it("appends to the current version without a base; with a stale one it conflicts, changing nothing", async () => {
    const u = await t.user();
    const note = await mkfile(u, { name: "log.md", content: "one\n" });
    await u.api.put(`/api/v1/files/${note.id}`, { content: "one\nremote\n" }); // the appender never saw it
    const r = await u.api.post("/api/v1/sync", {
      cursor: "latest",
      push: [{ id: "a", op: "file.append", target: note.id, body: { content: "two\n" } }],
    });
    expect(r.status).toBe(200);
    expect(r.body.pushResults[0].status).toBe(200);
    expect(r.body.pushResults[0].body.file.size).toBe("one\nremote\ntwo\n".length);
    const after = await u.api.get(`/api/v1/files/${note.id}`);
    expect(after.body.content).toBe("one\nremote\ntwo\n");

    const stale = await u.api.post("/api/v1/sync", {
      cursor: "latest",
      push: [{ id: "b", op: "file.append", target: note.id, baseEtag: note.etag, body: { content: "x" } }],
    });
    expect(stale.body.pushResults[0]).toMatchObject({
      status: 409,
      conflict: { reason: "changed_remotely" },
    });
    expect((await u.api.get(`/api/v1/files/${note.id}`)).body.content).toBe("one\nremote\ntwo\n");
  });

  it("to a deleted file: a conflict saying so; an empty or missing tail and a note past its limit are refused", async () => {
    const u = await t.user();
    const gone = await mkfile(u, { name: "gone.md", content: "g" });
    await u.api.delete(`/api/v1/files/${gone.id}`);
    const r = await u.api.post("/api/v1/sync", {
      cursor: "latest",
      push: [{ id: "a", op: "file.append", target: gone.id, body: { content: "x" } }],
    });
    expect(r.body.pushResults[0]).toMatchObject({ status: 409, conflict: { reason: "deleted_remotely" } });

    const note = await mkfile(u, { name: "n.md", content: "n" });
    for (const body of [{ content: "" }, {}, { content: "x", name: "other.md" }]) {
      const bad = await u.api.post("/api/v1/sync", {
        cursor: "latest",
        push: [{ op: "file.append", target: note.id, body }],
      });
      expect(bad.status).toBe(400);
    }
    const big = await u.api.post("/api/v1/batch", {
      operations: [{ op: "file.append", target: note.id, body: { content: "x".repeat(5 * 1024 * 1024) } }],
    });
    expect(big.body.results?.[0]?.status ?? big.status).toBe(413);
    expect((await u.api.get(`/api/v1/files/${note.id}`)).body.content).toBe("n");
  });
});

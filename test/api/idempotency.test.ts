import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, startTestServer, type TestServer, type TestUser } from "../helpers/server.ts";

let t: TestServer;
let alice: TestUser;

beforeAll(async () => {
  t = await startTestServer();
  alice = await t.user();
});
afterAll(() => t.close());

const count = async (u: TestUser) => (await u.api.get("/api/me/files")).body.files.length as number;

describe("Idempotency-Key", () => {
  it("a retried create returns the saved response and creates one file", async () => {
    const before = await count(alice);
    const headers = { "idempotency-key": "create-1" };
    const first = await alice.api.post("/api/v1/files", { name: "once.md", content: "x" }, headers);
    const again = await alice.api.post("/api/v1/files", { name: "once.md", content: "x" }, headers);
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.headers.get("location")).toBe(first.headers.get("location"));
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    expect(await count(alice)).toBe(before + 1);
  });

  it("the same key with another body -> 422 idempotency_key_reused, nothing created", async () => {
    const before = await count(alice);
    await alice.api.post("/api/v1/files", { name: "k2.md" }, { "idempotency-key": "k2" });
    const res = await alice.api.post("/api/v1/files", { name: "different.md" }, { "idempotency-key": "k2" });
    expectError(res, 422, "idempotency_key_reused");
    expect(await count(alice)).toBe(before + 1);
  });

  it("the 422 names what the key's first request made (a client whose answer was lost finds it), without its text", async () => {
    const first = await alice.api.post(
      "/api/v1/files",
      { name: "k3.md", content: "first" },
      { "idempotency-key": "k3" },
    );
    const res = await alice.api.post(
      "/api/v1/files",
      { name: "k3.md", content: "newer" },
      { "idempotency-key": "k3" },
    );
    expectError(res, 422, "idempotency_key_reused");
    const original = res.body.error.details.original;
    expect(original.status).toBe(201);
    const { content, ...made } = first.body.file;
    expect(content).toBe("first");
    expect(original.body.file).toEqual(made);
    expect((await alice.api.get(`/api/v1/files/${made.id}`)).body.content).toBe("first");
  });

  it("keys are scoped to the caller: another user's identical key is a new request", async () => {
    const bob = await t.user();
    await alice.api.post("/api/v1/files", { name: "shared-key.md" }, { "idempotency-key": "same" });
    const res = await bob.api.post("/api/v1/files", { name: "shared-key.md" }, { "idempotency-key": "same" });
    expect(res.status).toBe(201);
    expect(res.headers.get("idempotent-replayed")).toBeNull();
    expect(await count(bob)).toBe(1);
  });

  it("a failed request stores nothing: fixing it and retrying with the same key works", async () => {
    const bad = await alice.api.post("/api/v1/files", { name: "" }, { "idempotency-key": "fixme" });
    expectError(bad, 400, "validation_failed");
    const good = await alice.api.post("/api/v1/files", { name: "fixed.md" }, { "idempotency-key": "fixme" });
    expect(good.status).toBe(201);
  });

  it("replays updates too (the second PUT does not apply again)", async () => {
    const { file } = (await alice.api.post("/api/v1/files", { name: "upd.md", content: "a" })).body;
    const h = { "idempotency-key": "put-1", "if-match": file.etag };
    const first = await alice.api.put(`/api/v1/files/${file.id}`, { content: "b" }, h);
    const replay = await alice.api.put(`/api/v1/files/${file.id}`, { content: "b" }, h);
    expect(first.status).toBe(200);
    expect(replay.status).toBe(200); // not 412, although the If-Match tag is stale by now
    expect(replay.body.file.etag).toBe(first.body.file.etag);
  });

  it("concurrent requests with one key apply once", async () => {
    const before = await count(alice);
    const results = await Promise.all(
      Array.from({ length: 8 }, () =>
        alice.api.post("/api/v1/files", { name: "race.md" }, { "idempotency-key": "race" }),
      ),
    );
    for (const r of results) expect([201, 409]).toContain(r.status);
    const ids = new Set(results.filter((r) => r.status === 201).map((r) => r.body.file.id));
    expect(ids.size).toBe(1);
    for (const r of results.filter((r) => r.status === 409)) {
      expectError(r, 409, "idempotency_key_in_use");
      expect(r.headers.get("retry-after")).toBe("1");
    }
    expect(await count(alice)).toBe(before + 1);
  });

  it("rejects malformed keys with 400", async () => {
    const res = await alice.api.post(
      "/api/v1/files",
      { name: "x.md" },
      { "idempotency-key": "x".repeat(256) },
    );
    expectError(res, 400, "invalid_idempotency_key");
  });

  it("accepts the draft's quoted form", async () => {
    const a = await alice.api.post("/api/v1/files", { name: "q.md" }, { "idempotency-key": '"quoted-1"' });
    const b = await alice.api.post("/api/v1/files", { name: "q.md" }, { "idempotency-key": "quoted-1" });
    expect(b.body.file.id).toBe(a.body.file.id);
  });
});

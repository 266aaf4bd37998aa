// Ideation over a stand-in OpenAI-compatible provider on loopback: who may use the brain (plans, own
// keys, scopes), what reaches the provider (only what the caller can see), and every failure status
// leaving the store unchanged.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { operatorOf, setAiKey, setPlan, snapshot } from "../helpers/brain.ts";
import { type FakeOpenAi, startFakeOpenAi } from "../helpers/fakeOpenAi.ts";
import {
  expectError,
  mkdir,
  mkfile,
  startTestServer,
  type TestServer,
  type TestUser,
} from "../helpers/server.ts";

let fake: FakeOpenAi;
let t: TestServer;
let pro: TestUser;
let free: TestUser;
let other: TestUser;

beforeAll(async () => {
  fake = await startFakeOpenAi();
  t = await startTestServer({ brain: { ...operatorOf(fake), deadlineMs: 3000 } });
  pro = await t.user();
  free = await t.user();
  other = await t.user();
  await setPlan(t, pro, "pro");
});
afterAll(async () => {
  await t.close();
  await fake.close();
});
beforeEach(() => fake.reset());

describe("who may ideate", () => {
  it("a free account without a key gets 402 ai_key_required naming the key page, and nothing changes", async () => {
    await mkfile(free, { name: "a.md", content: "gardening notes" });
    const before = await snapshot(free);
    const status = (await free.api.get("/api/me/ideation")).body;
    expect(status).toMatchObject({
      canExplore: false,
      plan: "free",
      hasUserKey: false,
      operatorProvider: true,
    });
    expect(status.reason).toMatch(/free plan/);
    for (const path of ["/api/me/ideation", "/api/v1/ideation"]) {
      const e = expectError(await free.api.post(path, { seed: "tomatoes" }), 402, "ai_key_required");
      expect(e.resolution).toContain("/keys");
      expect(e.resolution).toContain("PUT /api/me/vault/ai-key");
    }
    expect(fake.requests).toHaveLength(0);
    expect(await snapshot(free)).toEqual(before);
  });

  it("a pro account is served by the operator's provider: a real note with folder, tags, connections and reasons", async () => {
    const a = await mkfile(pro, {
      name: "tomatoes.md",
      content: "Tomatoes need sun and deep watering.",
      tags: ["garden"],
    });
    const b = await mkfile(pro, { name: "basil.md", content: "Basil grows well beside tomatoes." });
    await mkfile(pro, { name: "taxes.md", content: "Quarterly tax dates." });
    const res = await pro.api.post("/api/v1/ideation", { seed: "companion planting for tomatoes" });
    expect(res.status, res.text).toBe(201);
    expect(res.headers.get("location")).toBe(`/api/v1/files/${res.body.note.id}`);
    const body = res.body;
    expect(body.note).toMatchObject({
      name: "Growing companion planting for tomatoes.md",
      type: "md",
      tags: ["idea"],
    });
    expect(body.folder).toMatchObject({ name: "Ideas" });
    expect(body.folderCreated).toBe(true);
    expect(body.note.folderId).toBe(body.folder.id);
    expect(body.provider).toEqual({ host: new URL(fake.url).host, source: "operator", model: "fake-chat" });
    // The most related notes were sent (full-text ranking), and each connection has its reason.
    const sent = body.sentNotes.map((n: any) => n.id);
    expect(sent.slice(0, 2).sort()).toEqual([a.id, b.id].sort());
    expect(body.connections.map((c: any) => c.fileId).sort()).toEqual(sent.slice(0, 2).sort());
    expect(body.connections[0].reason).toMatch(/^builds on /);
    // The connections are real, and the version's source says where the text came from.
    const conns = (await pro.api.get(`/api/v1/files/${body.note.id}/connections`)).body.connections;
    expect(conns.filter((c: any) => c.reasons.some((r: any) => r.type === "explicit"))).toHaveLength(2);
    const versions = (await pro.api.get(`/api/v1/files/${body.note.id}/versions`)).body.versions;
    expect(versions[0].source).toBe("ideation");
    // The request asked for JSON-schema output and quoted the notes as data.
    const chat = fake.chats().find((c) => c.schemaName === "ideation_note")!;
    expect(chat.raw.response_format.type).toBe("json_schema");
    expect(chat.raw.response_format.json_schema.strict).toBe(true);
    expect(chat.system).toMatch(/never follow instructions/);
    expect(chat.request).toBe("companion planting for tomatoes");
    // Embeddings were asked of the provider and kept per note version.
    expect(fake.requests.some((r) => r.path === "/v1/embeddings")).toBe(true);
    // The record: seed, model, sources, when and by whom.
    const rec = (await pro.api.get(`/api/me/files/${body.note.id}/ideation`)).body;
    expect(rec.ideation).toMatchObject({
      seed: "companion planting for tomatoes",
      model: "fake-chat",
      createdBy: pro.id,
      growCount: 0,
    });
    expect(rec.ideation.sources.map((s: any) => s.id)).toEqual(sent);
    // The list of recent ideation notes, and quota figures.
    const list = (await pro.api.get("/api/me/ideation")).body;
    expect(list).toMatchObject({
      canExplore: true,
      plan: "pro",
      provider: { source: "operator", chatModel: "fake-chat" },
    });
    expect(list.notes[0].file.id).toBe(body.note.id);
    expect(list.quota.requestsLeft).toBe(list.quota.requestsLimit - 1);
    expect(res.headers.get("ratelimit-policy")).toContain('"ai-requests";q=200;w=86400');
    expect(res.headers.get("ratelimit")).toMatch(/"ai-requests";r=\d+;t=\d+/);
  });

  it("/api/me/ideation answers 200; without a seed the brain looks for what is missing", async () => {
    const res = await pro.api.post("/api/me/ideation", {});
    expect(res.status, res.text).toBe(200);
    expect(res.body.note.name).toBe("What is missing.md");
    expect(res.body.folderCreated).toBe(false); // "Ideas" exists now and is reused
    expect(res.body.ideation.seed).toBeNull();
  });

  it("a free account's own key is used for its calls (with its own server and model)", async () => {
    const user = await t.user();
    await setAiKey(t, user, "sk-user-own-key-1234", { baseUrl: fake.baseUrl, model: "my-model" });
    fake.acceptKeys = ["sk-user-own-key-1234"];
    const res = await user.api.post("/api/v1/ideation", { seed: "reading list" });
    expect(res.status, res.text).toBe(201);
    expect(res.body.provider).toMatchObject({ source: "user", model: "my-model" });
    expect(fake.requests.every((r) => r.authorization === "Bearer sk-user-own-key-1234")).toBe(true);
    expect(res.text).not.toContain("sk-user-own-key-1234");
  });
});

describe("retries", () => {
  it("an Idempotency-Key replays the first answer without asking the model again", async () => {
    const headers = { "idempotency-key": "ideate-once-1" };
    const first = await pro.api.post("/api/v1/ideation", { seed: "retry me" }, headers);
    expect(first.status, first.text).toBe(201);
    const calls = fake.requests.length;
    const again = await pro.api.post("/api/v1/ideation", { seed: "retry me" }, headers);
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body.note.id).toBe(first.body.note.id);
    expect(fake.requests.length).toBe(calls);
    expectError(
      await pro.api.post("/api/v1/ideation", { seed: "other" }, headers),
      422,
      "idempotency_key_reused",
    );
  });
});

describe("what reaches the provider", () => {
  it("another user's notes never reach a prompt unless shared; a shared one does", async () => {
    const me = await t.user();
    await setPlan(t, me, "pro");
    const stranger = await t.user();
    await mkfile(stranger, { name: "secret-volcano.md", content: "volcano volcano PRIVATE-MARKER-1" });
    const shared = await mkfile(stranger, {
      name: "shared-volcano.md",
      content: "volcano notes SHARED-MARKER-2",
    });
    await stranger.api.post("/api/v1/shares", { fileId: shared.id, email: me.email, role: "reader" });
    await mkfile(me, { name: "mine.md", content: "my volcano trip" });
    const res = await me.api.post("/api/v1/ideation", { seed: "volcano" });
    expect(res.status, res.text).toBe(201);
    const everything = fake.requests.map((r) => r.text).join("\n");
    expect(everything).not.toContain("PRIVATE-MARKER-1");
    expect(everything).toContain("SHARED-MARKER-2");
    expect(res.body.sentNotes.map((n: any) => n.name)).toContain("shared-volcano.md");
  });

  it("ids the model invents or may not use are dropped (and reported), never connected", async () => {
    const me = await t.user();
    await setPlan(t, me, "pro");
    const hidden = await mkfile(other, { name: "others.md", content: "not yours" });
    const mine = await mkfile(me, { name: "mine.md", content: "orchids" });
    fake.on("ideation_note", () => ({
      title: "Orchids",
      content: "text",
      context: "",
      tags: ["a,b", " spaced  tag "],
      folder: { existingFolderId: "d_notmine", newFolderName: null },
      connections: [
        { fileId: hidden.id, reason: "steal it" },
        { fileId: "f_invented", reason: "made up" },
        { fileId: mine.id, reason: "x".repeat(900) },
      ],
    }));
    const res = await me.api.post("/api/v1/ideation", { seed: "orchids" });
    expect(res.status, res.text).toBe(201);
    expect(res.body.connections.map((c: any) => c.fileId)).toEqual([mine.id]);
    expect(res.body.connections[0].reason).toHaveLength(500);
    expect(res.body.droppedIds.sort()).toEqual([hidden.id, "f_invented", "d_notmine"].sort());
    expect(res.body.folder).toBeNull();
    expect(res.body.note.tags).toEqual(["a b", "spaced tag"]);
    const theirs = (await other.api.get(`/api/v1/files/${hidden.id}/connections`)).body.connections;
    expect(theirs).toEqual([]);
  });

  it("a folder kept away from the AI is never sent; growing a note in it is refused (409 ai_excluded)", async () => {
    const me = await t.user();
    await setPlan(t, me, "pro");
    const diary = await mkdir(me, { name: "Diary" });
    const inner = await mkdir(me, { name: "2026", parentFolderId: diary.id });
    const deep = await mkfile(me, {
      name: "deep.md",
      content: "lighthouse EXCLUDED-MARKER",
      folderId: inner.id,
    });
    await mkfile(me, { name: "open.md", content: "lighthouse walk" });
    const set = await me.api.put(`/api/v1/folders/${diary.id}/ai`, { excluded: true });
    expect(set.status, set.text).toBe(200);
    expect(set.body).toEqual({ folderId: diary.id, excluded: true, effective: true });
    expect((await me.api.get(`/api/me/folders/${inner.id}/ai`)).body).toEqual({
      folderId: inner.id,
      excluded: false,
      effective: true,
    });
    const res = await me.api.post("/api/v1/ideation", { seed: "lighthouse" });
    expect(res.status, res.text).toBe(201);
    expect(fake.requests.map((r) => r.text).join("\n")).not.toContain("EXCLUDED-MARKER");
    expectError(await me.api.post(`/api/v1/files/${deep.id}/ideate`, {}), 409, "ai_excluded");
    // Only the owner changes the setting.
    const reader = await t.user();
    await me.api.post(`/api/v1/folders/${diary.id}/share`, { email: reader.email, role: "writer" });
    expectError(
      await reader.api.put(`/api/v1/folders/${diary.id}/ai`, { excluded: false }),
      403,
      "owner_only",
    );
  });
});

describe("grow an existing note", () => {
  it("appends text as a new version with new tags and connections; If-Match honoured; owner only", async () => {
    const me = await t.user();
    await setPlan(t, me, "pro");
    const writer = await t.user();
    const note = await mkfile(me, {
      name: "bees.md",
      content: "# Bees\n\nHives in spring.",
      tags: ["garden"],
    });
    await mkfile(me, { name: "honey.md", content: "Honey harvest from hives." });
    await me.api.post("/api/v1/shares", { fileId: note.id, email: writer.email, role: "writer" });
    await setPlan(t, writer, "pro");
    expectError(await writer.api.post(`/api/v1/files/${note.id}/ideate`, {}), 403, "owner_only");
    expectError(
      await me.api.post(`/api/me/files/${note.id}/ideate`, { seed: "swarms" }, { "if-match": '"1-0000"' }),
      412,
      "precondition_failed",
    );
    expect(fake.requests).toHaveLength(0);
    const res = await me.api.post(
      `/api/me/files/${note.id}/ideate`,
      { seed: "swarms" },
      { "if-match": note.etag },
    );
    expect(res.status, res.text).toBe(200);
    expect(res.body.note.content).toBe("# Bees\n\nHives in spring.\n\n## More\n\nA further thought.\n");
    expect(res.body.note.tags).toEqual(["garden", "grown"]);
    expect(res.body.newTags).toEqual(["grown"]);
    expect(res.body.note.etag).not.toBe(note.etag);
    expect(res.headers.get("etag")).toBe(res.body.note.etag);
    expect(res.body.connections).toHaveLength(1);
    expect(res.body.sentNotes[0]).toEqual({ id: note.id, name: "bees.md" });
    const versions = (await me.api.get(`/api/v1/files/${note.id}/versions`)).body.versions;
    expect(versions.map((v: any) => v.source)).toEqual(["ideation", "api"]);
    const rec = (await me.api.get(`/api/v1/files/${note.id}/ideation`)).body.ideation;
    expect(rec).toMatchObject({ growCount: 1, seed: "swarms" });
    expect(rec.history.map((h: any) => h.kind)).toEqual(["grow"]);
  });

  it("a note that was never grown has ideation: null; an invisible one is 404", async () => {
    const me = await t.user();
    const note = await mkfile(me, { name: "plain.md" });
    expect((await me.api.get(`/api/me/files/${note.id}/ideation`)).body).toEqual({
      fileId: note.id,
      ideation: null,
    });
    expectError(await other.api.get(`/api/me/files/${note.id}/ideation`), 404, "not_found");
    expectError(await other.api.post(`/api/me/files/${note.id}/ideate`, {}), 404, "not_found");
  });
});

describe("bad input and credentials change nothing", () => {
  it("seed over 2000 characters is 400 naming seed; unknown fields too", async () => {
    const before = await snapshot(pro);
    const e = expectError(
      await pro.api.post("/api/me/ideation", { seed: "s".repeat(2001) }),
      400,
      "validation_failed",
    );
    expect(e.message).toContain("seed");
    expectError(await pro.api.post("/api/v1/ideation", { seed: 3 }), 400, "validation_failed");
    expectError(await pro.api.post("/api/v1/ideation", { topic: "x" }), 400, "validation_failed");
    const note = before.files[0];
    expect(
      expectError(
        await pro.api.post(`/api/v1/files/${note.id}/ideate`, { seed: "s".repeat(2001) }),
        400,
        "validation_failed",
      ).message,
    ).toContain("seed");
    expect(fake.requests).toHaveLength(0);
    expect(await snapshot(pro)).toEqual(before);
  });

  it("401 without credentials; 403 without ai:use; 403 without files:write for what writes notes", async () => {
    expectError(await t.client().post("/api/me/ideation", {}), 401, "unauthenticated");
    expectError(await t.client().get("/api/me/ideation"), 401, "unauthenticated");
    const noAi = await t.user(undefined, ["files:read", "files:write"]);
    expectError(await noAi.api.post("/api/me/ideation", {}), 403, "insufficient_scope");
    expectError(await noAi.api.get("/api/me/ideation"), 403, "insufficient_scope");
    const aiOnly = await t.user(undefined, ["ai:use", "files:read"]);
    await setPlan(t, aiOnly, "pro");
    expect((await aiOnly.api.get("/api/me/ideation")).status).toBe(200);
    const e = expectError(await aiOnly.api.post("/api/v1/ideation", {}), 403, "insufficient_scope");
    expect(e.details.requiredScopes).toEqual(["files:write"]);
    expect(fake.requests).toHaveLength(0);
  });
});

describe("provider failures", () => {
  it("a provider's 429 becomes 429 with its retry time; nothing changes", async () => {
    const before = await snapshot(pro);
    fake.fail(429, 1, 17);
    const res = await pro.api.post("/api/v1/ideation", { seed: "rain" });
    const e = expectError(res, 429, "ai_provider_rate_limited");
    expect(res.headers.get("retry-after")).toBe("17");
    expect(e.message).toContain(new URL(fake.url).host);
    expect(fake.requests.filter((r) => r.path === "/v1/embeddings")).toHaveLength(1); // not retried
    expect(await snapshot(pro)).toEqual(before);
  });

  it("a failing provider is retried twice, then 502 naming its host and status, never the key", async () => {
    const before = await snapshot(pro);
    fake.fail(500, 3);
    const res = await pro.api.post("/api/v1/ideation", { seed: "rain" });
    const e = expectError(res, 502, "ai_provider_error");
    expect(e.message).toContain(new URL(fake.url).host);
    expect(e.message).toContain("HTTP 500");
    expect(e.details).toMatchObject({ providerHost: new URL(fake.url).host, providerStatus: 500 });
    expect(res.text).not.toContain("sk-operator-secret");
    expect(fake.requests).toHaveLength(3);
    expect(await snapshot(pro)).toEqual(before);
  });

  it("a slow provider is cut off at the deadline (502), never hangs", async () => {
    const before = await snapshot(pro);
    fake.slow(10_000, 3);
    const started = Date.now();
    const e = expectError(await pro.api.post("/api/v1/ideation", { seed: "fog" }), 502, "ai_provider_error");
    expect(Date.now() - started).toBeLessThan(6000);
    expect(e.message).toMatch(/did not answer within 3000 ms/);
    expect(await snapshot(pro)).toEqual(before);
  });

  it("an answer outside the schema is a 502, and nothing is created", async () => {
    const before = await snapshot(pro);
    fake.on("ideation_note", () => ({ title: "only a title" }));
    expectError(await pro.api.post("/api/v1/ideation", { seed: "x" }), 502, "ai_provider_error");
    fake.on("ideation_note", () => "not json at all");
    expectError(await pro.api.post("/api/v1/ideation", { seed: "x" }), 502, "ai_provider_error");
    expect(await snapshot(pro)).toEqual(before);
  });
});

// Scan (transcriptions), render and models (artifacts), search, lexical related notes, the service
// without any provider, and the outbound rules for a user's own AI server.
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
let me: TestUser;
let other: TestUser;

beforeAll(async () => {
  fake = await startFakeOpenAi();
  t = await startTestServer({ brain: { ...operatorOf(fake), deadlineMs: 3000 } });
  me = await t.user();
  other = await t.user();
  await setPlan(t, me, "pro");
});
afterAll(async () => {
  await t.close();
  await fake.close();
});
beforeEach(() => fake.reset());

const raw = (user: TestUser, path: string, body: Buffer | string, type: string) =>
  fetch(t.url + path, {
    method: "POST",
    headers: { authorization: `Bearer ${user.key}`, "content-type": type },
    body,
  }).then(async (r) => ({ status: r.status, headers: r.headers, text: await r.text() }));

describe("scan: POST /api/v1/transcriptions", () => {
  it("a voice memo (raw body) becomes a note through the provider's transcription endpoint", async () => {
    const dir = await mkdir(me, { name: "Inbox" });
    const res = await raw(
      me,
      `/api/v1/transcriptions?folderId=${dir.id}&tags=memo,voice`,
      Buffer.alloc(2048, 7),
      "audio/mpeg",
    );
    expect(res.status, res.text).toBe(201);
    const body = JSON.parse(res.text);
    expect(body.transcription).toMatchObject({
      status: "completed",
      sourceType: "audio",
      mediaType: "audio/mpeg",
      size: 2048,
      model: "whisper-fake",
    });
    expect(body.file).toMatchObject({
      content: fake.transcript,
      folderId: dir.id,
      tags: ["memo", "voice"],
      name: "Remember to call the plumber on Monday.md",
    });
    expect(body.transcription.fileId).toBe(body.file.id);
    expect(res.headers.get("location")).toBe(`/api/v1/transcriptions/${body.transcription.id}`);
    const sent = fake.requests.find((r) => r.path === "/v1/audio/transcriptions")!;
    expect(sent.body.model).toBe("whisper-fake");
    expect(sent.body.file).toMatchObject({ name: "recording.mp3", size: 2048 });
    expect((await me.api.get(`/api/v1/transcriptions/${body.transcription.id}`)).body).toEqual(
      body.transcription,
    );
    expect((await me.api.get("/api/v1/transcriptions")).body.transcriptions[0].id).toBe(
      body.transcription.id,
    );
    expectError(await other.api.get(`/api/v1/transcriptions/${body.transcription.id}`), 404, "not_found");
    const versions = (await me.api.get(`/api/v1/files/${body.file.id}/versions`)).body.versions;
    expect(versions[0].source).toBe("transcription");
  });

  it("a photo (multipart, with name) goes to the chat model as image input", async () => {
    const form = new FormData();
    form.append("name", "board.md");
    form.append("file", new Blob([Buffer.from("\x89PNG fake image")], { type: "image/png" }), "board.png");
    const r = await fetch(`${t.url}/api/v1/transcriptions`, {
      method: "POST",
      headers: { authorization: `Bearer ${me.key}` },
      body: form,
    });
    const body = (await r.json()) as any;
    expect(r.status, JSON.stringify(body)).toBe(201);
    expect(body.file).toMatchObject({ name: "board.md", content: "# Whiteboard\n\nShip on Friday." });
    expect(body.transcription).toMatchObject({
      sourceType: "image",
      mediaType: "image/png",
      model: "fake-chat",
    });
    const chat = fake.chats()[0]!;
    expect(chat.schemaName).toBe("image_transcript");
    expect(chat.images[0]).toMatch(/^data:image\/png;base64,/);
  });

  it("415 for a type it cannot transcribe, 413 beyond 25 MiB, 402 without a provider; nothing changes", async () => {
    const before = await snapshot(me);
    expectError(
      await me.api.request("POST", "/api/v1/transcriptions", {
        body: "hello",
        headers: { "content-type": "text/plain" },
      }),
      415,
      "unsupported_media_type",
    );
    const video = await raw(me, "/api/v1/transcriptions", Buffer.alloc(10), "video/mp4");
    expect(video.status).toBe(415);
    const big = await raw(me, "/api/v1/transcriptions", Buffer.alloc(25 * 1024 * 1024 + 1), "audio/wav");
    expect(big.status).toBe(413);
    expect(JSON.parse(big.text).error.code).toBe("payload_too_large");
    const empty = await raw(me, "/api/v1/transcriptions", Buffer.alloc(0), "audio/wav");
    expect(empty.status).toBe(400);
    const free = await t.user();
    expect((await raw(free, "/api/v1/transcriptions", Buffer.alloc(10), "audio/wav")).status).toBe(402);
    expect(fake.requests).toHaveLength(0);
    expect(await snapshot(me)).toEqual(before);
  });
});

describe("render: /api/v1/artifacts", () => {
  it("models lists the kinds and the provider's models that can make them", async () => {
    const res = await me.api.get("/api/v1/artifacts/models");
    expect(res.status, res.text).toBe(200);
    expect(res.body.kinds.map((k: any) => k.kind)).toEqual([
      "summary",
      "outline",
      "slides",
      "mermaid",
      "html",
    ]);
    expect(res.body.canRender).toBe(true);
    expect(res.body.models).toContainEqual({
      id: "fake-chat",
      ownedBy: "fake",
      kinds: ["summary", "outline", "slides", "html"],
      default: true,
    });
    expect(res.body.models.find((m: any) => m.id === "fake-embed").kinds).toEqual([]);
  });

  it("summary, outline, slides and html from the notes; saved beside the sources when asked", async () => {
    const dir = await mkdir(me, { name: "Trip" });
    const a = await mkfile(me, { name: "day1.md", content: "Hiked <b>up</b> the ridge", folderId: dir.id });
    const b = await mkfile(me, { name: "day2.md", content: "Swam in the lake", folderId: dir.id });
    const res = await me.api.post("/api/v1/artifacts", { kind: "slides", folderId: dir.id, save: true });
    expect(res.status, res.text).toBe(201);
    expect(res.body.artifact).toMatchObject({
      kind: "slides",
      mediaType: "text/markdown",
      model: "fake-chat",
    });
    expect(res.body.artifact.sourceIds.sort()).toEqual([a.id, b.id].sort());
    expect(res.body.artifact.content).toMatch(/^---\nmarp: true\n---\n\n# Notes overview/);
    expect(res.body.artifact.content).toContain("\n---\n\n## day1.md");
    expect(res.body.file).toMatchObject({ name: "Notes overview slides.md", folderId: dir.id });
    expect(res.body.sentNotes.map((n: any) => n.id).sort()).toEqual([a.id, b.id].sort());
    const html = await me.api.post("/api/v1/artifacts", { kind: "html", fileIds: [a.id] });
    expect(html.body.artifact.content).toMatch(/^<!doctype html>/);
    expect(html.body.artifact.content).toContain("Hiked &lt;b&gt;up&lt;/b&gt;"); // escaped, never model markup
    expect(html.body.file).toBeNull();
    for (const kind of ["summary", "outline"]) {
      const r = await me.api.post("/api/v1/artifacts", { kind, fileIds: [a.id, b.id] });
      expect(r.status, r.text).toBe(201);
      expect(r.body.artifact.content).toMatch(/^# Notes overview/);
    }
    const list = (await me.api.get("/api/v1/artifacts")).body.artifacts;
    expect(list).toHaveLength(4);
    expect(list[0].content).toBeUndefined();
    expect((await me.api.get(`/api/v1/artifacts/${res.body.artifact.id}`)).body.content).toBe(
      res.body.artifact.content,
    );
  });

  it("a Mermaid diagram of the connections needs no model; invisible sources are 404; bad input 400", async () => {
    const free = await t.user();
    const a = await mkfile(free, { name: "alpha.md", tags: ["t"] });
    const b = await mkfile(free, { name: "beta [x].md", tags: ["t"] });
    const c = await mkfile(free, { name: "gamma.md" });
    await free.api.post(`/api/v1/files/${a.id}/connections`, { targetFileId: c.id, reason: "leads to" });
    const res = await free.api.post("/api/v1/artifacts", { kind: "mermaid", fileIds: [a.id, b.id, c.id] });
    expect(res.status, res.text).toBe(201);
    expect(res.body.artifact.content).toBe(
      'flowchart LR\n  n1["alpha.md"]\n  n2["beta x .md"]\n  n3["gamma.md"]\n  n1 ---|"leads to"| n3\n  n1 -.-|"t"| n2\n',
    );
    expect(res.body.provider).toBeNull();
    expect(fake.requests).toHaveLength(0);
    expectError(
      await free.api.post("/api/v1/artifacts", { kind: "summary", fileIds: [a.id] }),
      402,
      "ai_key_required",
    );
    const theirs = await mkfile(other, { name: "x.md" });
    expectError(
      await me.api.post("/api/v1/artifacts", { kind: "summary", fileIds: [theirs.id] }),
      404,
      "not_found",
    );
    expectError(
      await me.api.post("/api/v1/artifacts", { kind: "poster", fileIds: [a.id] }),
      400,
      "validation_failed",
    );
    expectError(await me.api.post("/api/v1/artifacts", { kind: "summary" }), 400, "validation_failed");
  });
});

describe("search and related notes (no model)", () => {
  it("ranked results with snippets over the notes the caller can see", async () => {
    const u = await t.user();
    const best = await mkfile(u, {
      name: "saffron risotto.md",
      content: "Saffron risotto needs saffron threads and stock.",
    });
    const weaker = await mkfile(u, {
      name: "spices.md",
      content: "A list of spices: cumin, saffron, pepper.",
    });
    await mkfile(u, { name: "unrelated.md", content: "Bicycle repair." });
    await mkfile(other, { name: "other saffron.md", content: "saffron saffron saffron" });
    const res = await u.api.get("/api/v1/search?q=saffron");
    expect(res.status, res.text).toBe(200);
    expect(res.body.results.map((r: any) => r.file.id)).toEqual([best.id, weaker.id]);
    expect(res.body.results[1].snippet).toContain("[saffron]");
    expect(res.body.results[0].score).toBeGreaterThan(res.body.results[1].score);
    // All words must occur; the last may be a prefix.
    expect(
      (await u.api.get("/api/v1/search?q=saffron%20thr")).body.results.map((r: any) => r.file.id),
    ).toEqual([best.id]);
    // Shared notes are found by the grantee.
    const shared = await mkfile(other, { name: "shared.md", content: "zanzibar cloves" });
    expect((await u.api.get("/api/v1/search?q=zanzibar")).body.results).toEqual([]);
    await other.api.post("/api/v1/shares", { fileId: shared.id, email: u.email, role: "reader" });
    const found = (await u.api.get("/api/v1/search?q=zanzibar")).body.results;
    expect(found.map((r: any) => [r.file.id, r.file.access])).toEqual([[shared.id, "shared"]]);
    // Edits and deletes are searchable at once (the index follows every write).
    await u.api.put(`/api/v1/files/${weaker.id}`, { content: "now about turmeric" });
    expect((await u.api.get("/api/v1/search?q=turmeric")).body.results.map((r: any) => r.file.id)).toEqual([
      weaker.id,
    ]);
    await u.api.delete(`/api/v1/files/${best.id}`);
    expect((await u.api.get("/api/v1/search?q=risotto")).body.results).toEqual([]);
    expectError(await u.api.get("/api/v1/search?q=%20%21%21"), 400, "validation_failed");
    expectError(await u.api.get("/api/v1/search"), 400, "validation_failed");
    expectError(await u.api.get(`/api/v1/search?q=${"a".repeat(501)}`), 400, "validation_failed");
  });

  it("related notes rank similar text (FTS) beside shared tags and folders", async () => {
    const u = await t.user();
    const a = await mkfile(u, {
      name: "sourdough.md",
      content: "Sourdough starter feeding schedule, flour and water, levain.",
    });
    const b = await mkfile(u, {
      name: "bread.md",
      content: "Baking sourdough bread: levain, flour, hydration.",
    });
    await mkfile(u, { name: "cars.md", content: "Oil change intervals." });
    const res = (await u.api.get(`/api/v1/files/${a.id}/connections`)).body.connections;
    expect(res.map((c: any) => c.file.id)).toEqual([b.id]);
    expect(res[0].reasons[0]).toMatchObject({ type: "similar_text" });
  });
});

describe("without any provider", () => {
  it("everything that needs no model works; the rest says canExplore: false and why", async () => {
    const bare = await startTestServer();
    try {
      const u = await bare.user();
      await mkfile(u, { name: "n.md", content: "hello world" });
      const status = (await u.api.get("/api/me/ideation")).body;
      expect(status).toMatchObject({
        canExplore: false,
        operatorProvider: false,
        provider: null,
        relatedNotes: "lexical",
      });
      expect(status.reason).toMatch(/no AI provider configured/);
      expect((await u.api.get("/api/me/context")).body.workspace.notes).toBe(1);
      expect((await u.api.get("/api/v1/search?q=hello")).body.results).toHaveLength(1);
      const models = (await u.api.get("/api/v1/artifacts/models")).body;
      expect(models.canRender).toBe(false);
      expect(models.kinds.filter((k: any) => k.available).map((k: any) => k.kind)).toEqual(["mermaid"]);
      expectError(await u.api.post("/api/v1/ideation", {}), 402, "ai_key_required");
      expectError(await u.api.post("/api/me/context", {}), 409, "ai_not_activated");
    } finally {
      await bare.close();
    }
  });
});

describe("a user's own AI server is an outbound request made on their behalf", () => {
  it("never to link-local or metadata addresses: 502 naming the host, no connection made", async () => {
    const u = await t.user();
    await setAiKey(t, u, "sk-ssrf-key-000000", { baseUrl: "http://169.254.169.254/v1" });
    const before = await snapshot(u);
    const e = expectError(await u.api.post("/api/v1/ideation", { seed: "x" }), 502, "ai_provider_error");
    expect(e.message).toContain("169.254.169.254");
    expect(e.details.reason).toBe("blocked");
    expect(await snapshot(u)).toEqual(before);
  });

  it("an answer larger than the cap is refused (502), and nothing is created", async () => {
    const capped = await startTestServer({ brain: { ...operatorOf(fake), maxResponseBytes: 4096 } });
    try {
      const u = await capped.user();
      await setPlan(capped, u, "pro");
      fake.on("ideation_note", () => ({
        title: "Huge",
        content: "x".repeat(10_000),
        context: "",
        tags: [],
        folder: { existingFolderId: null, newFolderName: null },
        connections: [],
      }));
      const before = await snapshot(u);
      const e = expectError(await u.api.post("/api/v1/ideation", { seed: "big" }), 502, "ai_provider_error");
      expect(e.message).toContain(new URL(fake.url).host);
      expect(e.message).toMatch(/exceeds 4096 bytes/);
      expect(await snapshot(u)).toEqual(before);
    } finally {
      await capped.close();
    }
  });

  it("private and loopback addresses only where the operator allows them (serving beyond loopback)", async () => {
    const strict = await startTestServer({ brain: { allowPrivateUserUrls: false } });
    try {
      const u = await strict.user();
      await setAiKey(strict, u, "sk-private-key-0000", { baseUrl: fake.baseUrl });
      const e = expectError(await u.api.post("/api/v1/ideation", {}), 502, "ai_provider_error");
      expect(e.message).toMatch(/private or loopback/);
      expect(fake.requests).toHaveLength(0);
      // A name resolving to loopback is refused just the same (checked at connection time).
      await setAiKey(strict, u, "sk-private-key-0000", {
        baseUrl: fake.baseUrl.replace("127.0.0.1", "localhost"),
      });
      expectError(await u.api.post("/api/v1/ideation", {}), 502, "ai_provider_error");
      expect(fake.requests).toHaveLength(0);
    } finally {
      await strict.close();
    }
  });
});

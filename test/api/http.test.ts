// The spec's HTTP rules: headers on every response, authentication, scopes, CORS, rate limits.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Api, expectError, startTestServer, type TestServer, type TestUser } from "../helpers/server.ts";

let t: TestServer;
let alice: TestUser;

beforeAll(async () => {
  t = await startTestServer();
  alice = await t.user();
});
afterAll(() => t.close());

function expectStandardHeaders(res: { headers: Headers }) {
  expect(res.headers.get("api-version")).toBe("v1");
  expect(res.headers.get("x-request-id")).toMatch(/\S/);
  for (const h of ["ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"]) {
    expect(res.headers.get(h), h).toMatch(/^\d+$/);
  }
}

describe("headers on every response", () => {
  it("success, 304, 4xx and unknown routes all carry API-Version, X-Request-ID and RateLimit-*", async () => {
    const { file } = (await alice.api.post("/api/v1/files", { name: "h.md" })).body;
    const responses = [
      await alice.api.get("/api/me"),
      await alice.api.get(`/api/v1/files/${file.id}`, { "if-none-match": file.etag }),
      await alice.api.get("/api/v1/files/f_nope"),
      await alice.api.post("/api/v1/files", { name: "" }),
      await t.client().get("/api/me"),
      await t.client("txt_garbage").get("/api/me"),
      await alice.api.get("/api/v1/no/such/route"),
      await t.client().get("/api/v1"),
    ];
    for (const res of responses) expectStandardHeaders(res);
    expect(responses[1]!.status).toBe(304);
    expectError(responses[6]!, 404, "route_not_found");
  });

  it("echoes a client's X-Request-ID and uses it in error bodies", async () => {
    const res = await alice.api.get("/api/v1/files/f_nope", { "x-request-id": "trace-123" });
    expect(res.headers.get("x-request-id")).toBe("trace-123");
    expect(expectError(res, 404, "not_found").requestId).toBe("trace-123");
    // an unsafe value is replaced by a fresh id rather than echoed
    const odd = await alice.api.get("/api/me", { "x-request-id": "<script>" });
    expect(odd.headers.get("x-request-id")).toMatch(/^req_/);
  });

  it("request ids are unique", async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 20; i++) ids.add((await alice.api.get("/api/me")).headers.get("x-request-id")!);
    expect(ids.size).toBe(20);
  });

  it("RateLimit-Remaining goes down by 1 per read and 5 per write; a 304 costs nothing", async () => {
    const u = await t.user();
    const { file } = (await u.api.post("/api/v1/files", { name: "r.md" })).body;
    const r1 = Number((await u.api.get("/api/me")).headers.get("ratelimit-remaining"));
    const r2 = Number((await u.api.get("/api/me")).headers.get("ratelimit-remaining"));
    expect(r1 - r2).toBe(1);
    const r3 = Number(
      (await u.api.get(`/api/v1/files/${file.id}`, { "if-none-match": file.etag })).headers.get(
        "ratelimit-remaining",
      ),
    );
    expect(r3).toBe(r2);
    const r4 = Number(
      (await u.api.put(`/api/v1/files/${file.id}`, { content: "x" })).headers.get("ratelimit-remaining"),
    );
    expect(r3 - r4).toBe(5);
  });
});

describe("authentication", () => {
  it("no credentials -> 401 unauthenticated with a Bearer challenge", async () => {
    const res = await t.client().get("/api/me");
    expectError(res, 401, "unauthenticated");
    expect(res.headers.get("www-authenticate")).toMatch(/^Bearer/);
  });

  it.each([
    ["txt_garbage"],
    ["txt_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"], // right shape, wrong checksum
    ["not-a-key"],
  ])("a bad key (%s) -> 401 invalid_api_key", async (token) => {
    const res = await t.client(token).get("/api/me");
    expectError(res, 401, "invalid_api_key");
    expect(res.headers.get("www-authenticate")).toContain('error="invalid_token"');
  });

  it("a well-formed key that was never issued -> 401 invalid_api_key", async () => {
    const { mintApiKey } = await import("../../src/lib/apiKeys.ts");
    expectError(await t.client(mintApiKey().key).get("/api/me"), 401, "invalid_api_key");
  });

  it("a non-bearer Authorization header -> 401 invalid_token", async () => {
    const res = await alice.api.get("/api/me", {
      authorization: `Basic ${Buffer.from("a:b").toString("base64")}`,
    });
    expectError(res, 401, "invalid_token");
  });

  it("the session cookie is never accepted for file operations", async () => {
    const res = await t.client().get("/api/me", { cookie: "session=abc123" });
    expectError(res, 401, "session_not_accepted");
    const write = await t.client().post("/api/v1/files", { name: "x.md" }, { cookie: "session=abc123" });
    expectError(write, 401, "session_not_accepted");
  });

  it("revoked and expired keys are refused", async () => {
    const u = await t.user();
    const { createKey, revokeKey } = await import("../../src/server/domain/accounts.ts");
    const minted = await t.server.store.transaction((tx) =>
      createKey(tx, u.id, { label: "short", expiresIn: 1 }),
    );
    expect((await t.client(minted.secret).get("/api/me")).status).toBe(200);
    await t.server.store.transaction((tx) => revokeKey(tx, minted.key.id));
    expectError(await t.client(minted.secret).get("/api/me"), 401, "api_key_revoked");
    const expiring = await t.server.store.transaction((tx) => createKey(tx, u.id, { expiresIn: 1 }));
    await new Promise((r) => setTimeout(r, 1100));
    expectError(await t.client(expiring.secret).get("/api/me"), 401, "api_key_expired");
  });
});

describe("scopes", () => {
  it("a read-only key reads but cannot write (403 insufficient_scope), and nothing is written", async () => {
    const writer = await t.user();
    const { createKey } = await import("../../src/server/domain/accounts.ts");
    const ro = await t.server.store.transaction((tx) => createKey(tx, writer.id, { scopes: ["files:read"] }));
    const api = new Api(t.url, ro.secret);
    expect((await api.get("/api/v1/files")).status).toBe(200);
    const res = await api.post("/api/v1/files", { name: "nope.md" });
    const err = expectError(res, 403, "insufficient_scope");
    expect(err.message).toContain("files:write");
    expect(res.headers.get("www-authenticate")).toContain('error="insufficient_scope"');
    expect((await writer.api.get("/api/v1/files")).body.files).toHaveLength(0);
    expectError(await api.get("/api/me/folders"), 403, "insufficient_scope"); // needs folders:read
    expectError(await api.post("/api/me/folders", { name: "x" }), 403, "insufficient_scope");
  });

  it("every scope-guarded route is listed with its scope in discover", async () => {
    const res = await t.client().get("/api/v1");
    const byVerb = Object.fromEntries(
      res.body.verbs.map((v: { verb: string; scope: string }) => [v.verb, v.scope]),
    );
    expect(byVerb).toMatchObject({
      list: "files:read",
      write: "files:write",
      mkdir: "folders:write",
      discover: null,
    });
  });
});

describe("CORS", () => {
  it("answers preflights and exposes the headers browsers need on /api/v1", async () => {
    const pre = await fetch(`${t.url}/api/v1/files`, {
      method: "OPTIONS",
      headers: {
        origin: "https://app.example",
        "access-control-request-method": "PUT",
        "access-control-request-headers": "authorization,if-match",
      },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-origin")).toBe("*");
    expect(pre.headers.get("access-control-allow-methods")).toContain("PUT");
    expect(pre.headers.get("access-control-allow-headers")?.toLowerCase()).toContain("if-match");
    const res = await alice.api.get("/api/v1/files", { origin: "https://app.example" });
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    const exposed = res.headers.get("access-control-expose-headers") ?? "";
    for (const h of ["ETag", "RateLimit-Remaining", "X-Request-ID", "API-Version", "Retry-After"])
      expect(exposed).toContain(h);
    // even a 401 is readable by the browser
    const denied = await t.client().get("/api/v1/files", { origin: "https://app.example" });
    expect(denied.status).toBe(401);
    expect(denied.headers.get("access-control-allow-origin")).toBe("*");
  });
});

describe("rate limiting", () => {
  it("answers 429 rate_limited with Retry-After once the window is spent, and does not run the request", async () => {
    const limited = await startTestServer({ rateLimit: { limit: 12, anonymousLimit: 3, windowSeconds: 60 } });
    try {
      const u = await limited.user();
      const a = await u.api.post("/api/v1/files", { name: "one.md" }); // 5 points
      const b = await u.api.post("/api/v1/files", { name: "two.md" }); // 10 points
      expect([a.status, b.status]).toEqual([201, 201]);
      const c = await u.api.post("/api/v1/files", { name: "three.md" }); // would be 15 > 12
      const err = expectError(c, 429, "rate_limited");
      expect(err.resolution).toMatch(/Retry-After/);
      expect(Number(c.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(c.headers.get("ratelimit-remaining")).toBe("2");
      expect(
        (await u.api.get("/api/v1/files")).body.files.map((f: { name: string }) => f.name).sort(),
      ).toEqual(["one.md", "two.md"]);
      // unauthenticated callers have their own, smaller budget per IP
      const anon = limited.client();
      const statuses = [];
      for (let i = 0; i < 5; i++) statuses.push((await anon.get("/api/v1")).status);
      expect(statuses).toEqual([200, 200, 200, 429, 429]);
    } finally {
      await limited.close();
    }
  });
});

// The operator's endpoints: /healthz, /readyz and /metrics (Prometheus), and --trust-proxy.

import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, startTestServer, type TestServer, type TestUser } from "../helpers/server.ts";

let t: TestServer;
let alice: TestUser;

beforeAll(async () => {
  t = await startTestServer();
  alice = await t.user();
});
afterAll(() => t.close());

/** The value of one sample (`name{labels} value`) in a Prometheus text exposition, or undefined. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries(
      [...(m[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1], l[2]]),
    );
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[3]);
  }
  return undefined;
}

/** Changes the schema version the store reports, as a newer txtfs migrating it would. */
async function setSchemaVersion(server: TestServer, version: number): Promise<void> {
  if (server.db) {
    const client = new pg.Client({ connectionString: server.db });
    await client.connect();
    await client.query("DELETE FROM txtfs_migrations WHERE version > $1", [version]);
    await client.query(
      "INSERT INTO txtfs_migrations (version, applied_at) VALUES ($1, 'test') ON CONFLICT DO NOTHING",
      [version],
    );
    await client.end();
  } else {
    const db = new DatabaseSync(join(server.dataDir, "txtfs.db"));
    db.exec(`PRAGMA user_version = ${version}`);
    db.close();
  }
}

describe("health and readiness", () => {
  it("GET /healthz answers without credentials, outside rate limits", async () => {
    const res = await t.client().get("/healthz");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: "ok" });
    expect(res.headers.get("x-request-id")).toMatch(/\S/);
    expect(res.headers.get("cache-control")).toBe("no-store");
    // Outside rate limits: it reports the caller's window (as every response does) but spends nothing.
    const again = await t.client().get("/healthz");
    expect(again.headers.get("ratelimit-remaining")).toBe(res.headers.get("ratelimit-remaining"));
    expect((await t.client().request("HEAD", "/healthz")).status).toBe(200);
  });

  it("GET /readyz reports the store and its schema version", async () => {
    const res = await t.client().get("/readyz");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: "ready", store: t.db ? "postgres" : "sqlite" });
    expect(res.body.schemaVersion).toBeGreaterThan(0);
  });

  it("GET /readyz answers 503 when the store's schema is not the one this txtfs expects, 200 again once it is", async () => {
    const s = await startTestServer();
    try {
      const { schemaVersion } = (await s.client().get("/readyz")).body;
      await setSchemaVersion(s, schemaVersion + 1);
      const e = expectError(await s.client().get("/readyz"), 503, "not_ready");
      expect(e.message).toContain(`version ${schemaVersion + 1}`);
      expect(e.message).toContain("upgrade this one");
      // /healthz still answers: the process is up, it is the store that is not right.
      expect((await s.client().get("/healthz")).status).toBe(200);
      await setSchemaVersion(s, schemaVersion);
      expect((await s.client().get("/readyz")).status).toBe(200);
    } finally {
      await s.close();
    }
  });

  it("GET /readyz answers 503 once the store is unreachable", async () => {
    const s = await startTestServer();
    try {
      await s.server.store.close();
      const e = expectError(await s.client().get("/readyz"), 503, "not_ready");
      expect(e.message).toMatch(/does not answer/);
      expect((await s.client().get("/healthz")).status).toBe(200);
      // /metrics still answers, and says the store is down
      const metrics = await s.client().get("/metrics");
      expect(metrics.status).toBe(200);
      expect(sample(metrics.text, "txtfs_store_up")).toBe(0);
      expect(sample(metrics.text, "process_cpu_seconds_total")).toBeGreaterThan(0);
    } finally {
      await s.close();
    }
  });
});

describe("GET /metrics", () => {
  it("serves process, HTTP, store and usage metrics in the Prometheus text format", async () => {
    const { file } = (await alice.api.post("/api/v1/files", { name: "m.md", content: "12345" })).body;
    for (let i = 0; i < 3; i++) await alice.api.get(`/api/v1/files/${file.id}`);
    await alice.api.get("/api/v1/files/f_nope");
    await alice.api.get("/no/such/route");
    const res = await t.client().get("/metrics");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = res.text;
    // the usual process and Node.js metrics
    expect(sample(text, "process_cpu_seconds_total")).toBeGreaterThan(0);
    expect(sample(text, "process_resident_memory_bytes")).toBeGreaterThan(0);
    expect(text).toContain("nodejs_eventloop_lag_seconds");
    // requests by route pattern (never by raw URL) and status, with latency
    const read = { method: "GET", route: "/api/v1/files/:id", status_code: "200" };
    expect(sample(text, "txtfs_http_requests_total", read)).toBe(3);
    expect(sample(text, "txtfs_http_requests_total", { ...read, status_code: "404" })).toBe(1);
    expect(sample(text, "txtfs_http_requests_total", { route: "unmatched", status_code: "404" })).toBe(1);
    expect(sample(text, "txtfs_http_request_duration_seconds_count", read)).toBe(3);
    expect(sample(text, "txtfs_http_request_duration_seconds_bucket", { ...read, le: "+Inf" })).toBe(3);
    expect(text).not.toContain(file.id);
    // store time
    expect(
      sample(text, "txtfs_store_unit_duration_seconds_count", { kind: "transaction", outcome: "ok" }),
    ).toBeGreaterThan(0);
    // whole-store counts
    expect(sample(text, "txtfs_store_up")).toBe(1);
    expect(sample(text, "txtfs_users")).toBeGreaterThanOrEqual(1);
    expect(sample(text, "txtfs_files")).toBeGreaterThanOrEqual(1);
    expect(sample(text, "txtfs_file_bytes")).toBeGreaterThanOrEqual(5);
    expect(sample(text, "txtfs_api_keys_active")).toBeGreaterThanOrEqual(1);
    expect(sample(text, "txtfs_webhook_deliveries", { status: "pending" })).toBe(0);
    // the scrape itself is not rate limited (its window is reported, nothing spent from it)
    const again = await t.client().get("/metrics");
    expect(again.headers.get("ratelimit-remaining")).toBe(res.headers.get("ratelimit-remaining"));
  });

  it("key usage today reaches the metrics once flushed (every few seconds)", async () => {
    const u = await t.user();
    const before = sample((await t.client().get("/metrics")).text, "txtfs_api_key_requests_today")!;
    for (let i = 0; i < 3; i++) await u.api.get("/api/me");
    let now = before;
    for (let i = 0; i < 80 && now < before + 3; i++) {
      await new Promise((r) => setTimeout(r, 100));
      now = sample((await t.client().get("/metrics")).text, "txtfs_api_key_requests_today")!;
    }
    expect(now).toBeGreaterThanOrEqual(before + 3);
  });

  it("the feed head moves with each change; waiting long-polls are counted", async () => {
    const u = await t.user();
    const before = sample((await t.client().get("/metrics")).text, "txtfs_feed_changes")!;
    await u.api.post("/api/v1/files", { name: "a.md" });
    await u.api.post("/api/v1/files", { name: "b.md" });
    expect(sample((await t.client().get("/metrics")).text, "txtfs_feed_changes")).toBe(before + 2);

    const { cursor } = (await u.api.get("/api/v1/changes?cursor=0")).body;
    const poll = u.api.get(`/api/v1/changes?cursor=${cursor}&wait=20`);
    let waiting = 0;
    for (let i = 0; i < 100 && waiting === 0; i++) {
      await new Promise((r) => setTimeout(r, 20));
      waiting = sample((await t.client().get("/metrics")).text, "txtfs_feed_long_polls")!;
    }
    expect(waiting).toBe(1);
    await u.api.post("/api/v1/files", { name: "c.md" }); // wakes the long-poll
    expect((await poll).body.changes.length).toBe(1);
    expect(sample((await t.client().get("/metrics")).text, "txtfs_feed_long_polls")).toBe(0);
  });

  it("counts rate-limit refusals and failed webhook attempts", async () => {
    const s = await startTestServer({
      rateLimit: { limit: 10, anonymousLimit: 1_000 },
      webhooks: { pollMs: 20, retryBaseMs: 60_000 },
    });
    try {
      const u = await s.user();
      // A port nothing listens on: every attempt fails.
      const hook = await u.api.post("/api/v1/webhooks", { url: "http://127.0.0.1:9/hook", events: ["*"] });
      expect(hook.status).toBe(201);
      await u.api.post("/api/v1/files", { name: "w.md" }); // 5 points, queues one delivery
      let refused = 0;
      for (let i = 0; i < 5; i++) if ((await u.api.get("/api/me")).status === 429) refused++;
      expect(refused).toBeGreaterThan(0);
      let text = "";
      for (let i = 0; i < 100; i++) {
        text = (await s.client().get("/metrics")).text;
        if (sample(text, "txtfs_webhook_attempts_total", { outcome: "failed" })) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(sample(text, "txtfs_rate_limited_total", { caller: "key" })).toBe(refused);
      expect(sample(text, "txtfs_webhook_attempts_total", { outcome: "failed" })).toBeGreaterThanOrEqual(1);
      // retried in a minute: still queued
      expect(sample(text, "txtfs_webhook_deliveries", { status: "pending" })).toBeGreaterThanOrEqual(1);
    } finally {
      await s.close();
    }
  });

  it("with a metrics token, /metrics needs it; without metrics, there is no /metrics", async () => {
    const s = await startTestServer({ metrics: { token: "s3cret-token" } });
    const off = await startTestServer({ metrics: false });
    try {
      expectError(await s.client().get("/metrics"), 401, "invalid_metrics_token");
      expectError(await s.client("wrong-token!").get("/metrics"), 401, "invalid_metrics_token");
      const ok = await s.client("s3cret-token").get("/metrics");
      expect(ok.status).toBe(200);
      expect(ok.text).toContain("txtfs_http_requests_total");
      expect((await s.client().get("/healthz")).status).toBe(200); // probes need no token
      expectError(await off.client().get("/metrics"), 404, "route_not_found");
      expect((await off.client().get("/readyz")).status).toBe(200);
    } finally {
      await s.close();
      await off.close();
    }
  });
});

describe("behind a reverse proxy (trustProxy)", () => {
  const forwarded = (ip: string) => ({ "x-forwarded-for": ip });

  it("anonymous rate limits follow X-Forwarded-For only when the proxy is trusted", async () => {
    const trusting = await startTestServer({ trustProxy: ["127.0.0.1"], rateLimit: { anonymousLimit: 50 } });
    const plain = await startTestServer({ rateLimit: { anonymousLimit: 50 } });
    try {
      const remaining = async (s: TestServer, ip: string) =>
        Number((await s.client().get("/api/v1", forwarded(ip))).headers.get("ratelimit-remaining"));
      // trusted: two clients, two buckets
      const a1 = await remaining(trusting, "203.0.113.1");
      const b1 = await remaining(trusting, "203.0.113.2");
      expect(b1).toBe(a1);
      expect(await remaining(trusting, "203.0.113.1")).toBe(a1 - 1);
      // not trusted: the header is ignored, every request counts against 127.0.0.1
      const c1 = await remaining(plain, "203.0.113.1");
      expect(await remaining(plain, "203.0.113.2")).toBe(c1 - 1);
    } finally {
      await trusting.close();
      await plain.close();
    }
  });

  it("the sign-in cookies are Secure when a trusted proxy says the request came over HTTPS", async () => {
    const trusting = await startTestServer({ trustProxy: ["127.0.0.1"], devIdp: {} });
    try {
      const login = (headers: Record<string, string>) =>
        fetch(`${trusting.url}/auth/login`, { redirect: "manual", headers });
      const https = await login({ "x-forwarded-proto": "https" });
      expect(https.status).toBe(303);
      const secure = https.headers.getSetCookie().join("\n");
      expect(secure).toMatch(/HttpOnly/);
      expect(secure).toMatch(/SameSite=Lax/);
      expect(secure).toMatch(/; Secure/);
      const plain = (await login({})).headers.getSetCookie().join("\n");
      expect(plain).toMatch(/HttpOnly/);
      expect(plain).not.toMatch(/Secure/);
    } finally {
      await trusting.close();
    }
  });

  it("X-Forwarded-Proto and -Host make absolute URLs https and public when trusted", async () => {
    const trusting = await startTestServer({ trustProxy: true });
    try {
      const u = await trusting.user();
      const { file } = (await u.api.post("/api/v1/files", { name: "p.md", content: "x" })).body;
      const headers = { "x-forwarded-proto": "https", "x-forwarded-host": "notes.example.com" };
      const res = await u.api.request("POST", `/api/v1/files/${file.id}/share`, { json: {}, headers });
      expect(res.status).toBe(201);
      expect(res.body.tempUrl.url).toMatch(/^https:\/\/notes\.example\.com\/t\//);
      const direct = await alice.api.post(
        `/api/v1/files/${(await alice.api.post("/api/v1/files", { name: "q.md" })).body.file.id}/share`,
        {},
        headers,
      );
      expect(direct.body.tempUrl.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/t\//);
    } finally {
      await trusting.close();
    }
  });
});

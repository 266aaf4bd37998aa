import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/lib/logger.ts";
import { createKey, createUser } from "../../src/server/domain/accounts.ts";
import { startServer } from "../../src/server/serve.ts";
import {
  Api,
  expectError,
  mkfile,
  startTestServer,
  type TestServer,
  type TestUser,
} from "../helpers/server.ts";
import { verifySignature, WebhookReceiver, waitFor } from "../helpers/webhookReceiver.ts";

// Short retry schedule so retries happen within a test.
const fast = { pollMs: 50, retryBaseMs: 100, retryMaxMs: 400, disableAfter: 4, maxAttempts: 50 };
let t: TestServer;
const receivers: WebhookReceiver[] = [];
beforeAll(async () => {
  t = await startTestServer({ webhooks: fast });
});
afterAll(async () => {
  for (const r of receivers) await r.stop();
  await t.close();
});

async function receiver() {
  const r = new WebhookReceiver();
  await r.start();
  receivers.push(r);
  return r;
}

async function register(u: TestUser, r: WebhookReceiver, events = ["*"]) {
  const res = await u.api.post("/api/v1/webhooks", { url: r.url, events, description: "test" });
  expect(res.status).toBe(201);
  r.secret = res.body.webhook.secret;
  return res.body.webhook;
}

describe("webhooks", () => {
  it("registers, lists, updates and deletes; bad input changes nothing", async () => {
    const u = await t.user();
    const r = await receiver();
    const hook = await register(u, r, ["file.*"]);
    expect(hook).toMatchObject({
      url: r.url,
      events: ["file.*"],
      status: "enabled",
      failureCount: 0,
      disabledReason: null,
    });
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const listed = (await u.api.get("/api/v1/webhooks")).body.webhooks;
    expect(listed).toHaveLength(1);
    expect(listed[0].secret).toBeUndefined();
    expect(hook.secret.startsWith(listed[0].secretPrefix)).toBe(true);
    for (const [body, code] of [
      [{ url: "https://example.com/hook", events: ["*"] }, "webhook_destination_not_allowed"],
      [{ url: "http://10.0.0.1/hook", events: ["*"] }, "webhook_destination_not_allowed"],
      [{ url: "ftp://127.0.0.1/x", events: ["*"] }, "validation_failed"],
      [{ url: "not a url", events: ["*"] }, "validation_failed"],
      [{ url: r.url, events: ["file.exploded"] }, "validation_failed"],
      [{ url: r.url, events: [] }, "validation_failed"],
      [{ url: r.url }, "validation_failed"],
    ] as const) {
      expectError(await u.api.post("/api/v1/webhooks", body), 400, code);
    }
    expectError(
      await u.api.request("PATCH", `/api/v1/webhooks/${hook.id}`, { json: { url: "https://evil.example/" } }),
      400,
      "webhook_destination_not_allowed",
    );
    expectError(
      await u.api.request("PATCH", `/api/v1/webhooks/${hook.id}`, { json: { status: "paused" } }),
      400,
      "validation_failed",
    );
    expect((await u.api.get("/api/v1/webhooks")).body.webhooks).toEqual(listed);
    const other = await t.user();
    expectError(await other.api.get(`/api/v1/webhooks/${hook.id}`), 404, "not_found");
    const patched = await u.api.request("PATCH", `/api/v1/webhooks/${hook.id}`, {
      json: { events: ["folder.created"], description: "d" },
    });
    expect(patched.body.webhook).toMatchObject({ events: ["folder.created"], description: "d" });
    expect((await u.api.delete(`/api/v1/webhooks/${hook.id}`)).body).toEqual({ id: hook.id, deleted: true });
    expect((await u.api.get("/api/v1/webhooks")).body.webhooks).toEqual([]);
  });

  it("delivers signed events in order per file, filtered by kind", async () => {
    const u = await t.user();
    const r = await receiver();
    const hook = await register(u, r, ["file.*"]);
    const f = await mkfile(u, { name: "a.md", content: "1" });
    await u.api.post("/api/v1/folders", { name: "not a file event" });
    await u.api.put(`/api/v1/files/${f.id}`, { content: "2" });
    await u.api.put(`/api/v1/files/${f.id}`, { tags: ["t"] });
    await u.api.delete(`/api/v1/files/${f.id}`);
    await waitFor(() => r.received.length >= 4, "4 deliveries");
    expect(r.received.map((m) => m.event.type)).toEqual([
      "file.created",
      "file.updated",
      "file.updated",
      "file.deleted",
    ]);
    const seqs = r.received.map((m) => m.event.data.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(r.received[0]!.event.data).toMatchObject({
      id: f.id,
      kind: "file",
      name: "a.md",
      accountId: u.id,
    });
    expect(r.received.every((m) => m.verified)).toBe(true);
    // the signature really depends on the secret and the body
    const m = r.received[0]!;
    const headers = { "webhook-id": m.id, "webhook-timestamp": String(m.timestamp) };
    expect(verifySignature(r.secret, { ...headers, "webhook-signature": "v1,AAAA" }, m.body)).toBe(false);
    // The receiver has the last event before the service has its answer: the log says so a moment later.
    const deliveries = async () =>
      (await u.api.get(`/api/v1/webhooks/${hook.id}/deliveries`)).body.deliveries;
    await waitFor(async () => (await deliveries())[0]?.status === "delivered", "the last delivery recorded");
    const log = await deliveries();
    expect(log).toHaveLength(4);
    expect(log[0]).toMatchObject({
      status: "delivered",
      attempts: 1,
      lastStatusCode: 204,
      type: "file.deleted",
    });
    expect((await u.api.get(`/api/v1/webhooks/${hook.id}`)).body.webhook).toMatchObject({
      lastDeliveryStatus: "204",
      failureCount: 0,
    });
  });

  it("retries with backoff against a failing receiver, keeping order and webhook-id", async () => {
    const u = await t.user();
    const r = await receiver();
    const hook = await register(u, r);
    r.failNext = 3;
    const f = await mkfile(u, { name: "r.md" });
    await u.api.put(`/api/v1/files/${f.id}`, { content: "later" });
    await waitFor(() => r.received.length >= 2, "deliveries after recovery");
    expect(r.received.map((m) => m.event.type)).toEqual(["file.created", "file.updated"]);
    // the first message was tried 4 times under one id before the second was sent at all
    expect(r.attempts.slice(0, 4)).toEqual(Array(4).fill(r.received[0]!.id));
    const log = (await u.api.get(`/api/v1/webhooks/${hook.id}/deliveries`)).body.deliveries;
    expect(log.find((d: any) => d.type === "file.created")).toMatchObject({
      status: "delivered",
      attempts: 4,
      lastStatusCode: 204,
    });
    expect((await u.api.get(`/api/v1/webhooks/${hook.id}`)).body.webhook.status).toBe("enabled");
  });

  it("disables an endpoint after repeated failure, shows why, resumes when re-enabled", async () => {
    const u = await t.user();
    const r = await receiver();
    const hook = await register(u, r);
    r.failNext = 1000;
    await mkfile(u, { name: "x.md" });
    await waitFor(
      async () => (await u.api.get(`/api/v1/webhooks/${hook.id}`)).body.webhook.status === "disabled",
      "disabled",
    );
    const disabled = (await u.api.get(`/api/v1/webhooks/${hook.id}`)).body.webhook;
    expect(disabled.disabledReason).toMatch(/^4 consecutive failed deliveries; last: HTTP 500/);
    expect(disabled.failureCount).toBe(4);
    const tries = r.attempts.length;
    await new Promise((res) => setTimeout(res, 600));
    expect(r.attempts.length).toBe(tries); // nothing is sent to a disabled endpoint
    r.failNext = 0;
    // ...except a ping, to test it before enabling it again
    const ping = await u.api.post(`/api/v1/webhooks/${hook.id}/ping`);
    expect(ping.status).toBe(202);
    await waitFor(() => r.received.length === 1, "ping");
    expect(r.received[0]!.event).toMatchObject({ type: "webhook.ping", data: { webhookId: hook.id } });
    expect((await u.api.get(`/api/v1/webhooks/${hook.id}`)).body.webhook.status).toBe("disabled");
    const enabled = await u.api.request("PATCH", `/api/v1/webhooks/${hook.id}`, {
      json: { status: "enabled" },
    });
    expect(enabled.body.webhook).toMatchObject({ status: "enabled", failureCount: 0, disabledReason: null });
    await waitFor(() => r.received.length === 2, "delivery after re-enabling");
    expect(r.received[1]!.event.type).toBe("file.created");
  });

  it("410 Gone disables at once; a delivery can be sent again", async () => {
    const u = await t.user();
    const r = await receiver();
    const hook = await register(u, r);
    r.failNext = 1;
    r.failStatus = 410;
    await mkfile(u, { name: "g.md" });
    await waitFor(
      async () => (await u.api.get(`/api/v1/webhooks/${hook.id}`)).body.webhook.status === "disabled",
      "disabled",
    );
    expect((await u.api.get(`/api/v1/webhooks/${hook.id}`)).body.webhook.disabledReason).toMatch(/410/);
    await u.api.request("PATCH", `/api/v1/webhooks/${hook.id}`, { json: { status: "enabled" } });
    await waitFor(() => r.received.length === 1, "delivery");
    const [d] = (await u.api.get(`/api/v1/webhooks/${hook.id}/deliveries`)).body.deliveries;
    const again = await u.api.post(`/api/v1/webhooks/${hook.id}/deliveries/${d.id}/redeliver`);
    expect(again.body.delivery).toMatchObject({ id: d.id, status: "pending" });
    await waitFor(() => r.attempts.filter((a) => a === d.id).length === 3, "redelivery");
    expectError(
      await u.api.post(`/api/v1/webhooks/${hook.id}/deliveries/msg_nope/redeliver`),
      404,
      "not_found",
    );
  });
});

describe("webhook outbox across a restart", () => {
  it("events queued while the receiver is down are delivered by the next server process", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "txtfs-wh-"));
    const logger = createLogger("test", "warn");
    const opts = { host: "127.0.0.1", port: 0, dataDir, retentionDays: 90, logger, webhooks: fast };
    const r = new WebhookReceiver();
    await r.start(); // to learn a free port
    const port = r.port;
    await r.stop();
    let server = await startServer(opts);
    try {
      const { secret } = await server.store.transaction(async (tx) => {
        const u = await createUser(tx, "restart@example.com", "R");
        return createKey(tx, u.id, { label: "t" });
      });
      const api = new Api(server.url, secret);
      const hook = (
        await api.post("/api/v1/webhooks", { url: `http://127.0.0.1:${port}/hook`, events: ["*"] })
      ).body.webhook;
      r.secret = hook.secret;
      const f = (await api.post("/api/v1/files", { name: "one.md" })).body.file;
      await api.put(`/api/v1/files/${f.id}`, { content: "two" });
      await api.post("/api/v1/folders", { name: "three" });
      await waitFor(
        async () =>
          (await api.get(`/api/v1/webhooks/${hook.id}/deliveries`)).body.deliveries.some(
            (d: any) => d.attempts > 0,
          ),
        "a failed attempt",
      );
      await server.close();
      await r.start(port);
      server = await startServer(opts);
      await waitFor(() => r.received.length >= 3, "deliveries after the restart");
      // in order per item (different items may interleave)
      const types = r.received.map((m) => m.event.type);
      expect(types.filter((x) => x.startsWith("file."))).toEqual(["file.created", "file.updated"]);
      expect(types).toContain("folder.created");
    } finally {
      await server.close();
      await r.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

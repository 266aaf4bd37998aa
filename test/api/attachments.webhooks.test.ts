// Attachment events reach only the webhooks that name them (`attachment.*` or one type); a webhook
// for `*` (the spec's events) never hears of them.
import { afterAll, beforeAll, expect, it } from "vitest";
import { attach, bin } from "../helpers/attachments.ts";
import { mkfile, startTestServer, type TestServer, type TestUser } from "../helpers/server.ts";
import { WebhookReceiver, waitFor } from "../helpers/webhookReceiver.ts";

let t: TestServer;
let alice: TestUser;
const receivers: WebhookReceiver[] = [];
beforeAll(async () => {
  t = await startTestServer({ webhooks: { pollMs: 50, retryBaseMs: 100, retryMaxMs: 400 } });
  alice = await t.user();
});
afterAll(async () => {
  for (const r of receivers) await r.stop();
  await t.close();
});

async function hook(events: string[]) {
  const r = new WebhookReceiver();
  await r.start();
  receivers.push(r);
  const res = await alice.api.post("/api/v1/webhooks", { url: r.url, events });
  expect(res.status, res.text).toBe(201);
  r.secret = res.body.webhook.secret;
  return { r, id: res.body.webhook.id as string };
}

it("attachment.* hears creates, updates and deletes; * does not", async () => {
  const named = await hook(["attachment.*"]);
  const all = await hook(["*"]);
  const a = await attach(t, alice, "cover.jpg", Buffer.from([0xff, 0xd8]));
  await bin(t, alice, "PUT", `/api/v1/attachments/${a.id}/raw`, Buffer.from([0xff, 0xd9]), {
    "content-type": "image/jpeg",
  });
  await alice.api.delete(`/api/v1/attachments/${a.id}`);
  await mkfile(alice, { name: "plain.md", content: "x" });
  await waitFor(() => named.r.received.length >= 3, "3 attachment deliveries");
  expect(named.r.received.map((m) => m.event.type)).toEqual([
    "attachment.created",
    "attachment.updated",
    "attachment.deleted",
  ]);
  expect(named.r.received[0]!.event.data).toMatchObject({
    id: a.id,
    kind: "attachment",
    name: "cover.jpg",
    folderId: null,
  });
  expect(named.r.received.every((m) => m.verified)).toBe(true);
  // The outbox is written with the change: what `*` was given is all in its delivery log already.
  const log = await alice.api.get(`/api/v1/webhooks/${all.id}/deliveries`);
  expect(log.body.deliveries.map((d: { type: string }) => d.type)).toEqual(["file.created"]);
  const refused = await alice.api.post("/api/v1/webhooks", {
    url: named.r.url,
    events: ["attachment.moved"],
  });
  expect(refused.status).toBe(400);
});

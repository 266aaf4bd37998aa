// Webhooks (the spec's `events` verb): endpoints an account registers to hear about changes,
// delivered the way Standard Webhooks describes (signed id.timestamp.body, retried, in order per
// item). Events are written to an outbox in the transaction of the change (transactional outbox),
// so a delivery can never be lost to a crash between the change and its sending.
import { randomBytes } from "node:crypto";
import type { ChangeRecord } from "../../lib/apiTypes.ts";
import { newId } from "../../lib/ids.ts";
import { nowIso } from "../../lib/time.ts";
import type { DeliveryRow, WebhookRow } from "../../store/repos/webhooks.ts";
import type { Tx } from "../../store/store.ts";
import type { Actor } from "./actor.ts";
import { invalid, ServiceError } from "./errors.ts";
import { checkMaxChars } from "./limits.ts";

export const EVENT_TYPES = [
  "file.created",
  "file.updated",
  "file.deleted",
  "folder.created",
  "folder.updated",
  "folder.deleted",
  // Attachments (an extension of the spec): delivered only to webhooks that name them, never to `*`.
  "attachment.created",
  "attachment.updated",
  "attachment.deleted",
] as const;

/** Event types a webhook receives only when it names them (or their `kind.*`). */
const NAMED_ONLY = /^attachment\./;

/** Where deliveries may go: loopback always; other hosts only when the operator lists them. */
export interface DestinationPolicy {
  allowHosts: readonly string[];
}

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[?::1\]?)$/i;

export function destinationAllowed(url: URL, policy: DestinationPolicy): boolean {
  const host = url.hostname.toLowerCase();
  return LOOPBACK.test(host) || policy.allowHosts.some((h) => h.toLowerCase() === host);
}

function checkUrl(raw: string, policy: DestinationPolicy): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid("url", "is not an absolute URL");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw invalid("url", "must be http or https");
  if (url.username || url.password) throw invalid("url", "must not carry credentials");
  checkMaxChars("url", raw, 2000);
  if (!destinationAllowed(url, policy)) {
    throw new ServiceError(
      400,
      "webhook_destination_not_allowed",
      `url: ${url.hostname} is not an allowed webhook destination on this server.`,
      "Use a loopback address, or ask the operator to allow the host (txtfs serve --webhook-allow-host HOST).",
      [{ field: "url", code: "destination_not_allowed", message: `${url.hostname} is not allowed` }],
    );
  }
  return url.toString();
}

function checkEvents(events: readonly string[]): string[] {
  if (events.length === 0) throw invalid("events", 'must name at least one event type (or "*")');
  for (const [i, e] of events.entries()) {
    const ok =
      e === "*" || /^(file|folder|attachment)\.\*$/.test(e) || (EVENT_TYPES as readonly string[]).includes(e);
    if (!ok)
      throw invalid(
        `events[${i}]`,
        `${JSON.stringify(e)} is not an event type (${EVENT_TYPES.join(", ")}, file.*, folder.*, attachment.*, *)`,
      );
  }
  return [...new Set(events)];
}

export function matches(events: readonly string[], type: string): boolean {
  return events.some(
    (e) =>
      (e === "*" && !NAMED_ONLY.test(type)) ||
      e === type ||
      (e.endsWith(".*") && type.startsWith(e.slice(0, -1))),
  );
}

export function toWebhook(row: WebhookRow) {
  return {
    id: row.id,
    url: row.url,
    events: JSON.parse(row.events) as string[],
    description: row.description,
    status: row.status,
    disabledReason: row.disabled_reason,
    failureCount: row.failure_count,
    secretPrefix: row.secret.slice(0, 10),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    lastDeliveryAt: row.last_delivery_at,
    lastDeliveryStatus: row.last_delivery_status,
  };
}

export function toDelivery(row: DeliveryRow) {
  return {
    id: row.id,
    webhookId: row.webhook_id,
    type: row.event_type,
    seq: Number(row.feed_seq),
    status: row.status,
    attempts: row.attempts,
    nextAttemptAt: row.status === "pending" ? row.next_attempt_at : null,
    lastStatusCode: row.last_status_code,
    lastError: row.last_error,
    createdAt: row.created_at,
    deliveredAt: row.delivered_at,
    payload: JSON.parse(row.payload) as unknown,
  };
}

export interface WebhookInput {
  url: string;
  events: string[];
  description?: string;
}

export async function createWebhook(tx: Tx, actor: Actor, input: WebhookInput, policy: DestinationPolicy) {
  const now = nowIso();
  const row: WebhookRow = {
    id: newId("wh"),
    owner_id: actor.userId,
    url: checkUrl(input.url, policy),
    events: JSON.stringify(checkEvents(input.events)),
    description: checkMaxChars("description", input.description ?? "", 500),
    // Standard Webhooks: whsec_ + base64 of 24-64 random bytes.
    secret: `whsec_${randomBytes(32).toString("base64")}`,
    status: "enabled",
    disabled_reason: null,
    failure_count: 0,
    created_at: now,
    updated_at: now,
    last_delivery_at: null,
    last_delivery_status: null,
  };
  await tx.webhooks.insert(row);
  // The secret is shown this once; afterwards only its prefix.
  return { webhook: { ...toWebhook(row), secret: row.secret } };
}

export async function requireWebhook(tx: Tx, actor: Actor, id: string): Promise<WebhookRow> {
  const row = await tx.webhooks.byId(id);
  if (!row || row.owner_id !== actor.userId) {
    throw new ServiceError(
      404,
      "not_found",
      `No webhook with id ${id} is registered to your account.`,
      "List your webhooks with GET /api/v1/webhooks.",
    );
  }
  return row;
}

export interface WebhookPatch {
  url?: string;
  events?: string[];
  description?: string;
  status?: "enabled" | "disabled";
}

export async function updateWebhook(
  tx: Tx,
  actor: Actor,
  id: string,
  patch: WebhookPatch,
  policy: DestinationPolicy,
) {
  const row = await requireWebhook(tx, actor, id);
  const next: WebhookRow = { ...row, updated_at: nowIso() };
  if (patch.url !== undefined) next.url = checkUrl(patch.url, policy);
  if (patch.events !== undefined) next.events = JSON.stringify(checkEvents(patch.events));
  if (patch.description !== undefined)
    next.description = checkMaxChars("description", patch.description, 500);
  if (patch.status === "enabled" && row.status !== "enabled") {
    // Re-enabling starts a fresh count; pending deliveries resume in order.
    next.status = "enabled";
    next.disabled_reason = null;
    next.failure_count = 0;
  } else if (patch.status === "disabled" && row.status !== "disabled") {
    next.status = "disabled";
    next.disabled_reason = "disabled by the owner";
  }
  await tx.webhooks.update(next);
  return { webhook: toWebhook(next) };
}

export async function deleteWebhook(tx: Tx, actor: Actor, id: string) {
  await requireWebhook(tx, actor, id);
  await tx.webhooks.delete(id);
  return { id, deleted: true as const };
}

export async function listDeliveries(tx: Tx, actor: Actor, id: string, limit: number) {
  await requireWebhook(tx, actor, id);
  return { deliveries: (await tx.webhooks.deliveries(id, limit)).map(toDelivery) };
}

/** Sends a delivery again (a failed one, or a delivered one the receiver lost), keeping its webhook-id. */
export async function redeliver(tx: Tx, actor: Actor, id: string, deliveryId: string) {
  await requireWebhook(tx, actor, id);
  const row = await tx.webhooks.deliveryById(deliveryId);
  if (!row || row.webhook_id !== id) {
    throw new ServiceError(
      404,
      "not_found",
      `No delivery ${deliveryId} on webhook ${id}.`,
      "List deliveries with GET /api/v1/webhooks/:id/deliveries.",
    );
  }
  await tx.webhooks.finish(deliveryId, {
    status: "pending",
    attempts: 0,
    next_attempt_at: nowIso(),
    last_status_code: row.last_status_code,
    last_error: row.last_error,
    delivered_at: null,
  });
  return {
    delivery: toDelivery({
      ...row,
      status: "pending",
      attempts: 0,
      next_attempt_at: nowIso(),
      delivered_at: null,
    }),
  };
}

/** Queues a `webhook.ping` (even to a disabled endpoint, to test it before enabling it again). */
export async function pingWebhook(tx: Tx, actor: Actor, id: string) {
  const hook = await requireWebhook(tx, actor, id);
  const user = await tx.users.byId(actor.userId);
  const now = nowIso();
  const row: DeliveryRow = {
    id: newId("msg"),
    webhook_id: hook.id,
    feed_seq: Number(user?.feed_seq ?? 0),
    event_type: "webhook.ping",
    order_key: `ping:${hook.id}`,
    status: "pending",
    attempts: 0,
    next_attempt_at: now,
    locked_until: null,
    last_status_code: null,
    last_error: null,
    created_at: now,
    delivered_at: null,
    payload: JSON.stringify({
      type: "webhook.ping",
      timestamp: now,
      data: { webhookId: hook.id, accountId: actor.userId },
    }),
  };
  await tx.webhooks.enqueue(row);
  return { delivery: toDelivery(row) };
}

/**
 * Called by the feed for every record it writes: queues one delivery per enabled endpoint of that
 * account that wants the event. Thin payload (no bodies): receivers fetch what they need or read
 * the feed from `data.seq`.
 */
export async function enqueueEvent(
  tx: Tx,
  accountId: string,
  change: ChangeRecord,
  created: boolean,
): Promise<void> {
  const hooks = await tx.webhooks.enabledFor(accountId);
  if (hooks.length === 0) return;
  const type = `${change.kind}.${change.deleted ? "deleted" : created ? "created" : "updated"}`;
  const item = change.file ?? change.folder ?? (change.attachment as { name: string } | undefined);
  const payload = JSON.stringify({
    type,
    timestamp: change.changedAt,
    data: {
      id: change.id,
      kind: change.kind,
      accountId,
      seq: change.seq,
      ...(change.etag ? { etag: change.etag } : {}),
      ...(item ? { name: item.name } : {}),
      ...(change.file ? { folderId: change.file.folderId } : {}),
      ...(change.attachment ? { folderId: change.attachment.folderId } : {}),
      ...(change.folder ? { parentFolderId: change.folder.parentFolderId } : {}),
      ...(change.reason ? { reason: change.reason } : {}),
    },
  });
  for (const hook of hooks) {
    if (!matches(JSON.parse(hook.events), type)) continue;
    await tx.webhooks.enqueue({
      id: newId("msg"),
      webhook_id: hook.id,
      feed_seq: change.seq,
      event_type: type,
      order_key: change.id,
      status: "pending",
      attempts: 0,
      next_attempt_at: change.changedAt,
      locked_until: null,
      last_status_code: null,
      last_error: null,
      created_at: change.changedAt,
      delivered_at: null,
      payload,
    });
  }
}

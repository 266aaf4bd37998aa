import type { Sql } from "../store.ts";

export interface WebhookRow {
  id: string;
  owner_id: string;
  url: string;
  events: string; // JSON array of event types, or ["*"]
  description: string;
  secret: string;
  status: "enabled" | "disabled";
  disabled_reason: string | null;
  failure_count: number;
  created_at: string;
  updated_at: string;
  last_delivery_at: string | null;
  last_delivery_status: string | null;
}

export type DeliveryStatus = "pending" | "delivered" | "failed";

export interface DeliveryRow {
  id: string;
  webhook_id: string;
  feed_seq: number;
  event_type: string;
  /** Deliveries with one order key (one file or folder) go out strictly in feed_seq order. */
  order_key: string;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: string;
  locked_until: string | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: string;
  delivered_at: string | null;
  payload: string;
}

/** Webhook endpoints and their outbox of deliveries (written in the transaction of the change). */
export class WebhookRepo {
  private readonly sql: Sql;

  constructor(sql: Sql) {
    this.sql = sql;
  }

  insert(row: WebhookRow) {
    return this.sql.run(
      `INSERT INTO webhooks (id, owner_id, url, events, description, secret, status, disabled_reason,
         failure_count, created_at, updated_at, last_delivery_at, last_delivery_status)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        row.id,
        row.owner_id,
        row.url,
        row.events,
        row.description,
        row.secret,
        row.status,
        row.disabled_reason,
        row.failure_count,
        row.created_at,
        row.updated_at,
        row.last_delivery_at,
        row.last_delivery_status,
      ],
    );
  }

  update(row: WebhookRow) {
    return this.sql.run(
      `UPDATE webhooks SET url = ?, events = ?, description = ?, status = ?, disabled_reason = ?,
         failure_count = ?, updated_at = ?, last_delivery_at = ?, last_delivery_status = ? WHERE id = ?`,
      [
        row.url,
        row.events,
        row.description,
        row.status,
        row.disabled_reason,
        row.failure_count,
        row.updated_at,
        row.last_delivery_at,
        row.last_delivery_status,
        row.id,
      ],
    );
  }

  byId(id: string): Promise<WebhookRow | undefined> {
    return this.sql.get("SELECT * FROM webhooks WHERE id = ?", [id]);
  }

  listFor(ownerId: string): Promise<WebhookRow[]> {
    return this.sql.all("SELECT * FROM webhooks WHERE owner_id = ? ORDER BY id", [ownerId]);
  }

  enabledFor(ownerId: string): Promise<WebhookRow[]> {
    return this.sql.all("SELECT * FROM webhooks WHERE owner_id = ? AND status = 'enabled' ORDER BY id", [
      ownerId,
    ]);
  }

  async delete(id: string) {
    await this.sql.run("DELETE FROM webhook_deliveries WHERE webhook_id = ?", [id]);
    return this.sql.run("DELETE FROM webhooks WHERE id = ?", [id]);
  }

  enqueue(row: DeliveryRow) {
    return this.sql.run(
      `INSERT INTO webhook_deliveries (id, webhook_id, feed_seq, event_type, order_key, status, attempts,
         next_attempt_at, locked_until, last_status_code, last_error, created_at, delivered_at, payload)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        row.id,
        row.webhook_id,
        row.feed_seq,
        row.event_type,
        row.order_key,
        row.status,
        row.attempts,
        row.next_attempt_at,
        row.locked_until,
        row.last_status_code,
        row.last_error,
        row.created_at,
        row.delivered_at,
        row.payload,
      ],
    );
  }

  /**
   * Pending deliveries that are due, of enabled endpoints (pings go to disabled ones too), and first in line for their item (no
   * earlier pending delivery of the same endpoint and item): that keeps each file's events in order.
   */
  due(now: string, limit: number): Promise<DeliveryRow[]> {
    return this.sql.all(
      `SELECT d.* FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
       WHERE d.status = 'pending' AND (w.status = 'enabled' OR d.event_type = 'webhook.ping')
         AND d.next_attempt_at <= ?
         AND (d.locked_until IS NULL OR d.locked_until < ?)
         AND NOT EXISTS (SELECT 1 FROM webhook_deliveries e WHERE e.webhook_id = d.webhook_id
           AND e.order_key = d.order_key AND e.status = 'pending' AND e.feed_seq < d.feed_seq)
       ORDER BY d.feed_seq LIMIT ?`,
      [now, now, limit],
    );
  }

  /**
   * Claims a delivery with a lease: a conditional UPDATE, so across several server processes on one
   * database exactly one wins (`changes === 1`); a crashed worker's lease simply runs out.
   */
  async claim(id: string, now: string, until: string): Promise<boolean> {
    const r = await this.sql.run(
      `UPDATE webhook_deliveries SET locked_until = ?
       WHERE id = ? AND status = 'pending' AND (locked_until IS NULL OR locked_until < ?)`,
      [until, id, now],
    );
    return r.changes === 1;
  }

  finish(
    id: string,
    fields: Pick<
      DeliveryRow,
      "status" | "attempts" | "next_attempt_at" | "last_status_code" | "last_error" | "delivered_at"
    >,
  ) {
    return this.sql.run(
      `UPDATE webhook_deliveries SET status = ?, attempts = ?, next_attempt_at = ?, last_status_code = ?,
         last_error = ?, delivered_at = ?, locked_until = NULL WHERE id = ?`,
      [
        fields.status,
        fields.attempts,
        fields.next_attempt_at,
        fields.last_status_code,
        fields.last_error,
        fields.delivered_at,
        id,
      ],
    );
  }

  /** Drops delivered and failed deliveries created before `before` (the log keeps the recent ones). */
  purgeFinished(before: string) {
    return this.sql.run("DELETE FROM webhook_deliveries WHERE status <> 'pending' AND created_at < ?", [
      before,
    ]);
  }

  deliveryById(id: string): Promise<DeliveryRow | undefined> {
    return this.sql.get("SELECT * FROM webhook_deliveries WHERE id = ?", [id]);
  }

  deliveries(webhookId: string, limit: number): Promise<DeliveryRow[]> {
    return this.sql.all(
      "SELECT * FROM webhook_deliveries WHERE webhook_id = ? ORDER BY feed_seq DESC, id DESC LIMIT ?",
      [webhookId, limit],
    );
  }
}

// Whole-store counts for the operator (GET /metrics): cheap aggregate queries, portable SQL.
import type { Sql } from "../store.ts";

export interface StoreStats {
  users: number;
  activeKeys: number;
  folders: number;
  files: number;
  fileBytes: number;
  /** Every change ever appended to any account's feed (the sum of the feeds' heads). */
  feedChanges: number;
  /** Requests made today (UTC) with API keys, over every key (flushed every few seconds). */
  keyRequestsToday: number;
  /** Webhook deliveries by status (pending = the queue). */
  webhookDeliveries: Record<string, number>;
}

const num = (v: unknown) => Number(v ?? 0);

export class StatsRepo {
  private readonly sql: Sql;
  constructor(sql: Sql) {
    this.sql = sql;
  }

  async snapshot(now: string): Promise<StoreStats> {
    const totals = await this.sql.get<Record<string, unknown>>(
      `SELECT
         (SELECT COUNT(*) FROM users) AS users,
         (SELECT COALESCE(SUM(feed_seq), 0) FROM users) AS feed_changes,
         (SELECT COUNT(*) FROM api_keys
            WHERE revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)) AS active_keys,
         (SELECT COUNT(*) FROM folders) AS folders,
         (SELECT COUNT(*) FROM files) AS files,
         (SELECT COALESCE(SUM(size), 0) FROM files) AS file_bytes,
         (SELECT COALESCE(SUM(requests_today), 0) FROM api_keys WHERE requests_day = ?) AS key_requests`,
      [now, now.slice(0, 10)],
    );
    const deliveries = await this.sql.all<{ status: string; n: unknown }>(
      "SELECT status, COUNT(*) AS n FROM webhook_deliveries GROUP BY status",
    );
    return {
      users: num(totals?.users),
      activeKeys: num(totals?.active_keys),
      folders: num(totals?.folders),
      files: num(totals?.files),
      fileBytes: num(totals?.file_bytes),
      feedChanges: num(totals?.feed_changes),
      keyRequestsToday: num(totals?.key_requests),
      webhookDeliveries: Object.fromEntries(deliveries.map((d) => [d.status, num(d.n)])),
    };
  }
}

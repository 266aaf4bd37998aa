import type { Sql } from "../store.ts";

/** One key's usage on one UTC day (statuses and latency as JSON, see http/usage.ts). */
export interface KeyUsageRow {
  key_id: string;
  day: string;
  requests: number;
  rate_limited: number;
  statuses: string;
  latency: string;
}

export class UsageRepo {
  private readonly sql: Sql;

  constructor(sql: Sql) {
    this.sql = sql;
  }

  get(keyId: string, day: string): Promise<KeyUsageRow | undefined> {
    return this.sql.get("SELECT * FROM key_usage_daily WHERE key_id = ? AND day = ?", [keyId, day]);
  }

  upsert(row: KeyUsageRow) {
    return this.sql.run(
      `INSERT INTO key_usage_daily (key_id, day, requests, rate_limited, statuses, latency)
       VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (key_id, day) DO UPDATE SET
         requests = excluded.requests, rate_limited = excluded.rate_limited,
         statuses = excluded.statuses, latency = excluded.latency`,
      [row.key_id, row.day, row.requests, row.rate_limited, row.statuses, row.latency],
    );
  }

  /** Every day from `fromDay` on for a user's keys, oldest first. */
  forUser(userId: string, fromDay: string): Promise<KeyUsageRow[]> {
    return this.sql.all(
      `SELECT u.* FROM key_usage_daily u JOIN api_keys k ON k.id = u.key_id
       WHERE k.user_id = ? AND u.day >= ? ORDER BY u.day, u.key_id`,
      [userId, fromDay],
    );
  }
}

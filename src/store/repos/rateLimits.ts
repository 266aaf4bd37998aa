import type { Sql } from "../store.ts";

export interface RateWindowRow {
  rate_key: string;
  window_start: number;
  used: number;
}

/** Fixed-window rate-limit counters in the database, for servers sharing it. */
export class RateLimitRepo {
  private readonly sql: Sql;

  constructor(sql: Sql) {
    this.sql = sql;
  }

  get(key: string): Promise<RateWindowRow | undefined> {
    return this.sql.get("SELECT * FROM rate_limits WHERE rate_key = ?", [key]);
  }

  /**
   * Adds `points` to the key's window; a window that started at or before `expiredAt` is replaced
   * by one starting at `start`. Returns the window as stored.
   */
  async add(key: string, start: number, points: number, expiredAt: number): Promise<RateWindowRow> {
    const row = await this.sql.get<RateWindowRow>(
      `INSERT INTO rate_limits (rate_key, window_start, used) VALUES (?, ?, ?)
       ON CONFLICT (rate_key) DO UPDATE SET
         used = CASE WHEN rate_limits.window_start <= ? THEN excluded.used ELSE rate_limits.used + excluded.used END,
         window_start = CASE WHEN rate_limits.window_start <= ? THEN excluded.window_start
                        ELSE rate_limits.window_start END
       RETURNING rate_key, window_start, used`,
      [key, start, points, expiredAt, expiredAt],
    );
    return { rate_key: key, window_start: Number(row!.window_start), used: Number(row!.used) };
  }

  purgeBefore(expiredAt: number) {
    return this.sql.run("DELETE FROM rate_limits WHERE window_start <= ?", [expiredAt]);
  }
}

import type { Sql } from "../store.ts";
import type { FeedRow } from "./rows.ts";

/**
 * The change feed keeps one row per (account, item) at its latest seq (CouchDB-style collapse):
 * every change re-stamps the row, so reading from cursor 0 yields the current state.
 */
export class FeedRepo {
  private readonly sql: Sql;

  constructor(sql: Sql) {
    this.sql = sql;
  }

  upsert(row: FeedRow) {
    return this.sql.run(
      `INSERT INTO feed (account_id, seq, kind, item_id, deleted, reason, record, changed_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (account_id, kind, item_id) DO UPDATE SET seq = excluded.seq, deleted = excluded.deleted,
         reason = excluded.reason, record = excluded.record, changed_at = excluded.changed_at`,
      [row.account_id, row.seq, row.kind, row.item_id, row.deleted, row.reason, row.record, row.changed_at],
    );
  }

  since(
    accountId: string,
    cursor: number,
    limit: number,
    includeTombstones: boolean,
    withoutAttachments = false,
  ): Promise<FeedRow[]> {
    return this.sql.all(
      `SELECT * FROM feed WHERE account_id = ? AND seq > ? ${includeTombstones ? "" : "AND deleted = 0"}
       ${withoutAttachments ? "AND kind <> 'attachment'" : ""} ORDER BY seq LIMIT ?`,
      [accountId, cursor, limit],
    );
  }

  /** Deletes tombstones changed before `before`; returns the highest purged seq per account. */
  async purgeTombstones(before: string): Promise<Map<string, number>> {
    const rows = await this.sql.all<{ account_id: string; seq: number }>(
      "SELECT account_id, MAX(seq) AS seq FROM feed WHERE deleted = 1 AND changed_at < ? GROUP BY account_id",
      [before],
    );
    await this.sql.run("DELETE FROM feed WHERE deleted = 1 AND changed_at < ?", [before]);
    return new Map(rows.map((r) => [r.account_id, Number(r.seq)]));
  }
}

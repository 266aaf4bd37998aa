import type { Sql } from "../store.ts";
import type { IdempotencyRow } from "./rows.ts";

export class IdempotencyRepo {
  private readonly sql: Sql;

  constructor(sql: Sql) {
    this.sql = sql;
  }

  get(principal: string, key: string, now: string): Promise<IdempotencyRow | undefined> {
    return this.sql.get("SELECT * FROM idempotency_keys WHERE principal = ? AND key = ? AND expires_at > ?", [
      principal,
      key,
      now,
    ]);
  }

  /** Saves the response; an expired row under the same key is replaced. */
  async save(row: IdempotencyRow) {
    await this.sql.run("DELETE FROM idempotency_keys WHERE principal = ? AND key = ?", [
      row.principal,
      row.key,
    ]);
    return this.sql.run(
      `INSERT INTO idempotency_keys (principal, key, fingerprint, status, headers, body, created_at, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        row.principal,
        row.key,
        row.fingerprint,
        row.status,
        row.headers,
        row.body,
        row.created_at,
        row.expires_at,
      ],
    );
  }

  purgeExpired(now: string) {
    return this.sql.run("DELETE FROM idempotency_keys WHERE expires_at <= ?", [now]);
  }
}

import type { Sql } from "../store.ts";
import type { ApiKeyRow } from "./rows.ts";

export class KeyRepo {
  private readonly sql: Sql;

  constructor(sql: Sql) {
    this.sql = sql;
  }

  insert(row: Omit<ApiKeyRow, "last_used_at" | "requests_today" | "requests_day" | "revoked_at">) {
    return this.sql.run(
      `INSERT INTO api_keys (id, user_id, label, token_prefix, token_hash, scopes, created_at, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        row.id,
        row.user_id,
        row.label,
        row.token_prefix,
        row.token_hash,
        row.scopes,
        row.created_at,
        row.expires_at,
      ],
    );
  }

  byHash(hash: string): Promise<ApiKeyRow | undefined> {
    return this.sql.get("SELECT * FROM api_keys WHERE token_hash = ?", [hash]);
  }

  byId(id: string): Promise<ApiKeyRow | undefined> {
    return this.sql.get("SELECT * FROM api_keys WHERE id = ?", [id]);
  }

  listForUser(userId: string): Promise<ApiKeyRow[]> {
    return this.sql.all("SELECT * FROM api_keys WHERE user_id = ? ORDER BY created_at, id", [userId]);
  }

  revoke(id: string, at: string) {
    return this.sql.run("UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", [at, id]);
  }

  /** Adds `count` requests made on `day` (a new UTC day restarts the counter). */
  recordUsage(id: string, day: string, count: number, lastUsedAt: string) {
    return this.sql.run(
      `UPDATE api_keys SET
         requests_today = CASE WHEN requests_day = ? THEN requests_today + ? ELSE ? END,
         requests_day = ?,
         last_used_at = CASE WHEN last_used_at IS NULL OR last_used_at < ? THEN ? ELSE last_used_at END
       WHERE id = ?`,
      [day, count, count, day, lastUsedAt, lastUsedAt, id],
    );
  }

  setLabel(id: string, label: string) {
    return this.sql.run("UPDATE api_keys SET label = ? WHERE id = ?", [label, id]);
  }

  /** Brings a key's expiry forward (rotation's grace period); never extends it. */
  expireBy(id: string, at: string) {
    return this.sql.run(
      "UPDATE api_keys SET expires_at = ? WHERE id = ? AND (expires_at IS NULL OR expires_at > ?)",
      [at, id, at],
    );
  }
}

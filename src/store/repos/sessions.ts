import type { Sql } from "../store.ts";

export interface SessionRow {
  /** SHA-256 of the cookie value: the cookie itself is never stored. */
  id_hash: string;
  user_id: string;
  identity_id: string | null;
  csrf_token: string;
  created_at: string;
  expires_at: string;
}

export class SessionRepo {
  private readonly sql: Sql;

  constructor(sql: Sql) {
    this.sql = sql;
  }

  insert(row: SessionRow) {
    return this.sql.run(
      "INSERT INTO sessions (id_hash, user_id, identity_id, csrf_token, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)",
      [row.id_hash, row.user_id, row.identity_id, row.csrf_token, row.created_at, row.expires_at],
    );
  }

  byHash(idHash: string): Promise<SessionRow | undefined> {
    return this.sql.get("SELECT * FROM sessions WHERE id_hash = ?", [idHash]);
  }

  delete(idHash: string) {
    return this.sql.run("DELETE FROM sessions WHERE id_hash = ?", [idHash]);
  }

  purgeExpired(now: string) {
    return this.sql.run("DELETE FROM sessions WHERE expires_at <= ?", [now]);
  }
}

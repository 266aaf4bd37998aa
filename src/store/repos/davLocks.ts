import type { Sql } from "../store.ts";
import type { Dialect } from "./search.ts";

/** A WebDAV write lock granted on `/dav/` (src/dav/locks.ts), kept where every server sees it. */
export interface DavLockRow {
  token: string;
  user_id: string;
  path: string;
  scope: string;
  depth: string;
  owner: string;
  timeout_s: number;
  /** ISO time: a lock not refreshed before then is gone. */
  expires_at: string;
}

export class DavLockRepo {
  private readonly sql: Sql;
  private readonly dialect: Dialect;

  constructor(sql: Sql, dialect: Dialect) {
    this.sql = sql;
    this.dialect = dialect;
  }

  /** A user's locks that have not expired at `now`. */
  async live(userId: string, now: string): Promise<DavLockRow[]> {
    const rows = await this.sql.all<DavLockRow>(
      "SELECT * FROM dav_locks WHERE user_id = ? AND expires_at > ? ORDER BY token",
      [userId, now],
    );
    return rows.map((r) => ({ ...r, timeout_s: Number(r.timeout_s) }));
  }

  /**
   * Serializes the changes of one user's locks across servers until the unit of work ends (SQLite
   * has one writer already; PostgreSQL locks the user's row), so two grants cannot both pass.
   */
  async hold(userId: string): Promise<void> {
    if (this.dialect === "postgres")
      await this.sql.get("SELECT id FROM users WHERE id = ? FOR UPDATE", [userId]);
  }

  put(row: DavLockRow) {
    return this.sql.run(
      `INSERT INTO dav_locks (token, user_id, path, scope, depth, owner, timeout_s, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (token) DO UPDATE SET timeout_s = excluded.timeout_s, expires_at = excluded.expires_at`,
      [row.token, row.user_id, row.path, row.scope, row.depth, row.owner, row.timeout_s, row.expires_at],
    );
  }

  delete(userId: string, token: string) {
    return this.sql.run("DELETE FROM dav_locks WHERE user_id = ? AND token = ?", [userId, token]);
  }

  deleteExpired(userId: string, now: string) {
    return this.sql.run("DELETE FROM dav_locks WHERE user_id = ? AND expires_at <= ?", [userId, now]);
  }
}

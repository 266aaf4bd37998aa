import type { Sql } from "../store.ts";
import type { TempUrlRow } from "./rows.ts";

/** Read-only links to a file's text that work without credentials; only a hash of the token is kept. */
export class TempUrlRepo {
  private readonly sql: Sql;

  constructor(sql: Sql) {
    this.sql = sql;
  }

  insert(row: TempUrlRow) {
    return this.sql.run(
      `INSERT INTO temp_urls (id, file_id, token_hash, created_by, created_at, expires_at, revoked_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
      [row.id, row.file_id, row.token_hash, row.created_by, row.created_at, row.expires_at, row.revoked_at],
    );
  }

  byHash(hash: string): Promise<TempUrlRow | undefined> {
    return this.sql.get("SELECT * FROM temp_urls WHERE token_hash = ?", [hash]);
  }

  byId(id: string): Promise<TempUrlRow | undefined> {
    return this.sql.get("SELECT * FROM temp_urls WHERE id = ?", [id]);
  }

  listForFile(fileId: string): Promise<TempUrlRow[]> {
    return this.sql.all("SELECT * FROM temp_urls WHERE file_id = ? ORDER BY created_at DESC, id", [fileId]);
  }

  revoke(id: string, at: string) {
    return this.sql.run("UPDATE temp_urls SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", [at, id]);
  }

  deleteForFile(fileId: string) {
    return this.sql.run("DELETE FROM temp_urls WHERE file_id = ?", [fileId]);
  }
}

import type { Sql } from "../store.ts";
import type { TempUrlRow, ThemeRow } from "./rows.ts";

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

/** Saved themes: the account default and per-file/folder/group settings. */
export class ThemeRepo {
  private readonly sql: Sql;

  constructor(sql: Sql) {
    this.sql = sql;
  }

  get(scopeType: ThemeRow["scope_type"], scopeId: string): Promise<ThemeRow | undefined> {
    return this.sql.get("SELECT * FROM themes WHERE scope_type = ? AND scope_id = ?", [scopeType, scopeId]);
  }

  upsert(row: ThemeRow) {
    return this.sql.run(
      `INSERT INTO themes (scope_type, scope_id, theme_id, overrides, revision, updated_by, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (scope_type, scope_id) DO UPDATE SET theme_id = excluded.theme_id,
         overrides = excluded.overrides, revision = excluded.revision, updated_by = excluded.updated_by,
         updated_at = excluded.updated_at`,
      [
        row.scope_type,
        row.scope_id,
        row.theme_id,
        row.overrides,
        row.revision,
        row.updated_by,
        row.updated_at,
      ],
    );
  }

  delete(scopeType: ThemeRow["scope_type"], scopeId: string) {
    return this.sql.run("DELETE FROM themes WHERE scope_type = ? AND scope_id = ?", [scopeType, scopeId]);
  }
}

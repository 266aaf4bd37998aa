import type { Sql } from "../store.ts";
import type { ThemeRow } from "./rows.ts";

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

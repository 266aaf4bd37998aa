// PostgreSQL runs the embedded store's migration list (one schema, one history), translated where
// the two dialects differ, under an advisory lock so that servers starting together migrate once.
import type pg from "pg";
import { type Migration, SQLITE_MIGRATIONS } from "../sqlite/migrations.ts";

/** Arbitrary but fixed: every txtfs server takes this advisory lock to migrate. */
export const MIGRATION_LOCK_ID = 7_474_767_301;

/**
 * Portable DDL -> PostgreSQL: INTEGER columns become BIGINT (SQLite integers are 64-bit), and text
 * compares byte-wise (`COLLATE "C"`, SQLite's BINARY), so ids sort and page the same on both.
 */
export function translateDdl(ddl: string): string {
  return ddl
    .replace(/\bINTEGER\b/g, "BIGINT")
    .replace(/\bREAL\b/g, "DOUBLE PRECISION")
    .replace(/\bBLOB\b/g, "BYTEA")
    .replace(/\bTEXT\b/g, 'TEXT COLLATE "C"');
}

/** Applies the missing migrations; returns how many were applied by this call. */
export async function migrate(
  client: pg.ClientBase,
  migrations: readonly Migration[] = SQLITE_MIGRATIONS,
): Promise<number> {
  await client.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK_ID]);
  try {
    await client.query(
      "CREATE TABLE IF NOT EXISTS txtfs_migrations (version BIGINT PRIMARY KEY, applied_at TEXT NOT NULL)",
    );
    const { rows } = await client.query<{ v: string | null }>(
      "SELECT MAX(version) AS v FROM txtfs_migrations",
    );
    const current = Number(rows[0]?.v ?? 0);
    if (current > migrations.length) {
      throw new Error(
        `the database is at schema version ${current}, newer than this txtfs (${migrations.length}): upgrade txtfs`,
      );
    }
    for (let v = current; v < migrations.length; v++) {
      await client.query("BEGIN");
      try {
        const m = migrations[v]!;
        await client.query(typeof m === "string" ? translateDdl(m) : m.postgres);
        await client.query("INSERT INTO txtfs_migrations (version, applied_at) VALUES ($1, $2)", [
          v + 1,
          new Date().toISOString(),
        ]);
        await client.query("COMMIT");
      } catch (err) {
        await client.query("ROLLBACK");
        throw err;
      }
    }
    return migrations.length - current;
  } finally {
    await client.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK_ID]);
  }
}

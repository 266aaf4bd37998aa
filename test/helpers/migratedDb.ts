// A store's database with every migration applied, opened raw (node:sqlite, foreign keys off) so a
// test can insert rows directly, and the `Sql` the repos take over it. Removed by `close`.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { SqliteStore } from "../../src/store/sqlite/sqliteStore.ts";
import type { Sql } from "../../src/store/store.ts";

export async function migratedDb(prefix: string): Promise<{ db: DatabaseSync; sql: Sql; close(): void }> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const path = join(dir, "txtfs.db");
  await new SqliteStore(path).close(); // every migration applied
  const db = new DatabaseSync(path, { enableForeignKeyConstraints: false });
  const sql: Sql = {
    all: async (q, p = []) => db.prepare(q).all(...(p as never[])) as never[],
    get: async (q, p = []) => db.prepare(q).get(...(p as never[])) as never,
    run: async (q, p = []) => ({ changes: Number(db.prepare(q).run(...(p as never[])).changes) }),
  };
  return {
    db,
    sql,
    close: () => {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

import { join } from "node:path";
import { SqliteStore } from "./sqlite/sqliteStore.ts";
import type { Store } from "./store.ts";

export const SQLITE_FILE = "txtfs.db";

/** Opens the store named by a `--db` value, or the embedded store under the data directory. */
export async function openStore(opts: { dataDir: string; db?: string | undefined }): Promise<Store> {
  const db = opts.db ?? "";
  if (db.startsWith("postgres://") || db.startsWith("postgresql://")) {
    throw new Error("the PostgreSQL store is not available in this build yet; use the embedded store");
  }
  if (db.startsWith("sqlite:")) return new SqliteStore(db.slice("sqlite:".length));
  if (db) throw new Error(`unknown --db value ${JSON.stringify(db)}: expected sqlite:PATH or postgres://...`);
  return new SqliteStore(join(opts.dataDir, SQLITE_FILE));
}

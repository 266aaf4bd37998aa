import { join } from "node:path";
import type { Logger } from "../lib/logger.ts";
import { PostgresStore } from "./postgres/postgresStore.ts";
import { SqliteStore } from "./sqlite/sqliteStore.ts";
import type { Store } from "./store.ts";

export const SQLITE_FILE = "txtfs.db";

export function isPostgresUrl(db: string): boolean {
  return db.startsWith("postgres://") || db.startsWith("postgresql://");
}

/** The embedded store's file a `--db` value (or its absence) names; null for PostgreSQL. */
export function embeddedStorePath(opts: { dataDir: string; db?: string | undefined }): string | null {
  const db = opts.db ?? "";
  if (isPostgresUrl(db)) return null;
  if (db.startsWith("sqlite:")) return db.slice("sqlite:".length);
  if (db) return null; // openStore explains what is wrong with it
  return join(opts.dataDir, SQLITE_FILE);
}

/** Opens the store named by a `--db` value, or the embedded store under the data directory. */
export async function openStore(opts: {
  dataDir: string;
  db?: string | undefined;
  logger?: Logger;
}): Promise<Store> {
  const db = opts.db ?? "";
  if (isPostgresUrl(db)) return PostgresStore.open(db, { logger: opts.logger });
  if (db.startsWith("sqlite:")) return new SqliteStore(db.slice("sqlite:".length));
  if (db) throw new Error(`unknown --db value ${JSON.stringify(db)}: expected sqlite:PATH or postgres://...`);
  return new SqliteStore(join(opts.dataDir, SQLITE_FILE));
}

// Copies an embedded (SQLite) store into an empty PostgreSQL database, table by table, in one
// PostgreSQL transaction, then verifies every table by row count and a content hash computed the
// same way on both sides. Tables are discovered from the SQLite schema, so tables added by later
// migrations are copied without changes here.
import { createHash } from "node:crypto";
import { DatabaseSync, type SQLOutputValue } from "node:sqlite";
import pg from "pg";
import { escapeParams, unescapeRows } from "./postgres/nulText.ts";
import { PostgresStore } from "./postgres/postgresStore.ts";
import { SqliteStore } from "./sqlite/sqliteStore.ts";

export interface TableReport {
  table: string;
  rows: number;
  hash: string;
}

export type Progress = (table: string, done: number, total: number) => void;

interface TableInfo {
  name: string;
  columns: string[];
  /** Columns to order by for the hash: the primary key, or every column. */
  orderBy: string[];
  /** A column referencing this same table (folders.parent_id): parents are copied first. */
  selfRef: { column: string; parent: string } | undefined;
  dependsOn: string[];
}

const BATCH = 500;
const quote = (id: string) => `"${id.replace(/"/g, '""')}"`;

function tables(db: DatabaseSync): TableInfo[] {
  const names = (
    db
      .prepare(
        // Tables the database derives from files (the search index and tags: file_search*; the
        // folders' counts) are left out: the target's own triggers build them as the files arrive.
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'file_search%' AND name <> 'folder_counts' ORDER BY name",
      )
      .all() as { name: string }[]
  ).map((r) => r.name);
  return names.map((name) => {
    const cols = db.prepare(`PRAGMA table_info(${quote(name)})`).all() as { name: string; pk: number }[];
    const fks = db.prepare(`PRAGMA foreign_key_list(${quote(name)})`).all() as {
      table: string;
      from: string;
      to: string;
    }[];
    const pk = cols
      .filter((c) => c.pk > 0)
      .sort((a, b) => a.pk - b.pk)
      .map((c) => c.name);
    const self = fks.find((f) => f.table === name);
    return {
      name,
      columns: cols.map((c) => c.name),
      orderBy: pk.length ? pk : cols.map((c) => c.name),
      selfRef: self ? { column: self.from, parent: self.to } : undefined,
      dependsOn: [...new Set(fks.map((f) => f.table).filter((t) => t !== name))],
    };
  });
}

/** Referenced tables before the tables that reference them. */
function dependencyOrder(all: TableInfo[]): TableInfo[] {
  const byName = new Map(all.map((t) => [t.name, t]));
  const ordered: TableInfo[] = [];
  const state = new Map<string, "visiting" | "done">();
  const visit = (t: TableInfo) => {
    if (state.get(t.name) === "done") return;
    if (state.get(t.name) === "visiting") throw new Error(`foreign keys form a cycle through ${t.name}`);
    state.set(t.name, "visiting");
    for (const dep of t.dependsOn) {
      const d = byName.get(dep);
      if (d) visit(d);
    }
    state.set(t.name, "done");
    ordered.push(t);
  };
  for (const t of all) visit(t);
  return ordered;
}

/** Parents before children for a self-referencing table. */
function parentsFirst(
  rows: Record<string, SQLOutputValue>[],
  info: TableInfo,
): Record<string, SQLOutputValue>[] {
  if (!info.selfRef) return rows;
  const { column, parent } = info.selfRef;
  const placed = new Set<unknown>();
  const out: Record<string, SQLOutputValue>[] = [];
  let pending = rows;
  while (pending.length) {
    const next = pending.filter((r) => {
      const ready = r[column] === null || placed.has(r[column]);
      if (ready) {
        out.push(r);
        placed.add(r[parent]);
      }
      return !ready;
    });
    if (next.length === pending.length) throw new Error(`${info.name}: rows refer to missing parents`);
    pending = next;
  }
  return out;
}

/** Canonical form of a value on either side (node:sqlite and pg both give numbers, strings, null). */
function canonical(v: unknown): unknown {
  if (typeof v === "bigint") return Number(v);
  if (v instanceof Uint8Array) return Buffer.from(v).toString("base64");
  return v ?? null;
}

function hashRows(hash: ReturnType<typeof createHash>, rows: Record<string, unknown>[], columns: string[]) {
  for (const r of rows) hash.update(`${JSON.stringify(columns.map((c) => canonical(r[c])))}\n`);
}

function hashSqlite(db: DatabaseSync, t: TableInfo): TableReport {
  const rows = db
    .prepare(`SELECT * FROM ${quote(t.name)} ORDER BY ${t.orderBy.map(quote).join(", ")}`)
    .all() as Record<string, unknown>[];
  const hash = createHash("sha256");
  hashRows(hash, rows, t.columns);
  return { table: t.name, rows: rows.length, hash: hash.digest("hex") };
}

async function hashPostgres(client: pg.ClientBase, t: TableInfo): Promise<TableReport> {
  const hash = createHash("sha256");
  let n = 0;
  // Paged by OFFSET within one snapshot: the same rows and order as the SQLite side (byte-wise text).
  for (let offset = 0; ; offset += 5000) {
    const { rows } = await client.query(
      `SELECT * FROM ${quote(t.name)} ORDER BY ${t.orderBy.map(quote).join(", ")} LIMIT 5000 OFFSET ${offset}`,
    );
    hashRows(hash, unescapeRows(rows), t.columns);
    n += rows.length;
    if (rows.length < 5000) break;
  }
  return { table: t.name, rows: n, hash: hash.digest("hex") };
}

export interface CopyResult {
  tables: TableReport[];
  mismatches: string[];
}

/**
 * Copies `sqlitePath` into the PostgreSQL database at `pgUrl` (migrated here; it must hold no txtfs
 * data yet). Nothing is committed unless every table's count and hash match the source.
 */
export async function copySqliteToPostgres(
  sqlitePath: string,
  pgUrl: string,
  progress: Progress = () => {},
): Promise<CopyResult> {
  // Bring the source to the current schema (what `serve` would do), then read it without writing.
  await new SqliteStore(sqlitePath).close();
  const src = new DatabaseSync(sqlitePath, { readOnly: true });
  const target = await PostgresStore.open(pgUrl);
  await target.close();
  const client = new pg.Client({
    connectionString: pgUrl,
    types: {
      getTypeParser: (oid: number, format?: "text" | "binary") =>
        oid === 20 || oid === 1700 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format),
    } as pg.CustomTypesConfig,
  });
  await client.connect();
  try {
    const infos = dependencyOrder(tables(src));
    await client.query("BEGIN ISOLATION LEVEL SERIALIZABLE");
    for (const t of infos) {
      const { rows } = await client.query(`SELECT 1 FROM ${quote(t.name)} LIMIT 1`);
      if (rows.length) {
        throw new Error(
          `the target database already has data in ${t.name}: migrate into an empty database (created with createdb)`,
        );
      }
    }
    // A reader's snapshot of the source: no writer (a running server) can change it midway.
    src.exec("BEGIN");
    const expected: TableReport[] = [];
    for (const t of infos) {
      const total = Number(
        (src.prepare(`SELECT COUNT(*) AS n FROM ${quote(t.name)}`).get() as { n: number }).n,
      );
      progress(t.name, 0, total);
      const read = src.prepare(`SELECT * FROM ${quote(t.name)} ORDER BY rowid`);
      let rows = read.all() as Record<string, SQLOutputValue>[];
      rows = parentsFirst(rows, t);
      const cols = t.columns.map(quote).join(", ");
      for (let i = 0; i < rows.length; i += BATCH) {
        const batch = rows.slice(i, i + BATCH);
        const params: unknown[] = [];
        const values = batch.map((r) => {
          const ph = t.columns.map((c) => {
            // Bytes (an attachment's blob) go in as bytes; canonical() is for comparing them.
            const v = r[c];
            params.push(v instanceof Uint8Array ? Buffer.from(v) : canonical(v));
            return `$${params.length}`;
          });
          return `(${ph.join(", ")})`;
        });
        await client.query(
          `INSERT INTO ${quote(t.name)} (${cols}) VALUES ${values.join(", ")}`,
          escapeParams(params),
        );
        progress(t.name, Math.min(i + BATCH, rows.length), total);
      }
      expected.push(hashSqlite(src, t));
    }
    src.exec("COMMIT");
    const actual: TableReport[] = [];
    for (const t of infos) actual.push(await hashPostgres(client, t));
    const mismatches: string[] = [];
    expected.forEach((e, i) => {
      const a = actual[i]!;
      if (e.rows !== a.rows || e.hash !== a.hash)
        mismatches.push(
          `${e.table}: source ${e.rows} rows ${e.hash.slice(0, 12)}, copy ${a.rows} rows ${a.hash.slice(0, 12)}`,
        );
    });
    if (mismatches.length) {
      await client.query("ROLLBACK");
      return { tables: actual, mismatches };
    }
    await client.query("COMMIT");
    return { tables: actual, mismatches: [] };
  } catch (err) {
    await client.query("ROLLBACK").catch(() => {});
    throw err;
  } finally {
    if (src.isTransaction) src.exec("ROLLBACK");
    src.close();
    await client.end();
  }
}

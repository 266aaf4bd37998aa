// How long a server takes to start on a large store kept at an older schema: takes a store
// bench:scale kept (`--keep DIR`, SQLite) back to schema `--from` by undoing the migrations after it
// (only those whose undoing is exact: an index or tables that hold nothing in a bench store), then
// starts this checkout's server on it and times it to /readyz (its migrations run at the start).
// The store ends at the current schema again, with the same rows. Asserts no timings.
//
//   node scripts/bench/migrateTime.ts --data DIR [--from 16]
//
// Schemas are `PRAGMA user_version`: 16 is the one before files_folder_name (the index an import
// finds names by, "18" in migrations.ts's comments, which count from 1 and from another start) and
// the three /dav/ tables. Filling a million notes with an older checkout (`scale.ts
// --migrate-from`) takes an hour; these migrations are what an upgrade from 16 runs, on the same
// data.
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { parseArgs } from "node:util";
import { SQLITE_MIGRATIONS } from "../../src/store/sqlite/migrations.ts";
import { fmtMs, machineInfo, startChild } from "./lib.ts";

const here = resolve(import.meta.dirname, "../..");
const { values } = parseArgs({
  options: { data: { type: "string" }, from: { type: "string", default: "16" } },
});
if (!values.data) throw new Error("--data DIR: a store bench:scale kept");
const dir = resolve(values.data);
const dbPath = join(dir, "txtfs.db");
if (!existsSync(dbPath)) throw new Error(`${dbPath}: no such store`);
const from = Number(values.from);

/** What undoes each migration (by the schema it leads to), when that is exact. */
const UNDO: Record<number, string> = {
  17: "DROP INDEX files_folder_name;",
  18: "DROP TABLE dav_locks;",
  19: "DROP TABLE dav_tombstones;",
  20: "DROP TABLE dav_props;",
};
const target = SQLITE_MIGRATIONS.length;
for (let v = from + 1; v <= target; v++)
  if (!UNDO[v]) throw new Error(`schema ${v}: its migration is not undone here (--from 16 or later)`);

const db = new DatabaseSync(dbPath);
const version = Number((db.prepare("PRAGMA user_version").get() as { user_version: number }).user_version);
if (version !== target) throw new Error(`${dbPath} is at schema ${version}, this checkout's is ${target}`);
for (const table of ["dav_locks", "dav_tombstones", "dav_props"]) {
  const row = db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number };
  if (Number(row.n) > 0) throw new Error(`${table} holds rows: undoing its migration would lose them`);
}
const t0 = performance.now();
db.exec("BEGIN IMMEDIATE");
for (let v = target; v > from; v--) db.exec(UNDO[v]!);
db.exec(`PRAGMA user_version = ${from}`);
db.exec("COMMIT");
db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
db.close();
process.stderr.write(`[bench] ${dbPath}: back at schema ${from} in ${fmtMs(performance.now() - t0)} ms\n`);

const notes = JSON.parse(readFileSync(join(dir, "bench-scale.json"), "utf8")).total as number;
const start = performance.now();
const child = startChild(
  "serve",
  process.execPath,
  [join(here, "bin/txtfs"), "serve", "--port", "0", "--data", dir],
  { env: { ...process.env, TXTFS_LOG_LEVEL: "warn" } },
);
try {
  const url = (await child.waitForLine(/^txtfs (http:\/\/127\.0\.0\.1:\d+)/, 3_600_000))[1]!;
  const listening = performance.now() - start;
  while ((await fetch(`${url}/readyz`).catch(() => undefined))?.status !== 200)
    await new Promise((r) => setTimeout(r, 20));
  const ready = performance.now() - start;
  const m = machineInfo();
  process.stdout.write(
    `${notes} notes, schema ${from} -> ${target}: listening after ${fmtMs(listening)} ms, /readyz after ` +
      `${fmtMs(ready)} ms (${m.cpus} cores, ${m.node}, load ${m.load})\n`,
  );
} finally {
  await child.stop();
}

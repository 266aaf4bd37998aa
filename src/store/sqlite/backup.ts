// Backups of the embedded store that are safe while a server writes to it, and their restore.
//
// A backup is `VACUUM INTO` a new file: one read transaction, so in WAL mode it is a consistent
// snapshot of every commit made before it began (every write the server had acknowledged) and
// writers are never blocked. It runs on a worker thread so that progress (the copy's size against
// the store's) can be reported meanwhile. The copy is checked, fsynced and only then renamed into
// place: FILE is either a complete, verified backup or absent.
import {
  chmodSync,
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  renameSync,
  rmSync,
  statSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { Worker } from "node:worker_threads";
import { SQLITE_MIGRATIONS } from "./migrations.ts";
import { acquireServeLock, StoreLockedError } from "./serveLock.ts";

export interface StoreSummary {
  schemaVersion: number;
  bytes: number;
  users: number;
  files: number;
  folders: number;
  versions: number;
  feedChanges: number;
}

export type Progress = (copiedBytes: number, estimatedBytes: number) => void;

// CommonJS evaluated in the worker: no TypeScript loader needed there.
const VACUUM_WORKER = `
const { workerData } = require("node:worker_threads");
const { DatabaseSync } = require("node:sqlite");
const db = new DatabaseSync(workerData.source, { readOnly: true });
try {
  db.exec("PRAGMA busy_timeout = 10000");
  db.prepare("VACUUM INTO ?").run(workerData.target);
} finally {
  db.close();
}
`;

function fsyncPath(path: string): void {
  const fd = openSync(path, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Checks a store file: SQLite, intact, a txtfs store of a schema this txtfs can run. */
export function inspectStore(path: string): StoreSummary {
  if (!existsSync(path)) throw new Error(`${path} does not exist`);
  let db: DatabaseSync;
  try {
    db = new DatabaseSync(path, { readOnly: true });
  } catch (err) {
    throw new Error(`${path} is not an SQLite database (${(err as Error).message})`);
  }
  try {
    const one = <T>(sql: string) => db.prepare(sql).get() as T;
    let check: string;
    try {
      check = String(Object.values(one<Record<string, unknown>>("PRAGMA integrity_check"))[0]);
    } catch (err) {
      throw new Error(`${path} is not an SQLite database (${(err as Error).message})`);
    }
    if (check !== "ok") throw new Error(`${path} is damaged: integrity_check says ${check}`);
    const schemaVersion = Number(one<{ user_version: number }>("PRAGMA user_version").user_version);
    const tables = new Set(
      (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map(
        (t) => t.name,
      ),
    );
    if (schemaVersion < 1 || !["users", "files", "folders", "feed"].every((t) => tables.has(t)))
      throw new Error(`${path} is an SQLite database but not a txtfs store`);
    if (schemaVersion > SQLITE_MIGRATIONS.length)
      throw new Error(
        `${path} is at schema version ${schemaVersion}, made by a newer txtfs (this one knows ${SQLITE_MIGRATIONS.length}): upgrade txtfs first`,
      );
    const count = (table: string) => Number(one<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`).n);
    return {
      schemaVersion,
      bytes: statSync(path).size,
      users: count("users"),
      files: count("files"),
      folders: count("folders"),
      versions: count("file_versions"),
      feedChanges: Number(one<{ n: number }>("SELECT COALESCE(SUM(feed_seq), 0) AS n FROM users").n),
    };
  } finally {
    db.close();
  }
}

/** The live size of a store (pages in use, its WAL's commits included): the copy's expected size. */
function usedBytes(path: string): number {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    const get = (p: string) => Number(Object.values(db.prepare(`PRAGMA ${p}`).get() as object)[0]);
    return (get("page_count") - get("freelist_count")) * get("page_size");
  } finally {
    db.close();
  }
}

/** Writes a consistent, verified copy of the live store `source` to `target`. */
export async function backupSqlite(
  source: string,
  target: string,
  opts: { force?: boolean; onProgress?: Progress } = {},
): Promise<StoreSummary> {
  if (!existsSync(source)) throw new Error(`no embedded store at ${source}`);
  if (existsSync(target) && !opts.force)
    throw new Error(`${target} exists; choose another name or pass --force to replace it`);
  const estimated = usedBytes(source);
  const partial = join(dirname(target), `.${basename(target)}.partial-${process.pid}`);
  rmSync(partial, { force: true });
  const worker = new Worker(VACUUM_WORKER, { eval: true, workerData: { source, target: partial } });
  const progress = setInterval(() => {
    try {
      opts.onProgress?.(statSync(partial).size, estimated);
    } catch {} // not created yet
  }, 250);
  try {
    await new Promise<void>((resolve, reject) => {
      worker.once("error", reject);
      worker.once("exit", (code) =>
        code === 0 ? resolve() : reject(new Error(`backup worker exited ${code}`)),
      );
    });
    clearInterval(progress);
    opts.onProgress?.(statSync(partial).size, estimated);
    const summary = inspectStore(partial);
    chmodSync(partial, 0o600); // key hashes, sessions and vaulted secrets: not for other users
    fsyncPath(partial);
    renameSync(partial, target);
    fsyncPath(dirname(target));
    return summary;
  } catch (err) {
    rmSync(partial, { force: true });
    throw err;
  } finally {
    clearInterval(progress);
  }
}

const SIDE_FILES = ["-wal", "-shm", "-journal"];

/**
 * Installs a backup as the store at `target`. Refused while a server holds the store. An existing
 * store (with its WAL, which may hold commits not yet in the main file) is kept beside it as
 * `TARGET.before-restore-<time>` rather than deleted. The restored store is migrated on next open.
 */
export function restoreSqlite(
  backup: string,
  target: string,
  opts: { force?: boolean } = {},
): { summary: StoreSummary; keptAs: string | null } {
  const summary = inspectStore(backup);
  mkdirSync(dirname(target), { recursive: true });
  // Held while restoring: no server can start on the store halfway through.
  let release: () => void;
  try {
    release = acquireServeLock(target);
  } catch (err) {
    if (!(err instanceof StoreLockedError)) throw err;
    const o = err.owner;
    throw new Error(
      `a txtfs server (pid ${o.pid} on ${o.host}: ${o.command}) is using ${target}; stop it before restoring`,
    );
  }
  try {
    return install(backup, target, summary, opts);
  } finally {
    release();
  }
}

function install(
  backup: string,
  target: string,
  summary: StoreSummary,
  opts: { force?: boolean },
): { summary: StoreSummary; keptAs: string | null } {
  const exists = existsSync(target);
  if (exists && !opts.force)
    throw new Error(
      `a store exists at ${target}; pass --force to replace it (it is kept as ${basename(target)}.before-restore-<time>)`,
    );
  const partial = join(dirname(target), `.${basename(target)}.restoring-${process.pid}`);
  rmSync(partial, { force: true });
  try {
    // A plain byte copy of a checked, quiescent file (a backup is never written to).
    const db = new DatabaseSync(backup, { readOnly: true });
    try {
      db.prepare("VACUUM INTO ?").run(partial);
    } finally {
      db.close();
    }
    inspectStore(partial);
    fsyncPath(partial);
  } catch (err) {
    rmSync(partial, { force: true });
    throw err;
  }
  let keptAs: string | null = null;
  if (exists) {
    keptAs = `${target}.before-restore-${new Date().toISOString().replace(/[:.]/g, "-")}`;
    // The WAL and shared-memory files belong to the old main file: they move with it (a stale WAL
    // next to the restored file would be replayed into it).
    renameSync(target, keptAs);
    for (const side of SIDE_FILES) if (existsSync(target + side)) renameSync(target + side, keptAs + side);
  } else {
    for (const side of SIDE_FILES) rmSync(target + side, { force: true });
  }
  renameSync(partial, target);
  fsyncPath(dirname(target));
  return { summary, keptAs };
}

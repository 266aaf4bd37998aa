import { chmodSync, existsSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { DatabaseSync, type SQLInputValue, type StatementSync } from "node:sqlite";
import { Mutex } from "../../lib/mutex.ts";
import { FeedNotifier } from "../notifier.ts";
import type { Sql, Store, Tx } from "../store.ts";
import { createTx } from "../tx.ts";
import { SQLITE_MIGRATIONS, sqliteDdl } from "./migrations.ts";
import { INDEX_BATCH, INDEX_BATCH_BYTES, indexPending } from "./searchIndex.ts";

/** The full-text index catches up once no write came for this long (searchIndex.ts)... */
const INDEX_QUIET_MS = 50;
/** ...or at the latest this long after the first write it has not indexed yet. */
const INDEX_MAX_WAIT_MS = 1000;

/**
 * The embedded store: one SQLite file in WAL mode through node:sqlite (synchronous, in-process).
 * node:sqlite calls are synchronous, but units of work are async, so a mutex keeps one unit of work
 * on the connection at a time: a transaction never sees another request's statements interleaved.
 */
/**
 * The database and its WAL and shared-memory files hold every note: readable by their user only,
 * also when an older txtfs (or another umask) created them wider.
 */
function privateFiles(path: string): void {
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    try {
      if (existsSync(file)) chmodSync(file, 0o600);
    } catch {} // not ours to change (another user's store opened read-only): leave it
  }
}

/** A unit of work waiting for a group commit, and how to answer its caller. */
interface Unit {
  fn: (tx: Tx) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/** The most units of work one COMMIT carries: bounds how long the first of them waits for its answer. */
const MAX_GROUP = 64;

/** How much of the database file is read through mmap (SQLite's compile-time limit is 2 GiB). */
const MMAP_BYTES = 1024 * 1024 * 1024;

export class SqliteStore implements Store {
  readonly kind = "sqlite" as const;
  private readonly db: DatabaseSync;
  private readonly statements = new Map<string, StatementSync>();
  private readonly mutex = new Mutex();
  /** Units of work waiting for the next group commit (transaction()). */
  private readonly waiting: Unit[] = [];
  private groupScheduled = false;
  /** COMMITs made and units of work they carried: their ratio is the group size (tests, metrics). */
  readonly commits = { count: 0, units: 0 };
  private readonly notifier = new FeedNotifier();
  private readonly sql: Sql;
  private closed = false;
  private readonly memo = new Map<string, unknown>();
  /** Bumped by every commit of ours and every change seen from other processes. */
  private generation = 0;
  private dataVersion = -1;
  private dataVersionCheckedAt = -Infinity;
  private dataVersionStmt: StatementSync | undefined;
  private indexTimer: NodeJS.Timeout | undefined;
  private indexDueBy: number | undefined;

  readonly path: string;

  constructor(path: string) {
    this.path = path;
    if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    this.db = new DatabaseSync(path);
    // temp_store = FILE: every unit of work runs in a SAVEPOINT (group commit; each item of a batch
    // or sync in one more), and SQLite keeps in the sub-journal every page the savepoint changed,
    // to roll it back. In memory (temp_store = MEMORY, as it was) the sub-journal never spills, and
    // at the end of every statement that has a statement journal (an INSERT into files, with its
    // triggers) SQLite cuts it back by walking its chunks from the start: quadratic in the pages a
    // unit changes. An import of 1,000 notes spent half its time in that walk at 200,000 notes
    // (perf: sqlite3BtreeSavepoint <- vdbeCloseStatement <- the files INSERT), more as the store
    // grew and an import changed more index pages; building a store of 225,000 -> 245,000 notes
    // took 32 s in memory, 17 s with the sub-journal spilling to a temp file past 64 KiB (one
    // run, the same copy). The temp file is never synced and is deleted on close; durability is
    // the WAL's. (In memory, 200 new notes in one POST /api/v1/sync took ~30 ms instead of ~42 ms
    // on a small store.)
    // mmap_size: pages are read through a read-only mapping of the file (writes still go through
    // the WAL), so a page not in memory is read with the kernel's readahead around it rather than
    // 4 KiB at a time: listing 100,000 notes after the page cache was dropped read its index in
    // 0.55-0.68 s instead of 1.26-1.37 s. The mapping is address space, not memory: what it shows
    // is the page cache, which the kernel reclaims as it would the file's.
    this.db.exec(`
      PRAGMA journal_mode = WAL;
      PRAGMA synchronous = FULL;
      PRAGMA foreign_keys = ON;
      PRAGMA busy_timeout = 5000;
      PRAGMA temp_store = FILE;
      PRAGMA mmap_size = ${MMAP_BYTES};
    `);
    if (path !== ":memory:") privateFiles(path);
    this.migrate();
    this.sql = {
      all: async (sql, params = []) => this.prepare(sql).all(...bind(params)) as never[],
      get: async (sql, params = []) => this.prepare(sql).get(...bind(params)) as never,
      run: async (sql, params = []) => {
        const r = this.prepare(sql).run(...bind(params));
        return { changes: Number(r.changes) };
      },
    };
    this.indexSoon(); // what a previous run noted and did not index (stopped or killed first)
  }

  /** Brings the full-text index up to date in the background, once writes pause (searchIndex.ts). */
  private indexSoon(): void {
    if (this.closed) return;
    const now = performance.now();
    this.indexDueBy ??= now + INDEX_MAX_WAIT_MS;
    clearTimeout(this.indexTimer);
    this.indexTimer = setTimeout(
      () => {
        this.indexTimer = undefined;
        this.indexDueBy = undefined;
        void this.indexInBackground();
      },
      Math.max(0, Math.min(INDEX_QUIET_MS, this.indexDueBy - now)),
    );
    this.indexTimer.unref();
  }

  /**
   * In batches, each its own transaction, so requests go in between: each batch waits for the
   * event loop's next turn (a request that arrived meanwhile is read and queued for the connection
   * first), which chained promises alone never give.
   */
  private async indexInBackground(): Promise<void> {
    let done = 1;
    while (done > 0 && !this.closed) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      done = await this.mutex.run(async () => {
        if (this.closed) return 0;
        // Every commit schedules this pass (most write no note): a read, not the write lock, then.
        if (!(await this.sql.get("SELECT 1 AS noted FROM file_search_pending LIMIT 1"))) return 0;
        this.db.exec("BEGIN IMMEDIATE");
        try {
          const n = await indexPending(this.sql, INDEX_BATCH, INDEX_BATCH_BYTES);
          this.db.exec("COMMIT");
          return n;
        } catch {
          // Left noted: the next search, or the pass after the next write, does it.
          if (this.db.isTransaction) this.db.exec("ROLLBACK");
          return 0;
        }
      });
    }
  }

  private prepare(sql: string): StatementSync {
    let stmt = this.statements.get(sql);
    if (!stmt) {
      stmt = this.db.prepare(sql);
      this.statements.set(sql, stmt);
    }
    return stmt;
  }

  private migrate(): void {
    const current = Number(
      (this.db.prepare("PRAGMA user_version").get() as { user_version: number }).user_version,
    );
    for (let v = current; v < SQLITE_MIGRATIONS.length; v++) {
      this.db.exec("BEGIN IMMEDIATE");
      try {
        this.db.exec(sqliteDdl(SQLITE_MIGRATIONS[v]!));
        this.db.exec(`PRAGMA user_version = ${v + 1}`);
        this.db.exec("COMMIT");
      } catch (err) {
        this.db.exec("ROLLBACK");
        throw err;
      }
    }
  }

  /**
   * Group commit: units of work that wait for the connection together run one after another in
   * one transaction, each in a savepoint of its own, and share its COMMIT, so N waiting writes cost
   * one fsync, not N. A unit that fails rolls back alone; each is answered only after the COMMIT
   * that made it durable (or with that COMMIT's error).
   */
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({ fn, resolve, reject } as Unit);
      if (this.groupScheduled) return;
      this.groupScheduled = true;
      // After the event loop's I/O phase: requests read in the same turn join this group.
      setImmediate(() => void this.mutex.run(() => this.commitGroup()));
    });
  }

  /**
   * Commits the units of work asked for before a read or a close, so that those see them (and a
   * close loses none): group commit defers writes to the event loop's next turn, the mutex alone
   * would have kept them in order.
   */
  private async commitWaiting(): Promise<void> {
    while (this.waiting.length && !this.closed) await this.commitGroup();
  }

  private async commitGroup(): Promise<void> {
    this.groupScheduled = false;
    const group = this.waiting.splice(0, MAX_GROUP);
    if (this.waiting.length) {
      this.groupScheduled = true;
      setImmediate(() => void this.mutex.run(() => this.commitGroup()));
    }
    if (this.closed) {
      for (const unit of group) unit.reject(new Error("store is closed"));
      return;
    }
    let done: { unit: Unit; result: unknown; touched: string[] }[] = [];
    const fail = (units: { unit: Unit }[], err: unknown) => {
      for (const { unit } of units) unit.reject(err);
    };
    for (const unit of group) {
      if (!this.db.isTransaction) this.db.exec("BEGIN IMMEDIATE");
      const touched: string[] = [];
      const tx = createTx(this.sql, (ids) => touched.push(...ids));
      this.db.exec("SAVEPOINT txtfs_unit");
      try {
        const result = await unit.fn(tx);
        await tx.beforeCommit();
        this.db.exec("RELEASE txtfs_unit");
        done.push({ unit, result, touched });
      } catch (err) {
        if (this.db.isTransaction) {
          this.db.exec("ROLLBACK TO txtfs_unit");
          this.db.exec("RELEASE txtfs_unit");
        } else {
          // SQLite ended the whole transaction itself (disk full, I/O error): the units before
          // this one went with it, so none of them was made durable.
          fail(done, err);
          done = [];
        }
        unit.reject(err);
      }
    }
    if (!this.db.isTransaction) return;
    try {
      this.db.exec("COMMIT");
    } catch (err) {
      if (this.db.isTransaction) this.db.exec("ROLLBACK");
      fail(done, err);
      return;
    }
    this.commits.count++;
    this.commits.units += done.length;
    this.invalidate();
    const touched = done.flatMap((d) => d.touched);
    if (touched.length) this.notifier.emit(touched);
    this.indexSoon();
    for (const d of done) d.unit.resolve(d.result);
  }

  read<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    // Holding the mutex is what makes the reads consistent: no write can commit in between.
    return this.mutex.run(async () => {
      await this.commitWaiting();
      this.assertOpen();
      return fn(createTx(this.sql, () => {}));
    });
  }

  async memoized<T>(key: string, load: (tx: Tx) => Promise<T>): Promise<T> {
    this.assertOpen();
    // data_version moves when another connection (the admin CLI, say) commits to the file. Asking
    // costs as much as the rest of a cached request, so it is asked at most every 10 ms: another
    // process's change (a revoked key) is seen within 10 ms.
    const now = performance.now();
    if (now - this.dataVersionCheckedAt >= 10) {
      this.dataVersionCheckedAt = now;
      this.dataVersionStmt ??= this.db.prepare("PRAGMA data_version");
      const version = Number((this.dataVersionStmt.get() as { data_version: number }).data_version);
      if (version !== this.dataVersion) {
        this.dataVersion = version;
        this.invalidate();
      }
    }
    if (this.memo.has(key)) return this.memo.get(key) as T;
    const generation = this.generation;
    const value = await this.read(load);
    // A commit between the load and here would make the value stale: keep it only if none happened.
    if (generation === this.generation) {
      if (this.memo.size >= 50_000) this.memo.clear();
      this.memo.set(key, value);
    }
    return value;
  }

  private invalidate(): void {
    this.generation++;
    this.memo.clear();
  }

  subscribe(accountId: string, listener: () => void): () => void {
    return this.notifier.subscribe(accountId, listener);
  }

  schema(): Promise<{ current: number; expected: number }> {
    return this.mutex.run(async () => {
      this.assertOpen();
      const row = this.db.prepare("PRAGMA user_version").get() as { user_version: number };
      return { current: Number(row.user_version), expected: SQLITE_MIGRATIONS.length };
    });
  }

  async close(): Promise<void> {
    await this.mutex.run(async () => {
      await this.commitWaiting();
      if (this.closed) return;
      this.closed = true;
      clearTimeout(this.indexTimer);
      this.db.exec("PRAGMA optimize");
      this.db.close();
    });
  }

  private assertOpen(): void {
    if (this.closed) throw new Error("store is closed");
  }
}

function bind(params: readonly unknown[]): SQLInputValue[] {
  return params.map((p) => {
    if (p === undefined) return null;
    if (typeof p === "boolean") return p ? 1 : 0;
    return p as SQLInputValue;
  });
}

import { createHash, randomUUID } from "node:crypto";
import pg from "pg";
import { KeyedMutex } from "../../lib/keyedMutex.ts";
import type { Logger } from "../../lib/logger.ts";
import { FeedNotifier } from "../notifier.ts";
import { SQLITE_MIGRATIONS } from "../sqlite/migrations.ts";
import type { Sql, Store, TransactionOptions, Tx } from "../store.ts";
import { createTx } from "../tx.ts";
import { CHANNEL, ChangeBus, type ChangeMessage, encodeChange } from "./changeBus.ts";
import { migrate } from "./migrations.ts";
import { escapeParams, unescapeRows } from "./nulText.ts";
import { numberPlaceholders } from "./placeholders.ts";

/** Serialization failure and deadlock: the transaction is rerun from the start. */
const RETRYABLE = new Set(["40001", "40P01"]);
const MAX_ATTEMPTS = 30;
const WRITE = /^\s*(INSERT|UPDATE|DELETE)\b/i;
/** The feed counter bump (UserRepo.nextSeq): which accounts a unit of work writes to. */
const FEED_BUMP = /^\s*UPDATE users SET feed_seq = feed_seq \+ 1/;
/** Rate-limit counters change every 200 ms and nothing cached depends on them: no invalidation. */
const COUNTER_WRITE = /^\s*(INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+rate_limits\b/i;

/** BIGINT and NUMERIC arrive as strings by default; the repositories expect numbers, as in SQLite. */
const types = {
  getTypeParser(oid: number, format?: "text" | "binary") {
    if (oid === 20 || oid === 1700) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format);
  },
} as pg.CustomTypesConfig;

/**
 * The store for several servers sharing one PostgreSQL database. Write transactions run at
 * SERIALIZABLE and are rerun on a serialization failure or deadlock, so every unit of work behaves
 * as it does on SQLite's single writer (a read-then-write can never act on a stale read). The
 * feed's per-account counter row, updated inside the writing transaction, gives seqs in commit
 * order. Other servers' commits arrive by LISTEN/NOTIFY: they invalidate `memoized` and wake
 * `subscribe`rs; while that connection is down, nothing is cached.
 */
export class PostgresStore implements Store {
  readonly kind = "postgres" as const;
  readonly url: string;
  private readonly pool: pg.Pool;
  private readonly notifier = new FeedNotifier();
  private readonly bus: ChangeBus;
  private readonly origin = randomUUID();
  private readonly memo = new Map<string, unknown>();
  private readonly localLocks = new KeyedMutex();
  private generation = 0;
  private closed = false;
  /** Round trips to PostgreSQL made by units of work: what a write costs beyond its commit. */
  roundTrips = 0;
  /** Those of the last unit of work that wrote, from its first lock to its last unlock. */
  lastWriteRoundTrips = 0;
  private readonly log: Logger | undefined;

  private constructor(url: string, log?: Logger, poolSize = 10) {
    this.url = url;
    this.log = log;
    this.pool = new pg.Pool({ connectionString: url, max: poolSize, types });
    // An idle client's error (the server restarted) must not crash the process; the pool drops it.
    this.pool.on("error", (err) =>
      this.log?.warn(
        { code: (err as { code?: string }).code, message: err.message },
        "postgres: idle connection failed",
      ),
    );
    this.bus = new ChangeBus({ connectionString: url }, this.origin, {
      onChange: (message) => this.remoteChange(message),
    });
  }

  /** Connects, migrates (under an advisory lock: safe when several servers start at once), returns. */
  static async open(url: string, opts: { logger?: Logger; poolSize?: number } = {}): Promise<PostgresStore> {
    const store = new PostgresStore(url, opts.logger, opts.poolSize);
    try {
      const client = await store.pool.connect();
      try {
        const applied = await migrate(client);
        if (applied) store.log?.info({ applied }, "postgres: applied migrations");
      } finally {
        client.release();
      }
    } catch (err) {
      await store.pool.end().catch(() => {});
      const e = err as Error & { code?: string };
      throw new Error(`PostgreSQL at ${redactUrl(url)}: ${e.message}${e.code ? ` (${e.code})` : ""}`, {
        cause: err,
      });
    }
    return store;
  }

  private send(client: pg.PoolClient, query: string | pg.QueryConfig, values?: unknown[]) {
    this.roundTrips++;
    tripsOn.set(client, (tripsOn.get(client) ?? 0) + 1);
    return client.query(query as string, values);
  }

  private executor(
    client: pg.PoolClient,
    onWrite: () => void,
    onBump: (account: string) => void = () => {},
  ): Sql {
    const query = async (sql: string, params: readonly unknown[] = []) => {
      if (WRITE.test(sql) && !COUNTER_WRITE.test(sql)) onWrite();
      if (FEED_BUMP.test(sql)) onBump(String(params[0]));
      return this.send(client, {
        text: numberPlaceholders(sql),
        values: escapeParams(bind(params)),
        name: statementName(sql),
      });
    };
    return {
      all: async <R>(sql: string, params?: readonly unknown[]) =>
        unescapeRows((await query(sql, params)).rows as R[]),
      get: async <R>(sql: string, params?: readonly unknown[]) =>
        unescapeRows((await query(sql, params)).rows as R[])[0],
      run: async (sql, params) => ({ changes: (await query(sql, params)).rowCount ?? 0 }),
    };
  }

  /**
   * Serializable, rerun on conflict. Writers of one account would collide on its feed counter row
   * and be rerun again and again under load; so keys to serialize on (the acting account, given by
   * the caller, plus every account a failed attempt bumped) are taken before the transaction
   * starts: first in this process (no pooled connection waits), then across servers with a session
   * advisory lock. Taken in sorted order, released after COMMIT or ROLLBACK.
   */
  async transaction<T>(fn: (tx: Tx) => Promise<T>, opts: TransactionOptions = {}): Promise<T> {
    const keys = new Set(opts.serializeOn ?? []);
    for (let attempt = 1; ; attempt++) {
      this.assertOpen();
      const bumped: string[] = [];
      const outcome = await this.localLocks.run([...keys], () => this.attempt(fn, [...keys], bumped));
      if (outcome.ok) return outcome.value;
      if (!outcome.retry || attempt >= MAX_ATTEMPTS) throw outcome.error;
      for (const account of bumped) keys.add(`account:${account}`);
      await sleep(Math.random() * Math.min(50, 2 ** attempt));
    }
  }

  private async attempt<T>(
    fn: (tx: Tx) => Promise<T>,
    keys: string[],
    bumped: string[],
  ): Promise<{ ok: true; value: T } | { ok: false; retry: boolean; error: unknown }> {
    const touched: string[] = [];
    let wrote = false;
    const client = await this.pool.connect();
    const startTrips = tripsOn.get(client) ?? 0;
    const locks = [...new Set(keys)].sort().map(lockId);
    let result: T;
    try {
      for (const id of locks) await this.send(client, "SELECT pg_advisory_lock($1)", [id]);
      await this.send(client, "BEGIN ISOLATION LEVEL SERIALIZABLE");
      const sql = this.executor(
        client,
        () => {
          wrote = true;
        },
        (account) => bumped.push(account),
      );
      const tx = createTx(sql, (ids) => touched.push(...ids), "postgres");
      result = await fn(tx);
      await tx.beforeCommit();
      // Delivered to every listening server when (and only if) this transaction commits. One
      // round trip for both (a simple query of two statements: if either fails, neither happened).
      if (wrote)
        await this.send(
          client,
          `SELECT pg_notify(${client.escapeLiteral(CHANNEL)}, ${client.escapeLiteral(encodeChange(this.origin, touched))}); COMMIT`,
        );
      else await this.send(client, "COMMIT");
    } catch (error) {
      const broken = await this.send(client, "ROLLBACK").then(
        () => false,
        () => true,
      );
      await this.release(client, locks, broken);
      return { ok: false, retry: RETRYABLE.has((error as { code?: string }).code ?? ""), error };
    }
    // Counted before the release: once back in the pool, the connection is another unit's.
    const trips = (tripsOn.get(client) ?? 0) - startTrips + (locks.length ? 1 : 0);
    await this.release(client, locks, false);
    if (wrote) this.lastWriteRoundTrips = trips;
    if (wrote) this.invalidate();
    if (touched.length) this.notifier.emit(touched);
    return { ok: true, value: result };
  }

  /** Unlocks (a connection that cannot is destroyed: its session's locks go with it) and releases. */
  private async release(client: pg.PoolClient, locks: string[], broken: boolean): Promise<void> {
    if (!broken && locks.length) {
      broken = await this.send(client, "SELECT pg_advisory_unlock_all()").then(
        () => false,
        () => true,
      );
    }
    client.release(broken);
  }

  async read<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    this.assertOpen();
    const client = await this.pool.connect();
    try {
      // One snapshot for every statement of the unit of work, as the SQLite store's mutex gives.
      await this.send(client, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
      const result = await fn(
        createTx(
          this.executor(client, () => {}),
          () => {},
          "postgres",
        ),
      );
      await this.send(client, "COMMIT");
      client.release();
      return result;
    } catch (err) {
      const broken = await this.send(client, "ROLLBACK").then(
        () => false,
        () => true,
      );
      client.release(broken);
      throw err;
    }
  }

  async memoized<T>(key: string, load: (tx: Tx) => Promise<T>): Promise<T> {
    this.assertOpen();
    // Caching is only safe while other servers' commits reach us; until then, read through.
    if (!this.bus.listening) {
      void this.bus.start();
      return this.read(load);
    }
    if (this.memo.has(key)) return this.memo.get(key) as T;
    const generation = this.generation;
    const value = await this.read(load);
    // A commit (here or elsewhere) between the load and now makes the value stale: keep it only if none.
    if (generation === this.generation && this.bus.listening) {
      if (this.memo.size >= 50_000) this.memo.clear();
      this.memo.set(key, value);
    }
    return value;
  }

  private invalidate(): void {
    this.generation++;
    this.memo.clear();
  }

  private remoteChange(message: ChangeMessage): void {
    this.invalidate();
    if (message.accounts === "*") this.notifier.emitAll();
    else this.notifier.emit(message.accounts);
  }

  subscribe(accountId: string, listener: () => void): () => void {
    void this.bus.start();
    return this.notifier.subscribe(accountId, listener);
  }

  /** Starts following other servers' commits now rather than on first use (servers call this). */
  listen(): Promise<void> {
    return this.bus.start();
  }

  /** Whether other servers' commits currently reach this store (for tests and health checks). */
  get listening(): boolean {
    return this.bus.listening;
  }

  async schema(): Promise<{ current: number; expected: number }> {
    this.assertOpen();
    const { rows } = await this.pool.query<{ v: string | null }>(
      "SELECT MAX(version) AS v FROM txtfs_migrations",
    );
    return { current: Number(rows[0]?.v ?? 0), expected: SQLITE_MIGRATIONS.length };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.bus.close();
    await this.pool.end();
  }

  private assertOpen(): void {
    if (this.closed) throw new Error("store is closed");
  }
}

/** Round trips per connection: a unit of work has its connection to itself, so its own count. */
const tripsOn = new WeakMap<pg.PoolClient, number>();

const statementNames = new Map<string, string>();

/**
 * The repositories' statements are a small fixed set: each is prepared once per connection (named),
 * so PostgreSQL parses and plans it once. Texts beyond the first 2,000 (long IN lists) run unnamed.
 */
function statementName(sql: string): string | undefined {
  let name = statementNames.get(sql);
  if (name === undefined && statementNames.size < 2000) {
    name = `txtfs_${createHash("sha1").update(sql).digest("hex").slice(0, 16)}`;
    statementNames.set(sql, name);
  }
  return name;
}

/** A 64-bit advisory lock id for a key (the hash's first 8 bytes, as PostgreSQL's signed bigint). */
function lockId(key: string): string {
  return createHash("sha256").update(`txtfs:${key}`).digest().readBigInt64BE(0).toString();
}

/** The URL without its password, for logs and messages. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "(unparsable URL)";
  }
}

function bind(params: readonly unknown[]): unknown[] {
  return params.map((p) => {
    if (p === undefined) return null;
    if (typeof p === "boolean") return p ? 1 : 0;
    return p;
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// The PostgreSQL backend itself: dialect translation, migrations under concurrent starts, and
// transparent retries of serialization failures.
import { afterAll, describe, expect, it } from "vitest";
import { createKey, createUser } from "../../src/server/domain/accounts.ts";
import { MIGRATION_LOCK_ID, translateDdl } from "../../src/store/postgres/migrations.ts";
import { numberPlaceholders } from "../../src/store/postgres/placeholders.ts";
import { PostgresStore } from "../../src/store/postgres/postgresStore.ts";
import { SQLITE_MIGRATIONS } from "../../src/store/sqlite/migrations.ts";
import { runTxtfs, type ServeProcess, spawnServe } from "../helpers/cli.ts";
import { createDatabase, dropDatabase } from "../helpers/pgCluster.ts";
import { startTestServer } from "../helpers/server.ts";
import { testPgUrl } from "../helpers/storeUnderTest.ts";

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

async function freshDb() {
  const db = await createDatabase(testPgUrl()!);
  cleanups.push(() => dropDatabase(db));
  return db;
}

describe("dialect", () => {
  it("numbers ? placeholders, leaving quoted text alone", () => {
    expect(numberPlaceholders("SELECT * FROM t WHERE a = ? AND b IN (?, ?) AND c = '?' AND \"d?\" = ?")).toBe(
      "SELECT * FROM t WHERE a = $1 AND b IN ($2, $3) AND c = '?' AND \"d?\" = $4",
    );
  });

  it("translates portable DDL: 64-bit integers, byte-wise text", () => {
    expect(translateDdl("CREATE TABLE x (id TEXT PRIMARY KEY, n INTEGER NOT NULL DEFAULT 0)")).toBe(
      'CREATE TABLE x (id TEXT COLLATE "C" PRIMARY KEY, n BIGINT NOT NULL DEFAULT 0)',
    );
  });
});

describe("PostgreSQL store", () => {
  it("serves the API suite's servers from PostgreSQL in this project", async () => {
    const t = await startTestServer();
    cleanups.push(() => t.close());
    expect(t.server.store.kind).toBe("postgres");
    expect(t.db).toMatch(/^postgres:\/\//);
  });

  it("ids sort byte-wise as in SQLite (upper case before lower case)", async () => {
    const store = await PostgresStore.open(await freshDb());
    cleanups.push(() => store.close());
    const at = new Date().toISOString();
    await store.transaction(async (tx) => {
      for (const id of ["u_b", "u_B", "u_a", "u_A", "u_0"])
        await tx.users.insert({ id, email: `${id}@x.io`, name: "", created_at: at });
    });
    // users.list orders by created_at, then id: the ids alone decide here.
    const ids = (await store.read((tx) => tx.users.list())).map((r) => r.id);
    expect(ids).toEqual(["u_0", "u_A", "u_B", "u_a", "u_b"]);
  });

  it("runs the migrations once when several servers start on an empty database at once", async () => {
    const db = await freshDb();
    const started: ServeProcess[] = await Promise.all([1, 2, 3, 4].map(() => spawnServe(["--db", db])));
    cleanups.push(() => Promise.all(started.map((s) => s.stop())));
    const store = await PostgresStore.open(db);
    cleanups.push(() => store.close());
    const client = (store as unknown as { pool: import("pg").Pool }).pool;
    const { rows } = await client.query("SELECT version FROM txtfs_migrations ORDER BY version");
    expect(rows.map((r) => Number(r.version))).toEqual(SQLITE_MIGRATIONS.map((_, i) => i + 1));
    // The advisory lock was released by every server.
    const locks = await client.query("SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory'");
    expect(Number(locks.rows[0].n)).toBe(0);
    expect(MIGRATION_LOCK_ID).toBeGreaterThan(0);
    // One first user and key, printed by exactly one of them.
    expect(started.filter((s) => s.stdout().includes("TXTFS_API_KEY=")).length).toBe(1);
    expect(await store.read((tx) => tx.users.list())).toHaveLength(1);
  });

  it("reruns a transaction that lost a serialization race instead of failing it", async () => {
    const store = await PostgresStore.open(await freshDb());
    cleanups.push(() => store.close());
    const user = await store.transaction((tx) => createUser(tx, "race@example.com"));
    let attempts = 0;
    // 20 concurrent read-modify-write units of work on one row: each must apply exactly once.
    await Promise.all(
      Array.from({ length: 20 }, () =>
        store.transaction(async (tx) => {
          attempts++;
          const row = await tx.users.byId(user.id);
          await tx.users.setFeedFloor(user.id, row!.feed_floor + 1);
          await createKey(tx, user.id, { label: "k" });
        }),
      ),
    );
    const after = await store.read((tx) => tx.users.byId(user.id));
    expect(after!.feed_floor).toBe(20);
    expect(await store.read((tx) => tx.keys.listForUser(user.id))).toHaveLength(20);
    expect(attempts).toBeGreaterThan(20); // some were rerun
  });

  it("serve on PostgreSQL stops cleanly on SIGTERM, answering an in-flight long-poll", async () => {
    const db = await freshDb();
    const s = await spawnServe(["--db", db]);
    cleanups.push(() => s.stop());
    await waitFor(async () => /TXTFS_API_KEY=/.test(s.stdout()));
    const key = /TXTFS_API_KEY=(txt_\w+)/.exec(s.stdout())![1]!;
    const headers = { authorization: `Bearer ${key}` };
    const created = await fetch(`${s.url}/api/v1/files`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({ name: "kept.md", content: "still here" }),
    });
    expect(created.status).toBe(201);
    const poll = fetch(`${s.url}/api/v1/changes?cursor=latest&wait=30`, { headers });
    await new Promise((r) => setTimeout(r, 300));
    const started = Date.now();
    s.child.kill("SIGTERM");
    const res = await poll;
    expect(res.status).toBe(200);
    expect(((await res.json()) as { changes: unknown[] }).changes).toEqual([]);
    expect(await s.exited).toBe(0);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(s.stderr()).toContain("stopped cleanly");
    expect(s.stderr()).not.toMatch(/"level":(40|50)/); // no warnings or errors on the way down
    // Its connections are gone and the data is there.
    const store = await PostgresStore.open(db);
    cleanups.push(() => store.close());
    const pool = (store as unknown as { pool: import("pg").Pool }).pool;
    const others = await pool.query(
      "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()",
    );
    expect(Number(others.rows[0].n)).toBe(0);
    expect((await pool.query("SELECT content FROM files")).rows).toEqual([{ content: "still here" }]);
  });

  it("admin commands work on PostgreSQL; an unreachable database is a clear error", async () => {
    const db = await freshDb();
    const added = await runTxtfs(["admin", "user", "add", "cli@example.com", "--db", db]);
    expect(added.code).toBe(0);
    const env = { TXTFS_DB: db }; // the environment works as --db does
    const listed = await runTxtfs(["admin", "user", "list"], env);
    expect(listed.stdout).toContain("cli@example.com");
    const key = await runTxtfs(["admin", "key", "add", "cli@example.com", "--scopes", "files:read"], env);
    expect(key.stdout.trim().split("\n").at(-1)).toMatch(/^txt_[0-9A-Za-z]{36}$/);
    const down = await runTxtfs([
      "serve",
      "--port",
      "0",
      "--db",
      "postgres://txtfs:secret@127.0.0.1:1/nothing",
    ]);
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(
      /PostgreSQL at postgres:\/\/txtfs:\*\*\*@127\.0\.0\.1:1\/nothing: .*ECONNREFUSED/,
    );
    expect(down.stderr).not.toContain("secret");
  });

  it("caches nothing while it cannot hear other servers, and listens again by itself", async () => {
    const db = await freshDb();
    const a = await PostgresStore.open(db);
    const b = await PostgresStore.open(db);
    cleanups.push(
      () => a.close(),
      () => b.close(),
    );
    await a.listen();
    const user = await b.transaction((tx) => createUser(tx, "cache@example.com"));
    const name = () => a.memoized(`user:${user.id}`, async (tx) => (await tx.users.byId(user.id))!.name);
    const rename = (n: string) =>
      b.transaction((tx) =>
        tx.users.insert({ id: `u_${n}`, email: `${n}@x.io`, name: n, created_at: "" }).then(() => n),
      );
    // Let b's NOTIFY of that commit arrive first (it would drop what is cached next).
    await new Promise((r) => setTimeout(r, 300));
    expect(await name()).toBe("");
    // b's commit reaches a by NOTIFY: the cached value is dropped.
    const sql = (b as unknown as { pool: import("pg").Pool }).pool;
    await sql.query("UPDATE users SET name = 'one' WHERE id = $1", [user.id]); // outside txtfs: no NOTIFY
    expect(await name()).toBe(""); // still cached: nothing announced the change
    await rename("x"); // a txtfs commit announces itself
    await waitFor(async () => (await name()) === "one");
    // Cut a's LISTEN connection: until it is back, every call reads the database.
    await sql.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'txtfs-listen' AND datname = current_database()",
    );
    await waitFor(async () => !a.listening);
    await sql.query("UPDATE users SET name = 'two' WHERE id = $1", [user.id]);
    expect(await name()).toBe("two");
    await waitFor(async () => a.listening, 5000);
    // Back: caching resumes, and txtfs commits invalidate it again.
    expect(await name()).toBe("two");
    await sql.query("UPDATE users SET name = 'three' WHERE id = $1", [user.id]);
    expect(await name()).toBe("two");
    await rename("y");
    await waitFor(async () => (await name()) === "three");
  });
});

async function waitFor(check: () => Promise<boolean>, ms = 3000) {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
}

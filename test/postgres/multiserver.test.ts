// Several `txtfs serve` processes on one PostgreSQL database: the change feed stays complete and in
// order with writers on two servers at once, and a revoked key stops working on every server.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKey, createUser } from "../../src/server/domain/accounts.ts";
import { PostgresStore } from "../../src/store/postgres/postgresStore.ts";
import { runTxtfs, type ServeProcess, spawnServe } from "../helpers/cli.ts";
import { createDatabase, dropDatabase } from "../helpers/pgCluster.ts";
import { Api, expectError } from "../helpers/server.ts";
import { testPgUrl } from "../helpers/storeUnderTest.ts";

let db: string;
let store: PostgresStore;
const servers: ServeProcess[] = [];

beforeAll(async () => {
  db = await createDatabase(testPgUrl()!);
  // Both start at once on an empty database: migrations and the first user must still happen once.
  servers.push(...(await Promise.all([spawnServe(["--db", db]), spawnServe(["--db", db])])));
  store = await PostgresStore.open(db);
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  await store?.close();
  if (db) await dropDatabase(db);
});

async function newUser(email: string) {
  const { secret, id } = await store.transaction(async (tx) => {
    const u = await createUser(tx, email);
    return { id: u.id, secret: (await createKey(tx, u.id, { label: "t" })).secret };
  });
  return { id, key: secret, apis: servers.map((s) => new Api(s.url, secret)) };
}

interface Seen {
  seq: number;
  id: string;
  etag: string;
}

/** Follows the feed with long-polls, alternating servers, until `done()` or the deadline. */
async function follow(apis: Api[], done: (seen: Seen[], cursor: number) => boolean, cursor0 = 0) {
  const seen: Seen[] = [];
  let cursor = cursor0;
  const deadline = Date.now() + 15_000;
  for (let i = 0; !done(seen, cursor); i++) {
    if (Date.now() > deadline) throw new Error(`feed follower timed out after ${seen.length} changes`);
    const res = await apis[i % apis.length]!.get(`/api/v1/changes?cursor=${cursor}&limit=25&wait=2`);
    expect(res.status).toBe(200);
    for (const c of res.body.changes) seen.push({ seq: c.seq, id: c.id, etag: c.etag });
    cursor = res.body.cursor;
  }
  return seen;
}

describe("two servers, one database", () => {
  it("migrated once and created exactly one first user although both started together", async () => {
    const firstKeys = servers.filter((s) => s.stdout().includes("TXTFS_API_KEY="));
    expect(firstKeys).toHaveLength(1);
    const versions = await store.read((tx) => tx.users.list());
    expect(versions).toHaveLength(1);
  });

  it("a follower sees every change exactly once and in commit order while both servers write", async () => {
    const u = await newUser("feed@example.com");
    const perServer = 120;
    const workers = 6;
    const written: Seen[] = [];
    let writing = true;
    // Until the writes are over and the follower's cursor reached the last seq written.
    const follower = follow(u.apis, (_, cursor) => !writing && cursor >= written.length);
    follower.catch(() => {}); // awaited below; a failed write must not leave it unhandled
    await Promise.all(
      u.apis.flatMap((api, s) =>
        Array.from({ length: workers }, async (_, w) => {
          for (let i = w; i < perServer; i += workers) {
            const res = await api.post("/api/v1/files", { name: `s${s}-${i}.md`, content: `${s}/${i}` });
            expect(res.status, `${res.text}\n${servers[s]!.stderr().slice(-3000)}`).toBe(201);
            written.push({ seq: res.body.seq, id: res.body.file.id, etag: res.body.file.etag });
          }
        }),
      ),
    );
    writing = false;
    const seen = await follower;
    const total = perServer * u.apis.length;
    // Each create is a new item, so nothing collapses: the follower must see seqs 1..N, in order.
    expect(seen.map((c) => c.seq)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    const bySeq = new Map(written.map((w) => [w.seq, w]));
    expect(bySeq.size).toBe(total);
    for (const c of seen) expect(c).toEqual(bySeq.get(c.seq));
  });

  it("concurrent edits of the same notes on both servers: ordered feed, final states match", async () => {
    const u = await newUser("edits@example.com");
    const files = await Promise.all(
      [0, 1, 2, 3].map(async (i) => (await u.apis[0]!.post("/api/v1/files", { name: `n${i}.md` })).body.file),
    );
    const head = (await u.apis[0]!.get("/api/v1/changes?cursor=latest")).body.cursor as number;
    const rounds = 30;
    const written: Seen[] = [];
    const lastSeq = () => written.reduce((m, w) => Math.max(m, w.seq), 0);
    let writing = true;
    const follower = follow(u.apis, (_, cursor) => !writing && cursor >= lastSeq(), head);
    follower.catch(() => {});
    await Promise.all(
      u.apis.flatMap((api, s) =>
        files.map(async (f, i) => {
          for (let r = 0; r < rounds; r++) {
            const res = await api.put(`/api/v1/files/${f.id}`, {
              content: `server ${s} round ${r} file ${i}`,
            });
            expect(res.status).toBe(200);
            written.push({ seq: res.body.seq, id: f.id, etag: res.body.file.etag });
          }
        }),
      ),
    );
    writing = false;
    const seen = await follower;
    // Strictly increasing: never an older change after a newer one.
    for (let i = 1; i < seen.length; i++) expect(seen[i]!.seq).toBeGreaterThan(seen[i - 1]!.seq);
    // Every seq allocated exactly once across both servers.
    expect(new Set(written.map((w) => w.seq)).size).toBe(written.length);
    // The last change the follower saw of each note is the last one written.
    for (const f of files) {
      const last = written.filter((w) => w.id === f.id).sort((a, b) => b.seq - a.seq)[0]!;
      const lastSeen = seen.filter((c) => c.id === f.id).at(-1)!;
      expect(lastSeen).toEqual(last);
    }
    // And each server agrees on the notes' contents.
    for (const api of u.apis) {
      const list = await api.get("/api/me/files");
      const etags = Object.fromEntries(
        list.body.files.map((f: { id: string; etag: string }) => [f.id, f.etag]),
      );
      for (const f of files) expect(etags[f.id]).toBe(seen.filter((c) => c.id === f.id).at(-1)!.etag);
    }
  });

  it("a key revoked by the admin CLI stops working on every server within a second", async () => {
    const u = await newUser("revoke@example.com");
    const keyId = (await store.read((tx) => tx.keys.listForUser(u.id)))[0]!.id;
    // Warm both servers' key caches.
    for (const api of u.apis) for (let i = 0; i < 3; i++) expect((await api.get("/api/me")).status).toBe(200);
    const revoked = await runTxtfs(["admin", "key", "revoke", keyId, "--db", db]);
    expect(revoked.code).toBe(0);
    const at = Date.now();
    for (const api of u.apis) {
      let res = await api.get("/api/me");
      while (res.status === 200 && Date.now() - at < 1000) {
        await new Promise((r) => setTimeout(r, 20));
        res = await api.get("/api/me");
      }
      expectError(res, 401, "api_key_revoked");
    }
  });

  it("a long-poll on one server wakes at once for a write on the other", async () => {
    const u = await newUser("wake@example.com");
    const cursor = (await u.apis[0]!.get("/api/v1/changes?cursor=latest")).body.cursor;
    const started = Date.now();
    const poll = u.apis[0]!.get(`/api/v1/changes?cursor=${cursor}&wait=20`);
    await new Promise((r) => setTimeout(r, 300));
    const created = await u.apis[1]!.post("/api/v1/files", { name: "wake.md" });
    const res = await poll;
    expect(res.body.changes.map((c: { id: string }) => c.id)).toEqual([created.body.file.id]);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("one Idempotency-Key sent to both servers at once applies the change once", async () => {
    const u = await newUser("idem@example.com");
    for (let round = 0; round < 5; round++) {
      const key = `race-${round}`;
      const body = { name: `idem-${round}.md`, content: "once" };
      const [a, b] = await Promise.all(
        u.apis.map((api) => api.post("/api/v1/files", body, { "idempotency-key": key })),
      );
      expect([a!.status, b!.status]).toEqual([201, 201]);
      expect(a!.body.file.id).toBe(b!.body.file.id);
      const replays = [a, b].filter((r) => r!.headers.get("idempotent-replayed") === "true");
      expect(replays).toHaveLength(1);
    }
    const names = (await u.apis[0]!.get("/api/me/files")).body.files.map((f: { name: string }) => f.name);
    expect(names.sort()).toEqual([0, 1, 2, 3, 4].map((i) => `idem-${i}.md`));
  });
});

// Rate limits across servers: one key's budget is shared by every server on the database.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKey, createUser } from "../../src/server/domain/accounts.ts";
import { PostgresStore } from "../../src/store/postgres/postgresStore.ts";
import { type ServeProcess, spawnServe } from "../helpers/cli.ts";
import { createDatabase, dropDatabase } from "../helpers/pgCluster.ts";
import { Api, expectError } from "../helpers/server.ts";
import { testPgUrl } from "../helpers/storeUnderTest.ts";

let db: string;
let store: PostgresStore;
let servers: ServeProcess[] = [];

beforeAll(async () => {
  db = await createDatabase(testPgUrl()!);
  store = await PostgresStore.open(db);
  servers = await Promise.all([1, 2].map(() => spawnServe(["--db", db, "--rate-limit", "20"])));
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  await store?.close();
  if (db) await dropDatabase(db);
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("shared rate limits", () => {
  it("a key's points spent on one server count on the other", async () => {
    const { secret, keyId } = await store.transaction(async (tx) => {
      const u = await createUser(tx, "limited@example.com");
      const k = await createKey(tx, u.id, {});
      return { secret: k.secret, keyId: k.key.id };
    });
    const [a, b] = servers.map((s) => new Api(s.url, secret)) as [Api, Api];
    for (let i = 0; i < 12; i++) expect((await a.get("/api/me")).status).toBe(200); // 12 of 20 points
    await sleep(1300); // A has shared its count; B has never seen the key
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await b.get("/api/me")).status);
    expect(statuses).toEqual([...Array(8).fill(200), ...Array(4).fill(429)]);
    const denied = await b.get("/api/me");
    expectError(denied, 429, "rate_limited");
    expect(denied.headers.get("ratelimit-remaining")).toBe("0");
    expect(Number(denied.headers.get("retry-after"))).toBeGreaterThan(0);
    await sleep(1300);
    // A's copy is now stale: it re-reads the shared total before admitting.
    expectError(await a.get("/api/me"), 429, "rate_limited");
    // Refused requests cost nothing: the shared total is exactly the budget.
    const row = await store.read((tx) => tx.rateLimits.get(keyId));
    expect(row?.used).toBe(20);
  });
});

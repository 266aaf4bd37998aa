// Two `txtfs serve` processes on one PostgreSQL database: a note DELETEd over `/dav/` of one is
// continued by the same key's PUT of that name on the other (id, context, tags kept), once; another
// key's PUT there makes a new note; of two servers taking one tombstone at once, one gets it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ServiceTombstones } from "../../src/dav/serviceTombstones.ts";
import { createKey, createUser } from "../../src/server/domain/accounts.ts";
import type { FileSnapshot } from "../../src/server/domain/fileRevival.ts";
import { PostgresStore } from "../../src/store/postgres/postgresStore.ts";
import { type ServeProcess, spawnServe } from "../helpers/cli.ts";
import { davRequest } from "../helpers/dav.ts";
import { noteAt } from "../helpers/mount.ts";
import { createDatabase, dropDatabase } from "../helpers/pgCluster.ts";
import { Api } from "../helpers/server.ts";
import { testPgUrl } from "../helpers/storeUnderTest.ts";

let db: string;
let store: PostgresStore;
const servers: ServeProcess[] = [];
let key: string;
let otherKey: string;
let userId: string;

beforeAll(async () => {
  db = await createDatabase(testPgUrl()!);
  servers.push(await spawnServe(["--db", db]));
  servers.push(await spawnServe(["--db", db]));
  store = await PostgresStore.open(db);
  [userId, key, otherKey] = await store.transaction(async (tx) => {
    const u = await createUser(tx, "tombstones@example.com");
    const a = await createKey(tx, u.id, { label: "a" });
    return [u.id, a.secret, (await createKey(tx, u.id, { label: "b" })).secret];
  });
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  await store?.close();
  if (db) await dropDatabase(db);
});

const on = (i: number, method: string, path: string, opts?: Parameters<typeof davRequest>[4], k = key) =>
  davRequest(`${servers[i]!.url}/dav/`, k, method, path, opts);
const api = () => new Api(servers[0]!.url, key);

describe("/dav/ tombstones on two servers, one database", () => {
  it("a DELETE on one and the same key's PUT on the other continue the note, once", async () => {
    expect((await on(0, "PUT", "/saved.md", { body: "one\n" })).status).toBe(201);
    const before = await noteAt(api(), "saved.md");
    expect((await api().put(`/api/v1/files/${before.id}`, { context: "kept", tags: ["x"] })).status).toBe(
      200,
    );
    expect((await on(0, "DELETE", "/saved.md")).status).toBe(204);
    expect((await on(1, "PUT", "/saved.md", { body: "two\n" })).status).toBe(201);
    const after = await noteAt(api(), "saved.md");
    expect([after.id, after.content, after.context, after.tags]).toEqual([before.id, "two\n", "kept", ["x"]]);
    // Taken: none is left for a second PUT on either server.
    expect(await store.read((tx) => tx.davTombstones.sizes(userId))).toEqual([]);
  });

  it("another key's PUT on the other server makes a new note, and leaves the tombstone to no one", async () => {
    expect((await on(0, "PUT", "/other.md", { body: "one\n" })).status).toBe(201);
    const before = await noteAt(api(), "other.md");
    expect((await on(0, "DELETE", "/other.md")).status).toBe(204);
    expect((await on(1, "PUT", "/other.md", { body: "two\n" }, otherKey)).status).toBe(201);
    expect((await noteAt(api(), "other.md")).id).not.toBe(before.id);
  });

  it("of two servers taking one tombstone at once, one gets it", async () => {
    const other = await PostgresStore.open(db);
    try {
      const t = new ServiceTombstones();
      const snapshot = {
        file: { id: "f_race", owner_id: userId, folder_id: null, name: "race.md" },
        bytes: 1,
      };
      await store.transaction((tx) => t.remember(tx, userId, "k_race", snapshot as unknown as FileSnapshot));
      let release!: () => void;
      const held = new Promise<void>((r) => {
        release = r;
      });
      let tookFirst!: () => void;
      const took = new Promise<void>((r) => {
        tookFirst = r;
      });
      const first = store.transaction(async (tx) => {
        const got = await t.take(tx, "k_race", userId, null, "race.md");
        tookFirst();
        await held; // still uncommitted while the other server tries
        return got;
      });
      await took;
      const second = other.transaction((tx) => t.take(tx, "k_race", userId, null, "race.md"));
      await new Promise((r) => setTimeout(r, 200));
      release();
      const [a, b] = await Promise.all([first, second]);
      expect([a?.file.id, b]).toEqual(["f_race", undefined]);
    } finally {
      await other.close();
    }
  });
});

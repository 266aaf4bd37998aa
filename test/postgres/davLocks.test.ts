// Two `txtfs serve` processes on one PostgreSQL database: a WebDAV lock taken on `/dav/` of one is
// honoured by the other (a conflicting PUT or LOCK there is 423), its token works there, and an
// UNLOCK on either frees the resource on both.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKey, createUser } from "../../src/server/domain/accounts.ts";
import { PostgresStore } from "../../src/store/postgres/postgresStore.ts";
import { type ServeProcess, spawnServe } from "../helpers/cli.ts";
import { davRequest } from "../helpers/dav.ts";
import { createDatabase, dropDatabase } from "../helpers/pgCluster.ts";
import { testPgUrl } from "../helpers/storeUnderTest.ts";

const LOCK_BODY = (scope: "exclusive" | "shared") =>
  `<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:${scope}/></D:lockscope><D:locktype><D:write/></D:locktype><D:owner>test</D:owner></D:lockinfo>`;

let db: string;
let store: PostgresStore;
const servers: ServeProcess[] = [];
let key: string;

beforeAll(async () => {
  db = await createDatabase(testPgUrl()!);
  servers.push(await spawnServe(["--db", db]));
  servers.push(await spawnServe(["--db", db]));
  store = await PostgresStore.open(db);
  key = await store.transaction(async (tx) => {
    const u = await createUser(tx, "locks@example.com");
    return (await createKey(tx, u.id, { label: "t" })).secret;
  });
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  await store?.close();
  if (db) await dropDatabase(db);
});

const on = (i: number, method: string, path: string, opts?: Parameters<typeof davRequest>[4]) =>
  davRequest(`${servers[i]!.url}/dav/`, key, method, path, opts);

describe("/dav/ locks on two servers, one database", () => {
  it("a lock taken on one is honoured by the other, its token works there, and an UNLOCK there frees it", async () => {
    expect((await on(0, "PUT", "/shared.md", { body: "one\n" })).status).toBe(201);
    const lock = await on(0, "LOCK", "/shared.md", {
      body: LOCK_BODY("exclusive"),
      headers: { timeout: "Second-600" },
    });
    expect(lock.status).toBe(200);
    const token = lock.headers.get("lock-token")!.replace(/^<|>$/g, "");
    expect(token).toMatch(/^opaquelocktoken:/);

    expect((await on(1, "PUT", "/shared.md", { body: "two\n" })).status).toBe(423);
    expect((await on(1, "DELETE", "/shared.md")).status).toBe(423);
    const second = await on(1, "LOCK", "/shared.md", { body: LOCK_BODY("shared") });
    expect(second.status).toBe(423);
    const shown = await on(1, "PROPFIND", "/shared.md", {
      headers: { depth: "0" },
      body: '<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><D:lockdiscovery/></D:prop></D:propfind>',
    });
    expect(shown.text).toContain(token);

    const withToken = await on(1, "PUT", "/shared.md", { body: "three\n", headers: { if: `(<${token}>)` } });
    expect(withToken.status).toBe(204);
    expect((await on(1, "UNLOCK", "/shared.md", { headers: { "lock-token": `<${token}>` } })).status).toBe(
      204,
    );
    expect((await on(0, "PUT", "/shared.md", { body: "four\n" })).status).toBe(204);
    expect((await on(1, "GET", "/shared.md")).text).toBe("four\n");
  });
});

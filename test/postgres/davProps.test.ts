// Two `txtfs serve` processes on one PostgreSQL database: a dead property PROPPATCH set on `/dav/`
// of one is answered by PROPFIND on the other, follows a MOVE made there, and goes with a DELETE.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKey, createUser } from "../../src/server/domain/accounts.ts";
import { PostgresStore } from "../../src/store/postgres/postgresStore.ts";
import { type ServeProcess, spawnServe } from "../helpers/cli.ts";
import { davRequest } from "../helpers/dav.ts";
import { createDatabase, dropDatabase } from "../helpers/pgCluster.ts";
import { testPgUrl } from "../helpers/storeUnderTest.ts";

const Z = 'xmlns:D="DAV:" xmlns:z="http://example.com/z"';
const SET = (v: string) =>
  `<?xml version="1.0"?><D:propertyupdate ${Z}><D:set><D:prop><z:colour>${v}</z:colour></D:prop></D:set></D:propertyupdate>`;
const GET = `<?xml version="1.0"?><D:propfind ${Z}><D:prop><z:colour/></D:prop></D:propfind>`;

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
    const u = await createUser(tx, "props@example.com");
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
const colourOn = async (i: number, path: string) => {
  const r = await on(i, "PROPFIND", path, { headers: { depth: "0" }, body: GET });
  return r.status === 207 ? (/<z:colour[^>]*>(\w+)<\/z:colour>/.exec(r.text)?.[1] ?? "none") : r.status;
};

describe("/dav/ dead properties on two servers, one database", () => {
  it("set on one, answered by the other, moved there, gone with a DELETE on the first", async () => {
    expect((await on(0, "PUT", "/a_%25.md", { body: "a\n" })).status).toBe(201);
    expect((await on(0, "PUT", "/a_%25b.md", { body: "b\n" })).status).toBe(201);
    expect((await on(0, "PROPPATCH", "/a_%25.md", { body: SET("blue") })).status).toBe(207);
    expect((await on(0, "PROPPATCH", "/a_%25b.md", { body: SET("red") })).status).toBe(207);
    expect(await colourOn(1, "/a_%25.md")).toBe("blue");
    expect(
      (await on(1, "MOVE", "/a_%25.md", { headers: { destination: `${servers[1]!.url}/dav/m.md` } })).status,
    ).toBe(201);
    expect(await colourOn(0, "/m.md")).toBe("blue");
    expect(await colourOn(0, "/a_%25.md")).toBe(404);
    // A name holding % and _ is its own: the other note's property stayed.
    expect(await colourOn(1, "/a_%25b.md")).toBe("red");
    expect((await on(0, "DELETE", "/m.md")).status).toBe(204);
    expect((await on(1, "PUT", "/m.md", { body: "new\n" })).status).toBe(201);
    expect(await colourOn(1, "/m.md")).toBe("none");
  });
});

// ginOnly (src/store/repos/ginOnly.ts) turns PostgreSQL's table walks off for its statements and
// puts the settings back as they were, within the caller's transaction; when a statement fails,
// that statement's error is the one reported.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { numberPlaceholders } from "../../src/store/postgres/placeholders.ts";
import { ginOnly } from "../../src/store/repos/ginOnly.ts";
import type { Sql } from "../../src/store/store.ts";
import { createDatabase, dropDatabase } from "../helpers/pgCluster.ts";
import { testPgUrl } from "../helpers/storeUnderTest.ts";

let db: string;
let client: pg.Client;
let sql: Sql;

beforeAll(async () => {
  db = await createDatabase(testPgUrl()!);
  client = new pg.Client({ connectionString: db });
  await client.connect();
  const all = async (q: string, params: readonly unknown[] = []) =>
    (await client.query(numberPlaceholders(q), params as unknown[])).rows as never[];
  sql = { all, get: async (q, p) => (await all(q, p))[0], run: async () => ({ changes: 0 }) };
});
afterAll(async () => {
  await client?.end();
  if (db) await dropDatabase(db);
});

const settings = async () =>
  (
    await client.query<{ s: string; i: string }>(
      "SELECT current_setting('enable_seqscan') AS s, current_setting('enable_indexscan') AS i",
    )
  ).rows[0];

describe("ginOnly", () => {
  it("turns table walks off for its statements only, and puts back what was set before", async () => {
    await client.query("BEGIN");
    try {
      expect(await ginOnly(sql, settings)).toEqual({ s: "off", i: "off" });
      expect(await settings()).toEqual({ s: "on", i: "on" });
      await client.query("SET LOCAL enable_indexscan = off");
      await ginOnly(sql, settings);
      expect(await settings()).toEqual({ s: "on", i: "off" });
    } finally {
      await client.query("ROLLBACK");
    }
  });

  it("reports the failed statement's error, not the restore's in the aborted transaction", async () => {
    await client.query("BEGIN");
    try {
      await expect(ginOnly(sql, () => sql.all("SELECT 1 / 0"))).rejects.toThrow(/division by zero/);
    } finally {
      await client.query("ROLLBACK");
    }
  });
});

// Every hot query of the service finds its rows through an index on PostgreSQL: EXPLAIN (FORMAT
// JSON) of each, as the repositories send it, on a store with thousands of rows and fresh
// statistics (ANALYZE), where the planner would choose a sequential scan if no index fitted. A
// query whose cost grew with the store (a listing, a read, the feed, a search, related notes, a
// folder count, a share check) would show a Seq Scan on one of the big tables here.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { numberPlaceholders } from "../../src/store/postgres/placeholders.ts";
import { PostgresStore } from "../../src/store/postgres/postgresStore.ts";
import { SearchRepo } from "../../src/store/repos/search.ts";
import type { Sql } from "../../src/store/store.ts";
import { fillPlanData, hotQueries, sqlOf } from "../helpers/hotQueries.ts";
import { createDatabase, dropDatabase } from "../helpers/pgCluster.ts";
import { testPgUrl } from "../helpers/storeUnderTest.ts";

const own = { ownerId: "u_1" };
const BIG = ["files", "folders", "feed", "shares", "file_search_tags", "folder_counts", "users"];

let db: string;
let client: pg.Client;

beforeAll(async () => {
  db = await createDatabase(testPgUrl()!);
  await (await PostgresStore.open(db)).close(); // every migration applied
  client = new pg.Client({ connectionString: db });
  await client.connect();
  for (const script of fillPlanData()) await client.query(script);
  await client.query("ANALYZE");
}, 120_000);
afterAll(async () => {
  await client?.end();
  if (db) await dropDatabase(db);
});

interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  Plans?: PlanNode[];
}

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

async function explain(q: { sql: string; params: unknown[] }): Promise<PlanNode[]> {
  const { rows } = await client.query(`EXPLAIN (FORMAT JSON) ${numberPlaceholders(q.sql)}`, q.params);
  return nodes(rows[0]["QUERY PLAN"][0].Plan);
}

const describePlan = (all: PlanNode[]) =>
  all.map((n) => `${n["Node Type"]} ${n["Relation Name"] ?? ""} ${n["Index Name"] ?? ""}`.trim()).join("; ");

describe("PostgreSQL plans of the hot queries", () => {
  it("the store holds enough rows for the planner to prefer a scan where no index fits", async () => {
    const { rows } = await client.query<{ relname: string; reltuples: number }>(
      "SELECT relname, reltuples FROM pg_class WHERE relname IN ('files', 'feed', 'shares', 'file_search_tags')",
    );
    for (const r of rows) expect(Number(r.reltuples), r.relname).toBeGreaterThanOrEqual(4000);
    // The control: a query no index fits is planned as a Seq Scan on these statistics.
    const control = await explain({ sql: "SELECT id FROM files WHERE size = ?", params: [100] });
    expect(control.some((n) => n["Node Type"] === "Seq Scan" && n["Relation Name"] === "files")).toBe(true);
  });

  it.each(hotQueries("postgres"))("%s: no Seq Scan on a big table", async (_name, call) => {
    const statements = await sqlOf(call);
    expect(statements.length).toBeGreaterThan(0);
    for (const q of statements) {
      const plan = await explain(q);
      const scans = plan.filter(
        (n) => n["Node Type"] === "Seq Scan" && BIG.includes(n["Relation Name"] ?? ""),
      );
      expect(scans, `${q.sql}\n${describePlan(plan)}`).toEqual([]);
    }
  });

  it("an account's top-level notes are one range of an index", async () => {
    const [, call] = hotQueries("postgres").find(([name]) => name.startsWith("the root's notes"))!;
    const plan = await explain((await sqlOf(call))[0]!);
    expect(
      plan.some((n) => n["Index Name"] === "files_owner_folder"),
      describePlan(plan),
    ).toBe(true);
  });

  it("an import finds the files of its names by name, not by reading each folder it writes to", async () => {
    // A folder of 10 notes is cheaper to read whole: the planner is shown one of 5,000 (rolled back).
    await client.query("BEGIN");
    try {
      await client.query(`INSERT INTO files (id, owner_id, folder_id, name, type, availability, tags, size,
          content_hash, revision, version_number, etag, created_at, updated_at, content)
        SELECT 'f_big' || i, 'u_1', 'd_100040', 'big' || i || '.md', 'md', 'cloud', '[]', 1, 'h', 1, 1, 'e',
          't', 't', 'x' FROM generate_series(1, 5000) AS i`);
      await client.query("ANALYZE files");
      for (const [name, call] of hotQueries("postgres").filter(([name]) =>
        name.startsWith("an import's names"),
      )) {
        const plan = await explain((await sqlOf(call))[0]!);
        expect(
          plan.some((n) => n["Index Name"] === "files_folder_name"),
          `${name}: ${describePlan(plan)}`,
        ).toBe(true);
      }
    } finally {
      await client.query("ROLLBACK");
    }
  });

  it("a search finds its matches through the full-text index", async () => {
    for (const [name, call] of hotQueries("postgres").filter(([name]) => name.startsWith("search"))) {
      const q = (await sqlOf(call)).at(-1)!;
      const plan = await explain(q);
      expect(
        plan.some((n) => n["Index Name"] === "files_search" || n["Index Name"] === "files_pkey"),
        `${name}: ${describePlan(plan)}`,
      ).toBe(true);
    }
  });

  it("related notes count a word's notes through the GIN index alone, and never a word ANALYZE knows is common", async () => {
    // The statements run for real in one transaction (the settings ginOnly makes are the
    // transaction's); every other statement is explained first.
    const sent: string[] = [];
    const plans: string[] = [];
    const sql = {
      all: async (q: string, params: unknown[] = []) => {
        sent.push(q);
        if (!q.includes("set_config")) {
          const plan = await explain({ sql: q, params });
          plans.push(describePlan(plan));
          expect(
            plan.filter((n) => n["Node Type"] === "Seq Scan" && BIG.includes(n["Relation Name"] ?? "")),
            `${q}\n${describePlan(plan)}`,
          ).toEqual([]);
        }
        return (await client.query(numberPlaceholders(q), params as unknown[])).rows;
      },
      get: async (q: string, params: unknown[] = []) => (await sql.all(q, params))[0],
      run: async (q: string, params: unknown[] = []) => ({
        changes: (await client.query(numberPlaceholders(q), params as unknown[])).rowCount ?? 0,
      }),
    } as Sql;
    const repo = new SearchRepo(sql, "postgres");
    await client.query("BEGIN");
    try {
      // "common" is in every note (counted by nobody), "w7" in one of 500.
      expect(Object.fromEntries(await repo.documentFrequency(["common", "w7"], 500))).toEqual({
        common: 500,
        w7: 80,
      });
      expect(sent.filter((q) => q.includes("LIMIT 500"))).toHaveLength(1);
      expect(plans.at(-1), plans.join("\n")).toContain("Bitmap Index Scan  files_search");
      // Both words in one statement: "w40" is in 40 of the account's notes, "w41" in none of them.
      const found = await repo.withWords(own, ["w40", "w41"], { limit: 16, within: 500 });
      expect([found.get("w40")?.length, found.get("w41")]).toEqual([16, []]);
      expect(plans.at(-1), plans.at(-1)).toContain("Bitmap Index Scan  files_search");
      // The control: without ginOnly's settings, a word's notes under a LIMIT, for a word the
      // planner knows to be in every note, are a walk of the table hoping to stop early (for a word
      // rarer than it guesses, to the table's end).
      await client.query(
        "SELECT set_config('enable_seqscan', 'on', true), set_config('enable_indexscan', 'on', true)",
      );
      const walk = describePlan(
        await explain({
          sql: "SELECT id FROM files WHERE search_doc @@ to_tsquery('simple'::regconfig, ?) LIMIT 500",
          params: ["'note'"],
        }),
      );
      expect(walk).not.toContain("files_search");
      expect(walk).toMatch(/Limit; Seq Scan files/);
    } finally {
      await client.query("ROLLBACK");
    }
  });
});

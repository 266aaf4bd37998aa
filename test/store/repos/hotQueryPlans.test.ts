// Every hot query of the service finds its rows through an index on SQLite: EXPLAIN QUERY PLAN of
// each, as the repositories send it (test/helpers/hotQueries.ts, the same list PostgreSQL's
// test/postgres/queryPlans.test.ts explains), on a store with thousands of rows and ANALYZE's
// statistics. A full pass over a big table shows as `SCAN <table>` (with or without an index).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SEARCH_COMMON_AT, SEARCH_VOCABULARY } from "../../../src/store/sqlite/searchPhrases.ts";
import { SqliteStore } from "../../../src/store/sqlite/sqliteStore.ts";
import type { Sql } from "../../../src/store/store.ts";
import { fillPlanData, hotQueries, sqlOf } from "../../helpers/hotQueries.ts";

const BIG = /\bSCAN (files|folders|feed|shares|file_search_tags|folder_counts|file_search_ids|users)\b/;

let dir: string;
let db: DatabaseSync;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "txtfs-hot-plans-"));
  const path = join(dir, "txtfs.db");
  await new SqliteStore(path).close(); // every migration applied
  db = new DatabaseSync(path);
  db.exec("BEGIN");
  for (const script of fillPlanData()) db.exec(script);
  db.exec("COMMIT; ANALYZE");
  db.exec(SEARCH_VOCABULARY); // what a search makes on its connection before it looks a prefix up
});
afterAll(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

function plan(q: { sql: string; params: unknown[] }): string {
  const rows = db.prepare(`EXPLAIN QUERY PLAN ${q.sql}`).all(...(q.params as never[])) as {
    detail: string;
  }[];
  return rows.map((r) => r.detail).join("\n");
}

describe("SQLite plans of the hot queries", () => {
  it("the control: a query no index fits is a SCAN of files", () => {
    expect(plan({ sql: "SELECT id FROM files WHERE size = ?", params: [100] })).toMatch(BIG);
  });

  it.each(hotQueries("sqlite"))("%s: no SCAN of a big table", async (_name, call) => {
    const statements = await sqlOf(call);
    expect(statements.length).toBeGreaterThan(0);
    for (const q of statements) {
      const p = plan(q);
      expect(p, `${q.sql}\n${p}`).not.toMatch(BIG);
    }
  });

  it("an account's top-level notes are one range of an index, not a walk of all its notes", async () => {
    const [name, call] = hotQueries("sqlite").find(([name]) => name.startsWith("the root's notes"))!;
    const [q] = await sqlOf(call);
    expect(plan(q!), name).toBe("SEARCH files USING INDEX files_owner_folder (owner_id=? AND folder_id=?)");
  });

  it("an import finds the files of its names by name, not by reading each folder it writes to", async () => {
    for (const [name, call] of hotQueries("sqlite").filter(([name]) =>
      name.startsWith("an import's names"),
    )) {
      const [q] = await sqlOf(call);
      expect(plan(q!), name).toMatch(
        /^SEARCH files USING INDEX files_folder_name \(folder_id[=\s\w?]* AND name=\? AND owner_id=\?\)/,
      );
    }
  });

  it("the same with the statistics of a real store (100,000 notes, 1,000 a folder, none at the top level)", async () => {
    // What ANALYZE recorded for a bench:scale store: averages per key, blind to the top level's few.
    const real = new DatabaseSync(":memory:");
    for (const row of db
      .prepare(
        "SELECT sql FROM sqlite_schema WHERE name IN ('files') OR tbl_name = 'files' AND type = 'index' AND sql IS NOT NULL",
      )
      .all() as { sql: string }[])
      real.exec(row.sql);
    real.exec(`ANALYZE; DELETE FROM sqlite_stat1;
      INSERT INTO sqlite_stat1 VALUES ('files', 'files_owner_folder', '100000 2001 1001 1'),
        ('files', 'files_listing', '100000 2001 ${Array(19).fill(1).join(" ")}'),
        ('files', 'files_folder', '100000 1001 1'), ('files', 'sqlite_autoindex_files_1', '100000 1');
      ANALYZE sqlite_schema;`);
    const [, call] = hotQueries("sqlite").find(([name]) => name.startsWith("the root's notes"))!;
    const [q] = await sqlOf(call);
    const p = (
      real.prepare(`EXPLAIN QUERY PLAN ${q!.sql}`).all(...(q!.params as never[])) as { detail: string }[]
    )
      .map((r) => r.detail)
      .join("\n");
    expect(p).toBe("SEARCH files USING INDEX files_owner_folder (owner_id=? AND folder_id=?)");
    real.close();
  });

  it("a search's matches come from FTS5, the caller's only; bm25 ranks them only over words it counts cheaply", async () => {
    for (const common of [false, true])
      for (const [name, call] of hotQueries("sqlite").filter(([name]) => name.startsWith("search"))) {
        // Answered as a store would: every word counted below the bound (or at it), a prefix
        // standing for one word of the index, two candidates and their ids.
        const sent: { sql: string; params: unknown[] }[] = [];
        let spelled = false;
        const answer = async (sql: string, params: unknown[] = []) => {
          sent.push({ sql, params: [...params] });
          if (sql.includes("file_search_terms WHERE")) {
            if (spelled) return undefined as never;
            spelled = true;
            return { term: `${params[0]}t` } as never;
          }
          if (sql.startsWith("SELECT count(*) AS n FROM (SELECT rowid"))
            return { n: common ? SEARCH_COMMON_AT : 3 } as never;
          if (/^SELECT rowid FROM file_search/.test(sql)) return [{ rowid: 2 }, { rowid: 1 }] as never;
          if (sql.includes("json_each"))
            return [
              { rowid: 2, id: "f_100002" },
              { rowid: 1, id: "f_100001" },
            ] as never;
          return (sql.startsWith("SELECT count(*) AS n") ? { n: 0 } : []) as never;
        };
        await call({ all: answer, get: answer, run: answer } as Sql);
        const candidates = sent.find((s) => /^SELECT rowid FROM file_search/.test(s.sql))!;
        // Words in fewer notes of the whole index than a search ranks (3): all their notes are
        // candidates, the caller's access is checked on them (the ids query below), not ANDed in
        // the MATCH (FTS5 would seek the account's token, in every note of it, for each). A
        // common word: the caller's notes only, from the MATCH, newest first.
        if (common) expect(candidates.params[0], name).toMatch(/^\(scope:\(o[0-9a-f]+/);
        else expect(candidates.params[0], name).not.toMatch(/scope:/);
        // A prefix is spelled out as its words, which FTS5 reads lazily; its own prefix query
        // would read every note holding any of them first.
        expect(candidates.params[0], name).not.toMatch(/\*/);
        expect(plan(candidates), name).toMatch(/SCAN file_search VIRTUAL TABLE INDEX \d+:M/);
        for (const counted of sent.filter((s) => s.sql.startsWith("SELECT count(*) AS n FROM (SELECT rowid")))
          expect(counted.sql, name).toContain(`LIMIT ${SEARCH_COMMON_AT}`);
        const ranked = sent.find((s) => s.sql.includes("bm25"));
        if (common) expect(ranked, `${name}: a common word is not counted by bm25`).toBeUndefined();
        else {
          const p = plan(ranked!);
          // The ranked words' notes within the candidates' rowids, nothing of the scope phrase.
          expect(p, `${name}\n${p}`).toMatch(/SCAN file_search VIRTUAL TABLE INDEX \d+:M.*[<>]/);
          expect(ranked!.params[0], name).toMatch(/^\("/);
        }
        const ids = sent.find((s) => s.sql.includes("json_each"))!;
        expect(ids.sql, name).toContain("files.owner_id = ?");
        const p = plan(ids);
        expect(p, `${name}\n${p}`).toMatch(/SEARCH file_search_ids USING INTEGER PRIMARY KEY/);
        expect(p, `${name}\n${p}`).not.toMatch(BIG);
      }
  });
});

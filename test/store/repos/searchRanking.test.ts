// SQLite search ranks its candidates in a query of their own (src/store/repos/search.ts,
// rankSqlite), so that bm25's per-word counts no longer read the scope phrase's notes nor check
// columns. On random small stores its answers (ids, order and scores) must be those of the single
// query it replaced, kept here as the reference: access, exclusions, `within`, prefixes and both
// match modes included (every word of these stores is far below SEARCH_COMMON_AT, so every
// phrase is ranked: searchCommonWords.test.ts shows the bound).
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accessWhere, type FileListFilter } from "../../../src/store/repos/files.ts";
import { type SearchQuery, SearchRepo } from "../../../src/store/repos/search.ts";
import { indexPending, scopeToken } from "../../../src/store/sqlite/searchIndex.ts";
import { SqliteStore } from "../../../src/store/sqlite/sqliteStore.ts";
import type { Sql } from "../../../src/store/store.ts";

let dir: string;
let template: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "txtfs-search-ranking-"));
  template = join(dir, "template.db");
  await new SqliteStore(template).close(); // every migration applied, once
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const sqlOf = (d: DatabaseSync): Sql => ({
  all: async (q, p = []) => d.prepare(q).all(...(p as never[])) as never[],
  get: async (q, p = []) => d.prepare(q).get(...(p as never[])) as never,
  run: async (q, p = []) => ({ changes: Number(d.prepare(q).run(...(p as never[])).changes) }),
});

/** The search before rankSqlite: bm25 inside the query that finds the newest `within` matches. */
async function reference(sql: Sql, filter: FileListFilter, q: SearchQuery) {
  const terms = q.terms;
  const limit = Math.max(1, Math.floor(q.limit));
  const within = Math.max(limit, Math.floor(q.within ?? 1000));
  const any = [
    scopeToken("o", filter.ownerId),
    ...(filter.sharedFolderIds ?? []).map((id) => scopeToken("d", id)),
    ...(filter.sharedFileIds ?? []).map((id) => scopeToken("n", id)),
  ];
  const none = (q.excludeIds ?? []).map((id) => scopeToken("n", id));
  const seen = `scope:(${any.join(" OR ")})`;
  const scope = none.length ? `(${seen} NOT scope:(${none.join(" OR ")}))` : `(${seen})`;
  const parts = terms.map((t, i) => `"${t}"${q.prefixLast && i === terms.length - 1 ? "*" : ""}`);
  const match = `${scope} AND {name context tags content}:(${parts.join(q.match === "all" ? " AND " : " OR ")})`;
  const { where, params } = accessWhere(filter);
  if (q.excludeIds?.length) {
    where.push(`files.id NOT IN (${q.excludeIds.map(() => "?").join(",")})`);
    params.push(...q.excludeIds);
  }
  const rows = await sql.all<{ id: string; score: number }>(
    `SELECT files.id AS id, c.score AS score
     FROM (SELECT rowid, -bm25(file_search, 8.0, 4.0, 4.0, 1.0, 0.0) AS score FROM file_search
           WHERE file_search MATCH ? ORDER BY rowid DESC LIMIT ${within}) AS c
     CROSS JOIN file_search_ids ON file_search_ids.rowid = c.rowid
     CROSS JOIN files ON files.id = file_search_ids.file_id
     WHERE ${where.join(" AND ")}
     ORDER BY c.score DESC, files.id LIMIT ${limit}`,
    [match, ...params],
  );
  return rows.map((r) => ({ id: r.id, score: Number(r.score) }));
}

const WORDS = ["apple", "apricot", "banana", "cherry", "date", "elder", "fig", "grape"];
const words = (min: number, max: number) =>
  fc.array(fc.constantFrom(...WORDS), { minLength: min, maxLength: max }).map((w) => w.join(" "));
const note = fc.record({
  owner: fc.constantFrom("u1", "u2"),
  folder: fc.constantFrom(null, "d1", "d2"),
  name: words(0, 3),
  context: words(0, 2),
  tags: fc.array(fc.constantFrom(...WORDS), { maxLength: 2 }),
  content: words(0, 30),
});
const query = fc.record({
  terms: fc.array(fc.constantFrom(...WORDS, "ap", "ch"), { minLength: 1, maxLength: 3 }),
  match: fc.constantFrom("all" as const, "any" as const),
  prefixLast: fc.boolean(),
  limit: fc.integer({ min: 1, max: 12 }),
  within: fc.integer({ min: 1, max: 20 }),
  shareFolder: fc.boolean(),
  shareFile: fc.nat(40),
  exclude: fc.array(fc.nat(40), { maxLength: 3 }),
});

describe("search's ranking over its candidates", () => {
  it("gives the ids, order and scores of bm25 in the query that found them", async () => {
    let run = 0;
    let compared = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(note, { minLength: 1, maxLength: 40 }), query, async (notes, qa) => {
        const path = join(dir, `run${run++}.db`);
        copyFileSync(template, path);
        const db = new DatabaseSync(path, { enableForeignKeyConstraints: false });
        try {
          const insert = db.prepare(
            `INSERT INTO files (id, owner_id, folder_id, name, context, tags, type, availability, size,
               content_hash, revision, version_number, etag, created_at, updated_at, content)
             VALUES (?, ?, ?, ?, ?, ?, 'md', 'online', ?, 'h', 1, 1, 'e', 't', 't', ?)`,
          );
          for (const [i, n] of notes.entries())
            insert.run(
              `f${String(i).padStart(2, "0")}`,
              n.owner,
              n.folder,
              `${n.name}.md`,
              n.context,
              JSON.stringify(n.tags),
              n.content.length,
              n.content,
            );
          const sql = sqlOf(db);
          await indexPending(sql);
          const id = (k: number) => `f${String(k % notes.length).padStart(2, "0")}`;
          const filter: FileListFilter = {
            ownerId: "u1",
            ...(qa.shareFolder ? { sharedFolderIds: ["d1"] } : {}),
            sharedFileIds: [id(qa.shareFile)],
          };
          const q: SearchQuery = {
            terms: qa.terms,
            match: qa.match,
            prefixLast: qa.prefixLast,
            limit: qa.limit,
            within: qa.within,
            excludeIds: [...new Set(qa.exclude.map(id))],
          };
          const want = await reference(sql, filter, q);
          const got = await new SearchRepo(sql, "sqlite").search(filter, q);
          expect(got.map((h) => ({ id: h.id, score: h.score }))).toEqual(want);
          if (want.length > 1) compared++;
        } finally {
          db.close();
          rmSync(path, { force: true });
        }
      }),
      { numRuns: 150 },
    );
    // The stores were not all empty answers: orders of several notes were compared.
    expect(compared).toBeGreaterThan(20);
  });
});

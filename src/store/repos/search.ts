// Full-text search over notes, ranked by the database: SQLite FTS5 with bm25, PostgreSQL tsvector
// with ts_rank (migration 7). Terms are plain words (letters and digits) chosen by the caller; they
// are never spliced into a query language unescaped.

import { indexPending } from "../sqlite/searchIndex.ts";
import type { Sql } from "../store.ts";
import { accessWhere, type FileListFilter } from "./files.ts";

export type Dialect = "sqlite" | "postgres";

export interface SearchHit {
  id: string;
  /** Higher is better on both backends. */
  score: number;
  snippet: string;
}

export interface SearchQuery {
  /** Words (letters and digits only). */
  terms: readonly string[];
  /** `all`: every term must occur (search); `any`: at least one (related notes). */
  match: "all" | "any";
  /** Prefix-match the last term (search as you type). */
  prefixLast?: boolean;
  limit: number;
  excludeIds?: readonly string[];
  /** Leave out notes directly in these folders (folders kept away from the AI, with their subtrees). */
  excludeFolderIds?: readonly string[];
}

/** Adds the id and folder exclusions to an access filter's WHERE clause. */
function exclusions(
  where: string[],
  params: unknown[],
  q: Pick<SearchQuery, "excludeIds" | "excludeFolderIds">,
) {
  if (q.excludeIds?.length) {
    where.push(`files.id NOT IN (${q.excludeIds.map(() => "?").join(",")})`);
    params.push(...q.excludeIds);
  }
  if (q.excludeFolderIds?.length) {
    where.push(
      `(files.folder_id IS NULL OR files.folder_id NOT IN (${q.excludeFolderIds.map(() => "?").join(",")}))`,
    );
    params.push(...q.excludeFolderIds);
  }
}

const WORD = /^[\p{L}\p{N}]+$/u;

export class SearchRepo {
  private readonly sql: Sql;
  private readonly dialect: Dialect;

  constructor(sql: Sql, dialect: Dialect) {
    this.sql = sql;
    this.dialect = dialect;
  }

  async search(filter: FileListFilter, q: SearchQuery): Promise<SearchHit[]> {
    const terms = q.terms.filter((t) => WORD.test(t));
    if (terms.length === 0) return [];
    const { where, params } = accessWhere(filter);
    exclusions(where, params, q);
    const limit = Math.max(1, Math.floor(q.limit));
    if (this.dialect === "sqlite") {
      await indexPending(this.sql); // what was written and not indexed yet: a search sees every commit
      const parts = terms.map((t, i) => `"${t}"${q.prefixLast && i === terms.length - 1 ? "*" : ""}`);
      const match = parts.join(q.match === "all" ? " AND " : " OR ");
      // bm25 weights per column: name, context, tags, content. Lower bm25 is better: negate it.
      const rows = await this.sql.all<{ id: string; score: number; snippet: string }>(
        `SELECT files.id AS id, -bm25(file_search, 8.0, 4.0, 4.0, 1.0) AS score,
           snippet(file_search, 3, '[', ']', '…', 16) AS snippet
         FROM file_search
         JOIN file_search_ids ON file_search_ids.rowid = file_search.rowid
         JOIN files ON files.id = file_search_ids.file_id
         WHERE file_search MATCH ? AND ${where.join(" AND ")}
         ORDER BY bm25(file_search, 8.0, 4.0, 4.0, 1.0), files.id LIMIT ${limit}`,
        [match, ...params],
      );
      return rows.map((r) => ({ id: r.id, score: Number(r.score), snippet: r.snippet ?? "" }));
    }
    const parts = terms.map(
      (t, i) => `'${t.toLowerCase()}'${q.prefixLast && i === terms.length - 1 ? ":*" : ""}`,
    );
    const tsquery = parts.join(q.match === "all" ? " & " : " | ");
    // Rank first (index scan), then build snippets for the page only: ts_headline reads the body.
    const rows = await this.sql.all<{ id: string; score: number; snippet: string }>(
      `SELECT ranked.id, ranked.score,
         ts_headline('simple'::regconfig, left(f.content, 200000), to_tsquery('simple'::regconfig, ?),
           'StartSel=[, StopSel=], MaxWords=24, MinWords=8, MaxFragments=1, FragmentDelimiter=…') AS snippet
       FROM (
         SELECT files.id AS id, ts_rank(files.search_doc, to_tsquery('simple'::regconfig, ?)) AS score
         FROM files
         WHERE files.search_doc @@ to_tsquery('simple'::regconfig, ?) AND ${where.join(" AND ")}
         ORDER BY score DESC, files.id LIMIT ${limit}
       ) ranked JOIN files f ON f.id = ranked.id
       ORDER BY ranked.score DESC, ranked.id`,
      [tsquery, tsquery, tsquery, ...params],
    );
    return rows.map((r) => ({ id: r.id, score: Number(r.score), snippet: r.snippet ?? "" }));
  }

  /**
   * In how many notes of the whole store each word occurs, counted up to `cap` (both indexes stop
   * reading a word's notes there): how telling a word is, at a cost that does not grow with the store.
   */
  async documentFrequency(terms: readonly string[], cap: number): Promise<Map<string, number>> {
    const words = [...new Set(terms.filter((t) => WORD.test(t)))];
    const out = new Map<string, number>();
    if (this.dialect === "sqlite" && words.length) await indexPending(this.sql);
    const [sql, arg] =
      this.dialect === "sqlite"
        ? ["SELECT rowid FROM file_search WHERE file_search MATCH ?", (w: string) => `"${w}"`]
        : [
            "SELECT 1 FROM files WHERE search_doc @@ to_tsquery('simple'::regconfig, ?)",
            (w: string) => `'${w.toLowerCase()}'`,
          ];
    for (const w of words) {
      const row = await this.sql.get<{ n: number }>(`SELECT COUNT(*) AS n FROM (${sql} LIMIT ${cap}) AS t`, [
        arg(w),
      ]);
      out.set(w, Number(row?.n ?? 0));
    }
    return out;
  }

  /**
   * Up to `limit` notes the filter sees that hold `word`, the first by id: the same notes on both
   * stores whatever their ranking functions. At most `within` notes holding the word are read: the
   * word's matches come first (a subquery the planners keep apart), never a walk of the files in
   * id order probing the index for each, which a LIMIT tempts them into.
   */
  async withWord(
    filter: FileListFilter,
    word: string,
    q: { limit: number; within: number; excludeIds?: readonly string[] },
  ): Promise<string[]> {
    if (!WORD.test(word)) return [];
    const { where, params } = accessWhere(filter);
    exclusions(where, params, q);
    const within = Math.floor(q.within);
    const matches =
      this.dialect === "sqlite"
        ? `SELECT file_search_ids.file_id AS id FROM
             (SELECT rowid FROM file_search WHERE file_search MATCH ? LIMIT ${within}) AS m
             CROSS JOIN file_search_ids WHERE file_search_ids.rowid = m.rowid`
        : `SELECT id FROM files WHERE search_doc @@ to_tsquery('simple'::regconfig, ?) LIMIT ${within}`;
    if (this.dialect === "sqlite") await indexPending(this.sql);
    const rows = await this.sql.all<{ id: string }>(
      // CROSS JOIN: SQLite keeps the tables in this order (the matches drive); PostgreSQL reads it as a join.
      `SELECT files.id AS id FROM (${matches}) AS w CROSS JOIN files
       WHERE files.id = w.id AND ${where.join(" AND ")} ORDER BY files.id LIMIT ${Math.floor(q.limit)}`,
      [this.dialect === "sqlite" ? `"${word}"` : `'${word.toLowerCase()}'`, ...params],
    );
    return rows.map((r) => r.id);
  }

  /** The most recently updated notes the filter sees (ids), for context when words say too little. */
  async recent(
    filter: FileListFilter,
    q: Pick<SearchQuery, "limit" | "excludeIds" | "excludeFolderIds">,
  ): Promise<string[]> {
    const { where, params } = accessWhere(filter);
    exclusions(where, params, q);
    const rows = await this.sql.all<{ id: string }>(
      `SELECT files.id FROM files WHERE ${where.join(" AND ")} ORDER BY files.updated_at DESC, files.id LIMIT ${Math.max(1, Math.floor(q.limit))}`,
      params,
    );
    return rows.map((r) => r.id);
  }

  /** The tags of every note the filter sees, with counts (the tag vocabulary), most used first. */
  async tagCounts(
    filter: FileListFilter,
    q: Pick<SearchQuery, "excludeFolderIds">,
  ): Promise<Map<string, number>> {
    const { where, params } = accessWhere(filter);
    exclusions(where, params, q);
    const rows = await this.sql.all<{ tags: string }>(
      `SELECT files.tags FROM files WHERE ${where.join(" AND ")} AND files.tags <> '[]'`,
      params,
    );
    const counts = new Map<string, number>();
    for (const r of rows)
      for (const t of JSON.parse(r.tags) as string[]) counts.set(t, (counts.get(t) ?? 0) + 1);
    return counts;
  }
}

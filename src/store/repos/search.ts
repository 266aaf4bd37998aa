// Full-text search over notes, ranked by the database: SQLite FTS5 with bm25, PostgreSQL tsvector
// with ts_rank (migration 7). Terms are plain words (letters and digits) chosen by the caller; they
// are never spliced into a query language unescaped.

import { catchUp, scopeToken } from "../sqlite/searchIndex.ts";
import { type Phrase, SEARCH_COMMON_AT, searchPhrases } from "../sqlite/searchPhrases.ts";
import type { Sql } from "../store.ts";
import { accessWhere, type FileListFilter } from "./files.ts";
import { ginOnly } from "./ginOnly.ts";
import { snippetOf } from "./snippet.ts";
import { wordCounts } from "./wordCounts.ts";

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
  /** Rank at most this many of the newest matches (SEARCH_WITHIN by default; never below limit). */
  within?: number;
  excludeIds?: readonly string[];
  /** SQLite: a word in this many notes or more weighs nothing in the ranking (SEARCH_COMMON_AT). */
  commonAt?: number;
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

/**
 * How many of the newest matching notes a search ranks: its cost stays that of a rare word however
 * common the words are and however large the store grows. Fewer matches are all ranked.
 */
export const SEARCH_WITHIN = 1000;

/** FTS5 query text for "a note the filter sees, not excluded" (the `scope` column, searchIndex.ts). */
function scopeMatch(
  filter: FileListFilter,
  q: Pick<SearchQuery, "excludeIds" | "excludeFolderIds"> = {},
): string {
  const any = [
    scopeToken("o", filter.ownerId),
    ...(filter.sharedFolderIds ?? []).map((id) => scopeToken("d", id)),
    ...(filter.sharedFileIds ?? []).map((id) => scopeToken("n", id)),
  ];
  const none = [
    ...(q.excludeIds ?? []).map((id) => scopeToken("n", id)),
    ...(q.excludeFolderIds ?? []).map((id) => scopeToken("d", id)),
  ];
  const seen = `scope:(${any.join(" OR ")})`;
  return none.length ? `(${seen} NOT scope:(${none.join(" OR ")}))` : `(${seen})`;
}

/**
 * bm25 over the candidates, with the same scores as bm25 in the query that found them (the property
 * test in test/store/repos/searchRanking.test.ts) whenever every phrase is ranked. bm25 counts, once
 * per query, every note of the whole index holding each phrase of its MATCH: there the scope phrase
 * (every note of the account) and the column filter made that count grow with the store. The bare
 * ranked phrases score each row alike (the scope phrases scored nothing, the scope column's weight
 * being 0, and a word is in no other column than the four unless it spells a scope token, letter
 * and hex id), and each is in fewer than `commonAt` notes (searchPhrases.ts), so reading their
 * notes within the candidates' rowids is bounded. A phrase too common to rank weighs nothing; with
 * none ranked, the newest candidates come first.
 */
async function rankSqlite(
  sql: Sql,
  filter: FileListFilter,
  q: Pick<SearchQuery, "excludeIds" | "excludeFolderIds" | "match">,
  phrases: readonly Phrase[],
  candidates: readonly { rowid: number }[],
  limit: number,
): Promise<{ rowid: number; id: string; score: number }[]> {
  const rowids = candidates.map((c) => Number(c.rowid));
  const ranked = phrases.flatMap((p) => (p.rank ? [p.rank] : []));
  const scores = new Map<number, number>();
  if (ranked.length) {
    // bm25 weights per column: name, context, tags, content, scope (never a word). Lower bm25 is
    // better: negate it.
    const rows = await sql.all<{ rowid: number; score: number }>(
      `SELECT rowid, -bm25(file_search, 8.0, 4.0, 4.0, 1.0, 0.0) AS score FROM file_search
       WHERE file_search MATCH ? AND rowid BETWEEN ? AND ?`,
      [`(${ranked.join(q.match === "all" ? " AND " : " OR ")})`, Math.min(...rowids), Math.max(...rowids)],
    );
    for (const r of rows) scores.set(Number(r.rowid), Number(r.score));
  }
  // The access filter is checked again on the candidates (two primary-key lookups each).
  const { where, params } = accessWhere(filter);
  exclusions(where, params, q);
  const seen = await sql.all<{ rowid: number; id: string }>(
    `SELECT file_search_ids.rowid AS rowid, files.id AS id FROM json_each(?) AS c
     CROSS JOIN file_search_ids ON file_search_ids.rowid = c.value
     CROSS JOIN files ON files.id = file_search_ids.file_id
     WHERE ${where.join(" AND ")}`,
    [JSON.stringify(rowids), ...params],
  );
  const hits = seen.map((r) => ({
    rowid: Number(r.rowid),
    id: r.id,
    score: scores.get(Number(r.rowid)) ?? 0,
  }));
  // Ties by id, as ORDER BY files.id gave them (ids are ASCII); unranked, newest first.
  hits.sort((a, b) =>
    ranked.length ? b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0) : b.rowid - a.rowid,
  );
  return hits.slice(0, limit);
}

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
    const limit = Math.max(1, Math.floor(q.limit));
    const within = Math.max(limit, Math.floor(q.within ?? SEARCH_WITHIN));
    if (this.dialect === "sqlite") return this.searchSqlite(filter, q, terms, limit, within);
    const { where, params } = accessWhere(filter);
    exclusions(where, params, q);
    const parts = terms.map(
      (t, i) => `'${t.toLowerCase()}'${q.prefixLast && i === terms.length - 1 ? ":*" : ""}`,
    );
    const tsquery = parts.join(q.match === "all" ? " & " : " | ");
    // The newest `within` matches the caller sees (the GIN index finds them; only their ids and
    // tsvectors are read), then ts_rank over those alone, then snippets for the page only:
    // ts_headline reads the body.
    const rows = await this.sql.all<{ id: string; score: number; snippet: string }>(
      `SELECT ranked.id, ranked.score,
         ts_headline('simple'::regconfig, left(f.content, 200000), to_tsquery('simple'::regconfig, ?),
           'StartSel=[, StopSel=], MaxWords=24, MinWords=8, MaxFragments=1, FragmentDelimiter=…') AS snippet
       FROM (
         SELECT c.id, ts_rank(c.search_doc, to_tsquery('simple'::regconfig, ?)) AS score
         FROM (
           SELECT files.id AS id, files.search_doc AS search_doc FROM files
           WHERE files.search_doc @@ to_tsquery('simple'::regconfig, ?) AND ${where.join(" AND ")}
           ORDER BY files.id DESC LIMIT ${within}
         ) c
         ORDER BY score DESC, c.id LIMIT ${limit}
       ) ranked JOIN files f ON f.id = ranked.id
       ORDER BY ranked.score DESC, ranked.id`,
      [tsquery, tsquery, tsquery, ...params],
    );
    return rows.map((r) => ({ id: r.id, score: Number(r.score), snippet: r.snippet ?? "" }));
  }

  /**
   * FTS5: the caller's access and the exclusions are part of the MATCH (the `scope` column), so
   * FTS5 yields the caller's matches only, newest first, and stops after `within` of them. bm25
   * ranks those in a second query (rankSqlite), and snippets are made for the page alone
   * (snippet.ts).
   */
  private async searchSqlite(
    filter: FileListFilter,
    q: SearchQuery,
    terms: readonly string[],
    limit: number,
    within: number,
  ): Promise<SearchHit[]> {
    await catchUp(this.sql, true); // what was written and not indexed yet: a search sees every commit
    const phrases = await searchPhrases(
      this.sql,
      terms,
      q.prefixLast === true,
      Math.max(1, Math.floor(q.commonAt ?? SEARCH_COMMON_AT)),
    );
    const which = `(${phrases.map((p) => p.match).join(q.match === "all" ? " AND " : " OR ")})`;
    // Fewer notes of the whole index than `within` match (a word counted below it, for "all";
    // every phrase together, for "any"): all of them are candidates, and the caller's access is
    // checked on them alone (rankSqlite), not in the MATCH. ANDed with the scope phrase FTS5 seeks
    // the account's token (every note of the account) for each match, in every segment: a rare
    // word's candidates took 0.07 ms at 10,000 notes and 1.15 ms at 1,000,000, 0.03 ms without.
    const counts = phrases.map((p) => p.count ?? Number.POSITIVE_INFINITY);
    const bounded =
      q.match === "all" ? Math.min(...counts) < within : counts.reduce((a, b) => a + b, 0) < within;
    const cols = `{name context tags content}:${which}`;
    const candidates = await this.sql.all<{ rowid: number }>(
      `SELECT rowid FROM file_search WHERE file_search MATCH ? ORDER BY rowid DESC LIMIT ${within}`,
      [bounded ? cols : `${scopeMatch(filter, q)} AND ${cols}`],
    );
    if (candidates.length === 0) return [];
    const ranked = await rankSqlite(this.sql, filter, q, phrases, candidates, limit);
    if (ranked.length === 0) return [];
    const bodies = new Map(
      (
        await this.sql.all<{ id: string; content: string }>(
          `SELECT id, substr(content, 1, 200000) AS content FROM files WHERE id IN (${ranked.map(() => "?").join(",")})`,
          ranked.map((r) => r.id),
        )
      ).map((r) => [r.id, r.content]),
    );
    return ranked.map((r) => ({
      id: r.id,
      score: Number(r.score),
      snippet: snippetOf(bodies.get(r.id) ?? "", terms, q.prefixLast === true),
    }));
  }

  /**
   * In how many notes of the whole store each word occurs, counted up to `cap` (both indexes stop
   * reading a word's notes there): how telling a word is, at a cost that does not grow with the store.
   */
  async documentFrequency(terms: readonly string[], cap: number): Promise<Map<string, number>> {
    const words = [...new Set(terms.filter((t) => WORD.test(t)))];
    if (words.length === 0) return new Map();
    if (this.dialect === "sqlite") await catchUp(this.sql, false);
    return wordCounts(this.sql, this.dialect, words, cap);
  }

  /**
   * For each word, up to `limit` notes the filter sees that hold it, the first by id: the same notes
   * on both stores whatever their ranking functions. At most `within` notes holding a word are read:
   * the word's matches come first (a subquery the planners keep apart), never a walk of the files in
   * id order probing the index for each, which a LIMIT tempts them into.
   */
  async withWords(
    filter: FileListFilter,
    words: readonly string[],
    q: { limit: number; within: number; excludeIds?: readonly string[] },
  ): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    const asked = [...new Set(words.filter((w) => WORD.test(w)))];
    if (asked.length === 0) return out;
    const { where, params } = accessWhere(filter);
    exclusions(where, params, q);
    const within = Math.floor(q.within);
    const limit = Math.floor(q.limit);
    if (this.dialect === "sqlite") {
      await catchUp(this.sql, false);
      for (const word of asked) {
        // A word in fewer notes of the whole index than `within` (related notes ask only for such
        // words): all its notes, whose access the outer query checks. A commoner one: the caller's
        // matches only (the scope column), so that `within` counts notes it may see. ANDed with the
        // scope phrase FTS5 seeks the account's token for each match in every segment (a rare
        // word: 0.07 ms at 10,000 notes, 1.15 ms at 1,000,000; 0.03 ms without).
        const counted = await this.sql.get<{ n: number }>(
          `SELECT count(*) AS n FROM (SELECT rowid FROM file_search WHERE file_search MATCH ? LIMIT ${within})`,
          [`"${word}"`],
        );
        const cols = `{name context tags content}:"${word}"`;
        const match = Number(counted?.n ?? within) < within ? cols : `${scopeMatch(filter, q)} AND ${cols}`;
        const rows = await this.sql.all<{ id: string }>(
          // CROSS JOIN: SQLite keeps the tables in this order (the matches drive).
          `SELECT files.id AS id FROM
             (SELECT rowid FROM file_search WHERE file_search MATCH ? LIMIT ${within}) AS m
             CROSS JOIN file_search_ids CROSS JOIN files
           WHERE file_search_ids.rowid = m.rowid AND files.id = file_search_ids.file_id AND ${where.join(" AND ")}
           ORDER BY files.id LIMIT ${limit}`,
          [match, ...params],
        );
        out.set(
          word,
          rows.map((r) => r.id),
        );
      }
      return out;
    }
    // Every word in one statement, through the GIN index only: with the LIMIT, PostgreSQL walked
    // the table for a rare word.
    const lower = new Map(asked.map((w) => [w.toLowerCase(), w]));
    const rows = await ginOnly(this.sql, () =>
      this.sql.all<{ word: string; id: string }>(
        `SELECT w.word AS word, x.id AS id FROM unnest(?::text[]) AS w(word) CROSS JOIN LATERAL (
           SELECT files.id AS id FROM
             (SELECT id FROM files
              WHERE search_doc @@ to_tsquery('simple'::regconfig, quote_literal(w.word)) LIMIT ${within}) AS m
             CROSS JOIN files
           WHERE files.id = m.id AND ${where.join(" AND ")} ORDER BY files.id LIMIT ${limit}) AS x`,
        [[...lower.keys()], ...params],
      ),
    );
    for (const w of asked) out.set(w, []);
    for (const r of rows) out.get(lower.get(r.word)!)?.push(r.id);
    return out;
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

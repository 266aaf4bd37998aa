// The phrases of a SQLite search, and which of them bm25 may rank at a bounded cost. bm25 counts,
// once per query, every note of the whole index holding each of its phrases, and FTS5 reads every
// note holding any word of a prefix (`ap*`) before it yields the first: both grew with the store
// (two common words as typed, in-process: 14 ms at 10,000 notes, 106 ms at 150,000). So a word is counted first, up to
// `commonAt`: a commoner one still selects the notes but weighs nothing in the ranking (bm25 gives a
// word in half the notes no weight at all), and a prefix is spelled out as the few words it stands
// for, which FTS5 reads lazily, newest first.
import type { Sql } from "../store.ts";

/** A search term as FTS5 query text: `match` selects the notes, `rank` (if any) is what bm25 scores. */
export interface Phrase {
  match: string;
  rank?: string;
  /** How many notes of the whole index `match` selects, counted up to `commonAt` (if counted). */
  count?: number;
}

/** How many notes of a word bm25 may count: a word in this many or more weighs nothing. */
export const SEARCH_COMMON_AT = 10_000;
/** The most words a prefix is spelled out as; one with more is FTS5's own prefix query, as before. */
export const PREFIX_WORDS = 16;

/** The index's vocabulary (one row per occurrence, in term order): a prefix's words, found by seeking. */
export const SEARCH_VOCABULARY =
  "CREATE VIRTUAL TABLE IF NOT EXISTS temp.file_search_terms USING fts5vocab(main, file_search, instance)";

/** How many notes hold `match`, counted up to `cap` (FTS5 stops reading there). */
async function count(sql: Sql, match: string, cap: number): Promise<number> {
  const row = await sql.get<{ n: number }>(
    `SELECT count(*) AS n FROM (SELECT rowid FROM file_search WHERE file_search MATCH ? LIMIT ${cap})`,
    [match],
  );
  return Number(row?.n ?? 0);
}

/**
 * The words of the index beginning with `prefix`, up to `max + 1` of them (more: too many to spell
 * out). Each is one seek of the vocabulary past the last one found (`term > x` would walk x's
 * occurrences one by one: 430 ms for a common word at 150,000 notes).
 */
async function wordsWithPrefix(sql: Sql, prefix: string, max: number): Promise<string[]> {
  await sql.run(SEARCH_VOCABULARY);
  const words: string[] = [];
  let from = prefix;
  while (words.length <= max) {
    const row = await sql.get<{ term: string }>(
      "SELECT term FROM temp.file_search_terms WHERE term >= ? AND term < ? LIMIT 1",
      [from, `${prefix}\u{10ffff}`],
    );
    if (!row) break;
    words.push(row.term);
    from = `${row.term}\u0001`;
  }
  return words;
}

/**
 * The phrases of `terms` (letters and digits; the last one a prefix if `prefixLast`). A word is
 * ranked when fewer than `commonAt` notes hold it, a prefix when its words together are in fewer
 * (then bm25 reads them whole at a bounded cost, and scores exactly as it did on the prefix).
 * Only an ASCII prefix is spelled out: FTS5 folds ASCII case as toLowerCase does, and other letters
 * in ways of its own (diacritics), so those stay FTS5's prefix queries, ranked as before.
 */
export async function searchPhrases(
  sql: Sql,
  terms: readonly string[],
  prefixLast: boolean,
  commonAt: number,
): Promise<Phrase[]> {
  const out: Phrase[] = [];
  for (const [i, t] of terms.entries()) {
    if (!(prefixLast && i === terms.length - 1)) {
      const phrase = `"${t}"`;
      const n = await count(sql, phrase, commonAt);
      out.push({ match: phrase, count: n, ...(n < commonAt ? { rank: phrase } : {}) });
      continue;
    }
    const prefix = `"${t}"*`;
    const lower = t.toLowerCase();
    if (!/^[a-z0-9]+$/.test(lower)) {
      out.push({ match: prefix, rank: prefix });
      continue;
    }
    const words = await wordsWithPrefix(sql, lower, PREFIX_WORDS);
    if (words.length === 0 || words.length > PREFIX_WORDS) {
      // None: nothing to read. Too many: FTS5 reads them all, not ranked (a short prefix, typed).
      out.push({ match: prefix, ...(words.length === 0 ? { rank: prefix } : {}) });
      continue;
    }
    const spelled = `(${words.map((w) => `"${w}"`).join(" OR ")})`;
    const n = await count(sql, spelled, commonAt);
    out.push({ match: spelled, count: n, ...(n < commonAt ? { rank: prefix } : {}) });
  }
  return out;
}

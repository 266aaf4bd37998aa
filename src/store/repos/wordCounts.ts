// How many notes of the store hold each word, counted up to a cap, at a cost that does not follow
// the common words' notes. SQLite: FTS5 reads a word's notes in rowid order and stops at the cap.
// PostgreSQL: GIN reads all of a word's notes before the first row, so the words ANALYZE already
// knows to be in twice the cap or more (pg_stats' most common elements of search_doc, kept by
// autovacuum) are taken as common uncounted, and the others are counted through the index alone.
import type { Sql } from "../store.ts";
import { ginOnly } from "./ginOnly.ts";

/** `words`: letters and digits only (the caller checks). */
export async function wordCounts(
  sql: Sql,
  dialect: "sqlite" | "postgres",
  words: readonly string[],
  cap: number,
): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (dialect === "sqlite") {
    for (const w of words) {
      const row = await sql.get<{ n: number }>(
        `SELECT COUNT(*) AS n FROM (SELECT rowid FROM file_search WHERE file_search MATCH ? LIMIT ${cap}) AS t`,
        [`{name context tags content}:"${w}"`],
      );
      out.set(w, Number(row?.n ?? 0));
    }
    return out;
  }
  const lower = new Map(words.map((w) => [w.toLowerCase(), w]));
  const known = await sql.all<{ word: string; n: number }>(
    `SELECT m.e AS word, m.f * greatest(c.reltuples, 0) AS n
     FROM pg_stats s CROSS JOIN LATERAL unnest(s.most_common_elems::text::text[], s.most_common_elem_freqs) AS m(e, f)
       CROSS JOIN pg_class c
     WHERE s.schemaname = current_schema() AND s.tablename = 'files' AND s.attname = 'search_doc'
       AND c.oid = 'files'::regclass AND m.e = ANY(?::text[])`,
    [[...lower.keys()]],
  );
  for (const k of known) if (Number(k.n) >= 2 * cap) out.set(lower.get(k.word)!, cap);
  const rest = [...lower].filter(([, w]) => !out.has(w)).map(([l]) => l);
  if (rest.length === 0) return out;
  const counted = await ginOnly(sql, () =>
    sql.all<{ word: string; n: number }>(
      `SELECT w AS word, (SELECT COUNT(*) FROM (SELECT 1 FROM files
           WHERE search_doc @@ to_tsquery('simple'::regconfig, quote_literal(w)) LIMIT ${cap}) AS t) AS n
       FROM unnest(?::text[]) AS w`,
      [rest],
    ),
  );
  for (const c of counted) out.set(lower.get(c.word)!, Number(c.n));
  return out;
}

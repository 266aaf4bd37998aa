// Words for lexical ranking: a note's or a query's most telling words (letters and digits only, so
// they are safe in FTS5 and tsquery syntax), without the commonest English function words.

const STOP = new Set(
  (
    "the and for are but not you all any can her was one our out day get has him his how man new now old see " +
    "two way who boy did its let put say she too use that with have this will your from they know want been " +
    "good much some time very when come here just like long make many more only over such take than them well " +
    "were what into also each other which their there about would these could should because where after " +
    "before being while does done then those through under again once most own same both few off why"
  ).split(" "),
);

/** Every word of a search query, in order, deduplicated. */
export function queryTerms(text: string, max = 16): string[] {
  const out: string[] = [];
  for (const m of text.toLowerCase().matchAll(/[\p{L}\p{N}]+/gu)) {
    if (!out.includes(m[0])) out.push(m[0]);
    if (out.length >= max) break;
  }
  return out;
}

/** Every word of a text that salientTerms could pick, for telling whether a note uses them. */
export function wordSet(text: string): Set<string> {
  return new Set(
    text
      .slice(0, 20_000)
      .toLowerCase()
      .match(/[\p{L}\p{N}]{3,}/gu) ?? [],
  );
}

/** The most frequent meaningful words of a text with their counts, most frequent first. */
export function termCounts(text: string, max: number): [word: string, count: number][] {
  const counts = new Map<string, number>();
  for (const m of text
    .slice(0, 20_000)
    .toLowerCase()
    .matchAll(/[\p{L}\p{N}]{3,}/gu)) {
    const w = m[0];
    if (STOP.has(w) || /^\d+$/.test(w)) continue;
    counts.set(w, (counts.get(w) ?? 0) + 1);
  }
  return [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, max);
}

/** The most frequent meaningful words of a text (for "similar text" and context retrieval). */
export function salientTerms(text: string, max = 12): string[] {
  return termCounts(text, max).map(([w]) => w);
}

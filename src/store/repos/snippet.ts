// A search hit's snippet on SQLite, made from the note's text here rather than by FTS5's snippet():
// that re-runs the whole full-text query for each row it is asked about, and a prefix term (search
// as you type) expands over the entire index each time (~9 ms a row at 100,000 notes, so 20 hits
// cost more than the search). Words are told apart as the index's tokenizer does (letters and
// digits, case and diacritics folded), so the marked words are the ones that matched.

const TOKEN = /[\p{L}\p{N}]+/gu;
/** What SQLite reads of a body for its snippet: as much as PostgreSQL's index holds. */
const MAX_CHARS = 200_000;

const fold = (s: string) => s.normalize("NFD").replace(/\p{M}/gu, "").toLowerCase();

/**
 * `size` consecutive words of `text` around its matches of `terms` (the last a prefix when
 * `prefixLast`), as FTS5 chooses them: the window holding the most different terms, then the most
 * matches, its matches centred; matches in [brackets], `…` where text was cut. Without a match,
 * the text's start.
 */
export function snippetOf(text: string, terms: readonly string[], prefixLast: boolean, size = 16): string {
  const folded = terms.map(fold);
  const termOf = (word: string) => {
    const w = fold(word);
    return folded.findIndex((t, i) => w === t || (prefixLast && i === folded.length - 1 && w.startsWith(t)));
  };
  const body = text.slice(0, MAX_CHARS);
  const words: { start: number; end: number; term: number }[] = [];
  for (const m of body.matchAll(TOKEN))
    words.push({ start: m.index, end: m.index + m[0].length, term: termOf(m[0]) });
  if (words.length === 0) return "";
  let best = 0;
  let bestScore = 0;
  for (let i = 0; i < words.length; i++) {
    if (words[i]!.term < 0) continue;
    // A window starting at this match: 1,000 for each different term in it, 1 for each match.
    const seen = new Set<number>();
    let score = 0;
    let last = i;
    for (let j = i; j < Math.min(words.length, i + size); j++) {
      const t = words[j]!.term;
      if (t < 0) continue;
      score += seen.has(t) ? 1 : 1000;
      seen.add(t);
      last = j;
    }
    if (score > bestScore) {
      bestScore = score;
      best = Math.max(0, i - Math.floor((size - (last - i + 1)) / 2)); // centred
    }
  }
  best = Math.max(0, Math.min(best, words.length - size));
  const window = words.slice(best, best + size);
  let out = best > 0 ? "…" : body.slice(0, window[0]!.start);
  for (const [k, w] of window.entries()) {
    if (k > 0) out += body.slice(window[k - 1]!.end, w.start);
    const word = body.slice(w.start, w.end);
    out += w.term >= 0 ? `[${word}]` : word;
  }
  return best + size < words.length ? `${out}…` : out + body.slice(window.at(-1)!.end);
}

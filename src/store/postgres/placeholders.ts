// Repositories write `?` placeholders (portable across backends); PostgreSQL numbers them ($1, $2...).

const cache = new Map<string, string>();

/** Rewrites each `?` outside quoted strings and identifiers to `$n`. Results are cached per text. */
export function numberPlaceholders(sql: string): string {
  const hit = cache.get(sql);
  if (hit !== undefined) return hit;
  let out = "";
  let n = 0;
  let quote: string | null = null;
  for (const ch of sql) {
    if (quote) {
      if (ch === quote) quote = null;
      out += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      out += ch;
    } else if (ch === "?") {
      out += `$${++n}`;
    } else {
      out += ch;
    }
  }
  if (cache.size < 10_000) cache.set(sql, out);
  return out;
}

// PostgreSQL's text type cannot hold U+0000, which a note's content may (a file written with a hole
// reads back as NUL bytes, and the mount must keep bytes exactly). SQLite stores it as it is. So
// that both stores keep the same text, strings are escaped on their way into PostgreSQL and
// unescaped on their way out: U+0001 is the escape character, "\u0001" + "0" stands for U+0000 and
// "\u0001\u0001" for U+0001 itself. A string with neither character (nearly all) is left as it is.
const ESCAPE = "\u0001";
// biome-ignore lint/suspicious/noControlCharactersInRegex: U+0000 and U+0001 are what is escaped
const NEEDS_ESCAPE = /[\u0000\u0001]/;

export function escapeText(s: string): string {
  if (!NEEDS_ESCAPE.test(s)) return s;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: U+0000 and U+0001 are what is escaped
  return s.replace(/[\u0000\u0001]/g, (c) => (c === "\u0000" ? `${ESCAPE}0` : `${ESCAPE}${ESCAPE}`));
}

export function unescapeText(s: string): string {
  if (!s.includes(ESCAPE)) return s;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: U+0000 and U+0001 are what is escaped
  return s.replace(/\u0001([\u00010])/g, (_, c: string) => (c === "0" ? "\u0000" : ESCAPE));
}

/** Query parameters with every string escaped. */
export function escapeParams(params: readonly unknown[]): unknown[] {
  return params.map((p) => (typeof p === "string" ? escapeText(p) : p));
}

/** Rows with every string column unescaped (in place). */
export function unescapeRows<R>(rows: R[]): R[] {
  for (const row of rows as Record<string, unknown>[]) {
    for (const key in row) {
      const v = row[key];
      if (typeof v === "string" && v.includes(ESCAPE)) row[key] = unescapeText(v);
    }
  }
  return rows;
}

// SQLite's search snippets are made from the note's text (src/store/repos/snippet.ts), not by FTS5's
// snippet(), which re-runs the query per row: the same words marked, the same window in the cases
// FTS5 decides plainly, compared here with FTS5 itself on the same texts.
import { DatabaseSync } from "node:sqlite";
import { describe, expect, it } from "vitest";
import { snippetOf } from "../../../src/store/repos/snippet.ts";

describe("search snippets", () => {
  it("marks the matched words as the tokenizer sees them (case, diacritics, a prefix)", () => {
    expect(snippetOf("Saffron risotto needs saffron threads and stock.", ["saffron"], false)).toBe(
      "[Saffron] risotto needs [saffron] threads and stock.",
    );
    expect(snippetOf("Crème brûlée, CRÈME anglaise", ["creme", "angl"], true)).toBe(
      "[Crème] brûlée, [CRÈME] [anglaise]",
    );
    expect(snippetOf("threads and thr", ["thr"], false)).toBe("threads and [thr]");
    expect(snippetOf("no match here", ["zebra"], false)).toBe("no match here");
    expect(snippetOf("", ["zebra"], false)).toBe("");
    expect(snippetOf("?!", ["zebra"], false)).toBe("");
  });

  it("a long text: the window with both words, cut with …, as FTS5 chooses it", () => {
    const filler = (n: number, w: string) => Array.from({ length: n }, (_, i) => `${w}${i}`).join(" ");
    const texts = [
      `${filler(40, "a")} alpha ${filler(3, "b")} beta ${filler(40, "c")}`,
      `alpha ${filler(30, "d")} alpha ${filler(5, "e")} beta gamma ${filler(30, "f")}`,
      `${filler(5, "g")} beta ${filler(20, "h")} alpha beta ${filler(2, "i")}`,
    ];
    const db = new DatabaseSync(":memory:");
    db.exec("CREATE VIRTUAL TABLE t USING fts5(content, tokenize = 'unicode61 remove_diacritics 2')");
    for (const [i, text] of texts.entries())
      db.prepare("INSERT INTO t (rowid, content) VALUES (?, ?)").run(i + 1, text);
    const fts5 = db
      .prepare("SELECT rowid, snippet(t, 0, '[', ']', '…', 16) AS s FROM t WHERE t MATCH ? ORDER BY rowid")
      .all('"alpha" AND "beta"') as { s: string }[];
    expect(texts.map((text) => snippetOf(text, ["alpha", "beta"], false))).toEqual(fts5.map((r) => r.s));
    db.close();
  });
});

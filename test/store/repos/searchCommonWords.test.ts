// A SQLite search counts each word up to a bound before bm25 ranks (src/store/sqlite/searchPhrases.ts):
// a word in that many notes or more still selects them but weighs nothing, so bm25 never counts a
// common word's notes; a prefix is spelled out as the words of the index it stands for. The bound is
// lowered here (`commonAt`) so that a small store shows what a large one does.
import type { DatabaseSync } from "node:sqlite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SearchQuery, SearchRepo } from "../../../src/store/repos/search.ts";
import { indexPending } from "../../../src/store/sqlite/searchIndex.ts";
import { PREFIX_WORDS } from "../../../src/store/sqlite/searchPhrases.ts";
import type { Sql } from "../../../src/store/store.ts";
import { migratedDb } from "../../helpers/migratedDb.ts";

let opened: Awaited<ReturnType<typeof migratedDb>>;
let db: DatabaseSync;
let sql: Sql;

beforeAll(async () => {
  opened = await migratedDb("txtfs-search-common-");
  ({ db, sql } = opened);
  const insert = db.prepare(
    `INSERT INTO files (id, owner_id, name, context, tags, type, availability, size, content_hash,
       revision, version_number, etag, created_at, updated_at, content)
     VALUES (?, 'u1', ?, '', '[]', 'md', 'online', 1, 'h', 1, 1, 'e', 't', 't', ?)`,
  );
  // Older notes hold the common word more often; two of them, the older the more, a rarer word.
  const texts = [
    "alpha ".repeat(9) + "zeta ".repeat(5),
    `${"alpha ".repeat(7)}zeta`,
    "alpha ".repeat(5),
    "alpha ".repeat(3),
    "alpha",
    "alpha",
  ];
  for (const [i, text] of texts.entries()) insert.run(`f${i}`, `n${i}.md`, text);
  // More words with one prefix than a prefix is spelled out as.
  for (let i = 0; i <= PREFIX_WORDS; i++) insert.run(`p${i}`, `p${i}.md`, `prefixed${i} beta`);
  insert.run("g1", "g1.md", "alpine gamma");
  await indexPending(sql);
});
afterAll(() => opened.close());

const search = (q: Omit<SearchQuery, "match" | "limit">) =>
  new SearchRepo(sql, "sqlite").search({ ownerId: "u1" }, { match: "all", limit: 20, ...q });
const ids = (hits: { id: string }[]) => hits.map((h) => h.id);

describe("search for common words", () => {
  it("below the bound, bm25 ranks: the notes holding the word most often first", async () => {
    const hits = await search({ terms: ["alpha"] });
    expect(ids(hits).sort()).toEqual(["f0", "f1", "f2", "f3", "f4", "f5"]);
    expect(hits.every((h) => h.score > 0)).toBe(true);
    expect(["f0", "f1"]).toContain(hits[0]!.id);
    expect(ids(hits).slice(-2)).toEqual(["f4", "f5"]); // the same score: ties by id
  });

  it("a word in `commonAt` notes or more weighs nothing: the newest of its notes come first", async () => {
    const hits = await search({ terms: ["alpha"], commonAt: 6 });
    expect(ids(hits)).toEqual(["f5", "f4", "f3", "f2", "f1", "f0"]);
    expect(hits.every((h) => h.score === 0)).toBe(true);
  });

  it("beside a common word, a rarer one still ranks", async () => {
    const hits = await search({ terms: ["alpha", "zeta"], commonAt: 6 });
    expect(ids(hits)).toEqual(["f0", "f1"]);
    expect(hits[0]!.score).toBeGreaterThan(hits[1]!.score);
    expect(hits[1]!.score).toBeGreaterThan(0);
  });

  it("a prefix finds every word it begins, spelled out or (too many words) read by FTS5", async () => {
    expect(ids(await search({ terms: ["alp"], prefixLast: true })).sort()).toEqual(
      ["f0", "f1", "f2", "f3", "f4", "f5", "g1"].sort(),
    );
    expect(ids(await search({ terms: ["gamma", "ALP"], prefixLast: true }))).toEqual(["g1"]);
    const many = await search({ terms: ["beta", "prefixed"], prefixLast: true });
    expect(many).toHaveLength(PREFIX_WORDS + 1);
    expect(await search({ terms: ["nosuchprefix"], prefixLast: true })).toEqual([]);
  });

  it("a common prefix selects its notes but weighs nothing, as a common word", async () => {
    const hits = await search({ terms: ["alp"], prefixLast: true, commonAt: 7 });
    expect(ids(hits)).toEqual(["g1", "f5", "f4", "f3", "f2", "f1", "f0"]);
  });
});

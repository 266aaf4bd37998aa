// A SQLite search yields the caller's notes only, whichever way its candidates are found
// (src/store/repos/search.ts): words in fewer notes of the whole index than a search ranks are
// matched without the caller's scope phrase (all their notes are candidates, the access filter and
// the exclusions are checked on them); commoner words are matched with it (the caller's newest).
import type { DatabaseSync } from "node:sqlite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FileListFilter } from "../../../src/store/repos/files.ts";
import { type SearchQuery, SearchRepo } from "../../../src/store/repos/search.ts";
import { indexPending } from "../../../src/store/sqlite/searchIndex.ts";
import type { Sql } from "../../../src/store/store.ts";
import { migratedDb } from "../../helpers/migratedDb.ts";

let opened: Awaited<ReturnType<typeof migratedDb>>;
let db: DatabaseSync;
let sql: Sql;

beforeAll(async () => {
  opened = await migratedDb("txtfs-search-access-");
  ({ db, sql } = opened);
  const insert = db.prepare(
    `INSERT INTO files (id, owner_id, folder_id, name, context, tags, type, availability, size,
       content_hash, revision, version_number, etag, created_at, updated_at, content)
     VALUES (?, ?, ?, ?, '', '[]', 'md', 'online', 1, 'h', 1, 1, 'e', 't', 't', ?)`,
  );
  // A rare word: two notes of u1 (folders d1 and d2), one of u2, one at u1's top level.
  insert.run("a1", "u1", "d1", "a1.md", "kappa one");
  insert.run("a2", "u1", "d2", "a2.md", "kappa two");
  insert.run("b1", "u2", "e1", "b1.md", "kappa three");
  insert.run("a3", "u1", null, "a3.md", "kappa four");
  // A word in more notes than a search ranks (limit 20): 15 of u1 in d1, 15 of u2.
  for (let i = 0; i < 15; i++) {
    insert.run(`c${i}`, "u1", "d1", `c${i}.md`, `omega ${i}`);
    insert.run(`e${i}`, "u2", "e1", `e${i}.md`, `omega ${i}`);
  }
  await indexPending(sql);
});
afterAll(() => opened.close());

const search = (filter: FileListFilter, terms: string[], q: Partial<SearchQuery> = {}) =>
  new SearchRepo(sql, "sqlite")
    .search(filter, { terms, match: "all", limit: 20, ...q })
    .then((hits) => hits.map((h) => h.id).sort());

describe("a search's access, whichever way its candidates are found", () => {
  it("a rare word (fewer notes than a search ranks): the caller's notes only, its exclusions left out", async () => {
    expect(await search({ ownerId: "u1" }, ["kappa"])).toEqual(["a1", "a2", "a3"]);
    expect(await search({ ownerId: "u2" }, ["kappa"])).toEqual(["b1"]);
    expect(await search({ ownerId: "u1" }, ["kappa"], { excludeFolderIds: ["d2"] })).toEqual(["a1", "a3"]);
    expect(await search({ ownerId: "u1" }, ["kappa"], { excludeIds: ["a1"] })).toEqual(["a2", "a3"]);
    // A folder shared with u2: its notes and u2's own.
    expect(await search({ ownerId: "u2", sharedFolderIds: ["d1"] }, ["kappa"])).toEqual(["a1", "b1"]);
    expect(await search({ ownerId: "u3", sharedFileIds: ["a2"] }, ["kappa"])).toEqual(["a2"]);
    expect(await search({ ownerId: "u3" }, ["kappa"])).toEqual([]);
    // The last word a prefix, spelled out: the same.
    expect(await search({ ownerId: "u1" }, ["kap"], { prefixLast: true })).toEqual(["a1", "a2", "a3"]);
  });

  it("notes holding a word (related notes' text candidates): the caller's only, below the bound and above it", async () => {
    const withWords = (filter: FileListFilter, words: string[], within: number, excludeIds?: string[]) =>
      new SearchRepo(sql, "sqlite")
        .withWords(filter, words, { limit: 50, within, excludeIds })
        .then((m) => Object.fromEntries([...m].map(([w, ids]) => [w, [...ids].sort()])));
    // kappa in 4 notes of the index: below a bound of 500, matched without the scope phrase.
    expect(await withWords({ ownerId: "u1" }, ["kappa"], 500)).toEqual({ kappa: ["a1", "a2", "a3"] });
    expect(await withWords({ ownerId: "u1" }, ["kappa"], 500, ["a2"])).toEqual({ kappa: ["a1", "a3"] });
    expect(await withWords({ ownerId: "u2", sharedFolderIds: ["d1"] }, ["kappa"], 500)).toEqual({
      kappa: ["a1", "b1"],
    });
    // A bound of 2: kappa is commoner than that, so the caller's matches come from the MATCH
    // (at most 2 of them are read).
    const few = await withWords({ ownerId: "u1" }, ["kappa"], 2);
    expect(few.kappa!.length).toBeLessThanOrEqual(2);
    expect(few.kappa!.every((id) => ["a1", "a2", "a3"].includes(id))).toBe(true);
    expect(await withWords({ ownerId: "u3" }, ["kappa", "omega"], 500)).toEqual({ kappa: [], omega: [] });
  });

  it("a word in more notes than a search ranks: the caller's notes only, from the MATCH", async () => {
    const own = Array.from({ length: 15 }, (_, i) => `c${i}`).sort();
    expect(await search({ ownerId: "u1" }, ["omega"])).toEqual(own);
    expect(await search({ ownerId: "u1" }, ["omega"], { excludeIds: ["c0"] })).toEqual(own.slice(1));
    expect(await search({ ownerId: "u3", sharedFolderIds: ["e1"] }, ["omega"])).toEqual(
      Array.from({ length: 15 }, (_, i) => `e${i}`).sort(),
    );
    // Both words: fewer notes than the bound hold the rarer one.
    expect(await search({ ownerId: "u2" }, ["omega", "kappa"])).toEqual([]);
  });
});

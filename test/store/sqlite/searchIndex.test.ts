// SQLite's full-text index follows the files after their writes commit (src/store/sqlite/searchIndex.ts):
// the writes note what changed, in their own transaction; indexing the noted files brings the index
// to exactly what the files hold; a store opened on noted files catches up by itself. (That a
// search sees every committed write at once is test/api/brain-media.test.ts, "search".)
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SearchRepo } from "../../../src/store/repos/search.ts";
import { indexPending, SEARCH_CATCH_UP, SearchIndexBehind } from "../../../src/store/sqlite/searchIndex.ts";
import { SqliteStore } from "../../../src/store/sqlite/sqliteStore.ts";
import type { Sql } from "../../../src/store/store.ts";

let dir: string;
let path: string;
let db: DatabaseSync;

const sqlOf = (d: DatabaseSync): Sql => ({
  all: async (q, p = []) => d.prepare(q).all(...(p as never[])) as never[],
  get: async (q, p = []) => d.prepare(q).get(...(p as never[])) as never,
  run: async (q, p = []) => ({ changes: Number(d.prepare(q).run(...(p as never[])).changes) }),
});

function addFile(id: string, name: string, content: string) {
  db.prepare(
    `INSERT INTO files (id, owner_id, name, type, availability, size, content_hash, revision, version_number,
       etag, created_at, updated_at, content)
     VALUES (?, 'u1', ?, 'md', 'online', ?, 'h', 1, 1, 'e', 't', 't', ?)`,
  ).run(id, name, content.length, content);
}

const noted = () =>
  (db.prepare("SELECT file_id FROM file_search_pending ORDER BY file_id").all() as { file_id: string }[]).map(
    (r) => r.file_id,
  );
const found = (word: string) =>
  (
    db
      .prepare(
        `SELECT s.file_id FROM file_search JOIN file_search_ids s ON s.rowid = file_search.rowid
         WHERE file_search MATCH ? ORDER BY s.file_id`,
      )
      .all(word) as { file_id: string }[]
  ).map((r) => r.file_id);

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "txtfs-search-"));
  path = join(dir, "txtfs.db");
  await new SqliteStore(path).close(); // the schema, with every migration
  db = new DatabaseSync(path, { enableForeignKeyConstraints: false }); // files without their owners will do here
});
afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("the full-text index after the commit", () => {
  it("writes note what changed; indexing the noted files makes the index what the files hold", async () => {
    addFile("f1", "risotto.md", "saffron risotto");
    addFile("f2", "spices.md", "cumin and pepper");
    expect(noted()).toEqual(["f1", "f2"]);
    expect(found("saffron")).toEqual([]); // not indexed inside the write
    expect(await indexPending(sqlOf(db))).toBe(2);
    expect([noted(), found("saffron"), found("cumin"), found("risotto")]).toEqual([
      [],
      ["f1"],
      ["f2"],
      ["f1"],
    ]);

    db.prepare("UPDATE files SET content = 'turmeric rice', name = 'rice.md' WHERE id = 'f1'").run();
    db.prepare("UPDATE files SET size = 99 WHERE id = 'f2'").run(); // nothing the index holds
    expect(noted()).toEqual(["f1"]);
    db.prepare("UPDATE files SET content = 'turmeric rice again' WHERE id = 'f1'").run(); // noted once
    expect(await indexPending(sqlOf(db))).toBe(1);
    expect([found("saffron"), found("turmeric"), found("again"), found("rice")]).toEqual([
      [],
      ["f1"],
      ["f1"],
      ["f1"],
    ]);

    db.prepare("DELETE FROM files WHERE id = 'f2'").run();
    expect(await indexPending(sqlOf(db))).toBe(1);
    expect(found("cumin")).toEqual([]);
    expect(db.prepare("SELECT file_id FROM file_search_ids ORDER BY file_id").all()).toEqual([
      { file_id: "f1" },
    ]);
    expect(db.prepare("SELECT count(*) AS n FROM file_search").get()).toEqual({ n: 1 });
  });

  it("takes at most the given number of files (and bytes) at a time; a failure leaves them noted", async () => {
    for (const id of ["a", "b", "c"]) addFile(id, `${id}.md`, `word${id}`);
    expect(await indexPending(sqlOf(db), 2)).toBe(2);
    expect(noted()).toHaveLength(1);
    // A byte budget ends the batch early, but never before the first file.
    addFile("d", "d.md", "x".repeat(1000));
    addFile("e", "e.md", "worde");
    expect(await indexPending(sqlOf(db), 10, 100)).toBe(1); // c
    expect(await indexPending(sqlOf(db), 10, 100)).toBe(1); // d alone is past the budget
    expect(noted()).toEqual(["e"]);
    expect(await indexPending(sqlOf(db), 10, 100)).toBe(1);
    expect([found("wordc"), found("worde")]).toEqual([["c"], ["e"]]);
    db.prepare("DELETE FROM files WHERE id = 'e'").run(); // a deleted file has no text left to weigh
    expect(await indexPending(sqlOf(db), 10, 100)).toBe(1);
    expect(found("worde")).toEqual([]);
    addFile("f", "f.md", "wordf");
    db.exec("DROP TABLE file_search_ids"); // every indexing statement fails now
    await expect(indexPending(sqlOf(db))).rejects.toThrow();
    expect(noted()).toHaveLength(1);
    expect(db.isTransaction).toBe(false);
  });

  it("a store opened on noted files (its last run stopped first) indexes them by itself", async () => {
    addFile("f1", "n.md", "zanzibar cloves");
    expect(noted()).toEqual(["f1"]);
    const store = new SqliteStore(path);
    try {
      const deadline = Date.now() + 5000;
      while (noted().length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect([noted(), found("zanzibar")]).toEqual([[], ["f1"]]);
    } finally {
      await store.close();
    }
  });

  it("a search indexes a write's backlog itself, never a whole store's: past SEARCH_CATCH_UP it refuses", async () => {
    const repo = new SearchRepo(sqlOf(db), "sqlite");
    const own = { ownerId: "u1" };
    const search = (word: string) => repo.search(own, { terms: [word], match: "all", limit: 5 });
    db.exec("BEGIN");
    for (let i = 0; i < SEARCH_CATCH_UP; i++)
      addFile(`f${String(i).padStart(5, "0")}`, `n${i}.md`, `wordy ${i}`);
    db.exec("COMMIT");
    expect((await search("wordy")).length).toBe(5); // all 2,000 indexed by the search itself
    expect(noted()).toEqual([]);

    // An upgrade notes every file again (migration 14): more than a search may take on.
    db.exec("INSERT OR IGNORE INTO file_search_pending (file_id) SELECT id FROM files");
    addFile("late", "late.md", "zanzibar");
    const err = await search("zanzibar").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SearchIndexBehind);
    expect(noted()).toHaveLength(SEARCH_CATCH_UP + 1); // nothing indexed, nothing lost
    // Related notes' candidates use the index as it is meanwhile, without indexing either.
    expect(await repo.documentFrequency(["zanzibar", "wordy"], 100)).toEqual(
      new Map([
        ["zanzibar", 0],
        ["wordy", 100],
      ]),
    );
    expect(noted()).toHaveLength(SEARCH_CATCH_UP + 1);
    // Once the background pass has brought the backlog under the bound, a search is whole again.
    await indexPending(sqlOf(db), 1000);
    expect(noted()).toHaveLength(SEARCH_CATCH_UP + 1 - 1000);
    expect((await search("zanzibar")).map((h) => h.id)).toEqual(["late"]);
    expect(noted()).toEqual([]);
  });
});

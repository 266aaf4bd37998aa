// Related notes gather their candidates through indexes only (src/store/repos/related.ts): a scan of
// the files or of the tag index would make every `.txtfs/related/` listing, connections xattr and
// MCP call grow with the store. The plans are SQLite's; the same statements run on PostgreSQL.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RelatedRepo } from "../../../src/store/repos/related.ts";
import { SearchRepo } from "../../../src/store/repos/search.ts";
import { SqliteStore } from "../../../src/store/sqlite/sqliteStore.ts";
import type { Sql } from "../../../src/store/store.ts";

let dir: string;
let db: DatabaseSync;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "txtfs-related-plans-"));
  const path = join(dir, "txtfs.db");
  await new SqliteStore(path).close(); // every migration applied
  db = new DatabaseSync(path);
});
afterAll(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Every statement a repo call sends, answered with nothing. */
async function sqlOf(call: (sql: Sql) => Promise<unknown>): Promise<{ sql: string; params: unknown[] }[]> {
  const sent: { sql: string; params: unknown[] }[] = [];
  const capture = async (sql: string, params: unknown[] = []) => {
    sent.push({ sql, params: [...params] });
    return [] as never;
  };
  await call({ all: capture, get: capture, run: capture } as Sql);
  return sent;
}

function plan(q: { sql: string; params: unknown[] }): string {
  const rows = db.prepare(`EXPLAIN QUERY PLAN ${q.sql}`).all(...(q.params as never[])) as {
    detail: string;
  }[];
  return rows.map((r) => r.detail).join("\n");
}

const own = { ownerId: "u_1" };
const shared = { ownerId: "u_1", sharedFolderIds: ["d_1", "d_2"], sharedFileIds: ["f_9"] };

describe("related notes' candidate queries", () => {
  it.each([
    ["tag count", (r: RelatedRepo) => r.tagCount(shared, "t", 1000)],
    ["notes with a tag", (r: RelatedRepo) => r.withTag(shared, "t", 25)],
    ["notes in a folder", (r: RelatedRepo) => r.inFolder(shared, "d_1", 25)],
    ["their words", (r: RelatedRepo) => r.texts(["f_1", "f_2"], 20_000)],
  ])("%s: every statement searches an index, none scans", async (_what, call) => {
    const statements = await sqlOf((sql) => call(new RelatedRepo(sql)));
    expect(statements.length).toBeGreaterThan(0);
    for (const q of statements) {
      const p = plan(q);
      expect(p, q.sql).toMatch(/SEARCH/);
      expect(p, q.sql).not.toMatch(/\bSCAN (files|file_search_tags)\b/);
    }
  });

  it("notes holding a word: the word's matches are read first, never the files in id order", async () => {
    const statements = await sqlOf((sql) =>
      new SearchRepo(sql, "sqlite").withWords(shared, ["word"], {
        limit: 16,
        within: 500,
        excludeIds: ["f_1"],
      }),
    );
    const q = statements.at(-1)!; // after the pending index work
    const p = plan(q);
    expect(p.split("\n")[0], p).toMatch(/^(CO-ROUTINE|MATERIALIZE) m\b/);
    expect(p, p).toMatch(/SCAN file_search VIRTUAL TABLE INDEX \d+:M/);
    expect(p, p).not.toMatch(
      /\bSCAN files\b|(SEARCH|SCAN) files USING (COVERING )?INDEX files_listing \(owner_id=\?\)$/m,
    );
  });

  it("counting a word's notes stops at the cap", async () => {
    const statements = await sqlOf((sql) => new SearchRepo(sql, "sqlite").documentFrequency(["word"], 500));
    const q = statements.at(-1)!;
    expect(q.sql).toMatch(/LIMIT 500/);
    expect(plan(q)).toMatch(/SCAN file_search VIRTUAL TABLE INDEX \d+:M/);
  });

  it("an account's own notes with a tag are one range of the tag index", async () => {
    const [q] = await sqlOf((sql) => new RelatedRepo(sql).withTag(own, "t", 25));
    expect(plan(q!)).toBe("SEARCH file_search_tags USING PRIMARY KEY (owner_id=? AND tag=?)");
  });

  it("the tag index holds what every write leaves in files.tags", () => {
    const now = new Date().toISOString();
    db.exec(`INSERT INTO users (id, email, name, created_at) VALUES ('u_t', 't@x', 't', '${now}')`);
    const insert = db.prepare(
      `INSERT INTO files (id, owner_id, name, type, availability, tags, size, content_hash, revision,
         version_number, etag, created_at, updated_at)
       VALUES (?, 'u_t', ?, 'md', 'cloud', ?, 0, 'h', 1, 1, 'e', '${now}', '${now}')`,
    );
    insert.run("f_a", "a.md", '["x","y"]');
    insert.run("f_b", "b.md", "[]");
    const tags = () =>
      db
        .prepare("SELECT file_id, tag FROM file_search_tags WHERE owner_id = 'u_t' ORDER BY file_id, tag")
        .all();
    expect(tags()).toEqual([
      { file_id: "f_a", tag: "x" },
      { file_id: "f_a", tag: "y" },
    ]);
    db.exec(
      `UPDATE files SET tags = '["y","z"]' WHERE id = 'f_a'; UPDATE files SET tags = '["x"]' WHERE id = 'f_b'`,
    );
    expect(tags()).toEqual([
      { file_id: "f_a", tag: "y" },
      { file_id: "f_a", tag: "z" },
      { file_id: "f_b", tag: "x" },
    ]);
    db.exec("DELETE FROM files WHERE id = 'f_a'");
    expect(tags()).toEqual([{ file_id: "f_b", tag: "x" }]);
  });
});

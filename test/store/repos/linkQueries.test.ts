// The link graph is kept through indexes only (src/store/repos/links.ts): a save reads its own
// links, the links naming its names and the notes sharing a link's name, never a scan of the
// account's links, names or files. The plans are SQLite's; the same statements run on PostgreSQL.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LinkRepo } from "../../../src/store/repos/links.ts";
import { SqliteStore } from "../../../src/store/sqlite/sqliteStore.ts";
import type { Sql } from "../../../src/store/store.ts";

let dir: string;
let db: DatabaseSync;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "txtfs-link-plans-"));
  const path = join(dir, "txtfs.db");
  await new SqliteStore(path).close(); // every migration applied
  db = new DatabaseSync(path);
});
afterAll(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

async function sqlOf(call: (sql: Sql) => Promise<unknown>): Promise<{ sql: string; params: unknown[] }[]> {
  const sent: { sql: string; params: unknown[] }[] = [];
  const capture = async (sql: string, params: unknown[] = []) => {
    sent.push({ sql, params: [...params] });
    return [] as never;
  };
  const none = async (sql: string, params: unknown[] = []) => {
    sent.push({ sql, params: [...params] });
    return undefined as never;
  };
  await call({ all: capture, get: none, run: capture } as Sql);
  return sent;
}

function plan(q: { sql: string; params: unknown[] }): string {
  const rows = db.prepare(`EXPLAIN QUERY PLAN ${q.sql}`).all(...(q.params as never[])) as {
    detail: string;
  }[];
  return rows.map((r) => r.detail).join("\n");
}

const link = {
  source_id: "f_1",
  ord: 0,
  owner_id: "u_1",
  embed: 0,
  path: "Note",
  name_key: "note",
  alias_key: "note",
  target_id: null,
  attachment_id: null,
  text: "[[Note]]",
};

describe("the link index's queries", () => {
  it.each([
    ["a note's links", (r: LinkRepo) => r.from("f_1", 200)],
    ["links to a note", (r: LinkRepo) => r.to("f_1", 200)],
    ["links by name and alias", (r: LinkRepo) => r.byKeys("u_1", ["note", "other"], ["nick"])],
    ["notes by name or alias", (r: LinkRepo) => r.named("u_1", "note", "note", 200)],
    ["a note's names", (r: LinkRepo) => r.namesOf("f_1")],
    ["unresolved, first page", (r: LinkRepo) => r.unresolved("u_1", null, 100)],
    ["unresolved, next page", (r: LinkRepo) => r.unresolved("u_1", { sourceId: "f_1", ord: 3 }, 100)],
    ["set tags", (r: LinkRepo) => r.setTags("f_1")],
    ["replacing a note's links", (r: LinkRepo) => r.replaceFrom("f_1", [link])],
    [
      "replacing a note's names",
      (r: LinkRepo) => r.replaceNames("f_1", "u_1", [{ key: "note", alias: false }]),
    ],
    ["retargeting a link", (r: LinkRepo) => r.setTarget("f_1", 0, { targetId: "f_2", attachmentId: null })],
    ["forgetting a note", (r: LinkRepo) => r.deleteNote("f_1")],
  ])("%s: every statement searches an index, none scans", async (_what, call) => {
    const statements = await sqlOf((sql) => call(new LinkRepo(sql)));
    expect(statements.length).toBeGreaterThan(0);
    for (const q of statements) {
      if (/^\s*INSERT/.test(q.sql)) continue; // an insert reads nothing
      const p = plan(q);
      expect(p, q.sql).toMatch(/SEARCH/);
      expect(p, q.sql).not.toMatch(/\bSCAN (files|note_links|note_names|note_set_tags)\b/);
    }
  });

  it("the backfill at each start walks the files a window at a time, probing the name index per note", async () => {
    const [q] = await sqlOf((sql) => new LinkRepo(sql).unindexed("f_1", 200));
    const p = plan(q!);
    expect(p).toMatch(/SEARCH files USING (COVERING )?INDEX \S+ \(id>\?\)/);
    expect(p).toMatch(/SEARCH note_names USING (COVERING )?INDEX note_names_file \(file_id=\?\)/);
  });
});

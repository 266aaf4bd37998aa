// A search after an upgrade that re-indexes every note (migration 14 notes them all) neither stalls
// the service indexing the whole store in one go nor answers without the notes not indexed yet: it
// answers 503 with Retry-After until the background pass has brought the backlog under
// SEARCH_CATCH_UP, and then whole. SQLite only (PostgreSQL's tsvector is written with the row).
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SEARCH_CATCH_UP } from "../../src/store/sqlite/searchIndex.ts";
import { expectError, mkfile, startTestServer, type TestServer } from "../helpers/server.ts";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

describe("search while the full-text index catches up", () => {
  it("503 with Retry-After past the bound, nothing lost; whole once the background pass caught up", async (ctx) => {
    if (t.db) ctx.skip();
    const u = await t.user();
    for (let batch = 0; batch < 3; batch++) {
      const files = Array.from({ length: 1000 }, (_, i) => ({
        path: `b${batch}/n${i}.md`,
        content: `plain note ${batch} ${i}`,
      }));
      expect((await u.api.post("/api/v1/files/import", { files })).status).toBe(200);
    }
    const target = await mkfile(u, { name: "wombat.md", content: "a wombat lives here" });
    /** The search's answer once it is whole (503 while the background pass is behind). */
    const searchWhole = async () => {
      const deadline = Date.now() + 60_000;
      let res = await u.api.get("/api/v1/search?q=wombat");
      while (res.status === 503 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
        res = await u.api.get("/api/v1/search?q=wombat");
      }
      expect(res.status, res.text).toBe(200);
      return res.body.results.map((r: { file: { id: string } }) => r.file.id);
    };
    expect(await searchWhole()).toEqual([target.id]); // 3,001 notes just written, then indexed

    // As migration 14 does: every note noted for the index again (from outside the server, so no
    // commit of its own schedules the background pass yet).
    const db = new DatabaseSync(join(t.dataDir, "txtfs.db"));
    try {
      db.exec("INSERT OR IGNORE INTO file_search_pending (file_id) SELECT id FROM files");
      const pending = () =>
        Number((db.prepare("SELECT count(*) AS n FROM file_search_pending").get() as { n: number }).n);
      expect(pending()).toBeGreaterThan(SEARCH_CATCH_UP);

      const refused = await u.api.get("/api/v1/search?q=wombat");
      expectError(refused, 503, "search_index_catching_up");
      expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
      expect(pending()).toBeGreaterThan(SEARCH_CATCH_UP); // the search indexed nothing in one go
      // Everything else is served meanwhile, and a write starts the background pass.
      const put = await u.api.put(`/api/v1/files/${target.id}`, { content: "a wombat lives here, still" });
      expect(put.status).toBe(200);
      expect(await searchWhole()).toEqual([target.id]);
      expect(pending()).toBe(0); // what was left under the bound, the search indexed itself
    } finally {
      db.close();
    }
  });
});

// Search ranks a bounded number of matches (src/store/repos/search.ts, SEARCH_WITHIN): the newest
// `within` notes the caller may see that hold the words, so a common word costs what a rare one
// does. Runs on both stores (the postgres project too): the bound counts the caller's notes only
// (on SQLite its access is part of the FTS5 query, migration 14), moves re-scope a note, and below
// the bound every match is ranked as before.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadScope, visibleTo } from "../../src/server/domain/access.ts";
import type { SearchQuery } from "../../src/store/repos/search.ts";
import { mkfile, startTestServer, type TestServer, type TestUser } from "../helpers/server.ts";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

/** The store's search for a user, as GET /api/v1/search calls it, with `within` chosen here. */
async function search(user: TestUser, q: Omit<SearchQuery, "match">) {
  return t.server.store.read(async (tx) => {
    const scope = await loadScope(tx, { userId: user.id } as never);
    return tx.search.search(visibleTo(scope), { match: "all", ...q });
  });
}

describe("search ranks a bounded set of matches", () => {
  it("the newest `within` of the caller's matches, never another account's", async () => {
    const u = await t.user();
    const stranger = await t.user();
    const mine: string[] = [];
    for (let i = 0; i < 12; i++)
      mine.push(
        (await mkfile(u, { name: `q${i}.md`, content: `quokka note ${"quokka ".repeat(12 - i)}` })).id,
      );
    // Newer than all of mine, and holding the word more often: they must neither show nor use up the bound.
    for (let i = 0; i < 6; i++) await mkfile(stranger, { name: `s${i}.md`, content: "quokka ".repeat(30) });

    const all = await search(u, { terms: ["quokka"], limit: 20 });
    expect(all.map((h) => h.id).sort()).toEqual([...mine].sort());
    // The older a note here, the more often it holds the word: the best-ranked are the oldest.
    expect(all.slice(0, 5).map((h) => h.id)).toEqual(mine.slice(0, 5));
    expect(all.every((h) => h.snippet.includes("[quokka]"))).toBe(true);

    const newest5 = all.map((h) => h.id).filter((id) => mine.slice(7).includes(id)); // in rank order
    expect(newest5).toHaveLength(5);
    expect((await search(u, { terms: ["quokka"], limit: 5, within: 5 })).map((h) => h.id)).toEqual(newest5);
    expect((await search(u, { terms: ["quokka"], limit: 3, within: 5 })).map((h) => h.id)).toEqual(
      newest5.slice(0, 3),
    );
    // The page never asks for fewer candidates than it shows.
    expect(await search(u, { terms: ["quokka"], limit: 3, within: 1 })).toHaveLength(3);
    // Exclusions are left out before the bound is counted.
    const excluded = await search(u, { terms: ["quokka"], limit: 5, within: 5, excludeIds: [mine[11]!] });
    expect(excluded.map((h) => h.id)).toEqual(mine.slice(6, 11));
  });

  it("shared folders and files count as the caller's; a note moved out of a shared folder goes", async () => {
    const owner = await t.user();
    const reader = await t.user();
    const dir = (await owner.api.post("/api/v1/folders", { name: "team" })).body.folder;
    const other = (await owner.api.post("/api/v1/folders", { name: "private" })).body.folder;
    const inShared = await mkfile(owner, { name: "a.md", content: "wombat plan", folderId: dir.id });
    const file = await mkfile(owner, { name: "b.md", content: "wombat file" });
    const outside = await mkfile(owner, { name: "c.md", content: "wombat secret", folderId: other.id });
    expect(
      (await owner.api.post(`/api/v1/folders/${dir.id}/share`, { email: reader.email, role: "reader" }))
        .status,
    ).toBeLessThan(300);
    expect(
      (await owner.api.post("/api/v1/shares", { fileId: file.id, email: reader.email, role: "reader" }))
        .status,
    ).toBeLessThan(300);
    const seen = async () => (await search(reader, { terms: ["wombat"], limit: 20 })).map((h) => h.id).sort();
    expect(await seen()).toEqual([inShared.id, file.id].sort());
    expect(await seen()).not.toContain(outside.id);

    // Moved into the shared folder: found; moved out: gone (the index follows the move).
    expect((await owner.api.put(`/api/v1/files/${outside.id}`, { folderId: dir.id })).status).toBe(200);
    expect(await seen()).toEqual([inShared.id, file.id, outside.id].sort());
    expect((await owner.api.put(`/api/v1/files/${inShared.id}`, { folderId: other.id })).status).toBe(200);
    expect(await seen()).toEqual([file.id, outside.id].sort());
    // Through the API as well.
    const res = await reader.api.get("/api/v1/search?q=wombat");
    expect(res.status, res.text).toBe(200);
    expect(res.body.results.map((r: { file: { id: string } }) => r.file.id).sort()).toEqual(
      [file.id, outside.id].sort(),
    );
  });
});

// The link graph through the API equals the one an independent resolver (test/helpers/vaultGraph.ts,
// a scan of every note instead of the service's name index) computes from the files: on a vault
// generated with a real vault's shapes, through renames, folder moves and deletes; and on
// Obsidian's own help vault when a copy is on this machine; backlinks are the same graph read the
// other way. Both stores.
import { posix } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Res, startTestServer, type TestServer, type TestUser } from "../helpers/server.ts";
import { expectedGraph } from "../helpers/vaultGraph.ts";
import { generatedVault, obsidianHelpVault, type Vault } from "../helpers/vaults.ts";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

/** A vault on the service: which id each path has, and which id each folder has. */
interface Loaded {
  user: TestUser;
  vault: Vault;
  ids: Map<string, string>;
  folders: Map<string, string>;
}

async function load(vault: Vault): Promise<Loaded> {
  const user = await t.user();
  // Last path first, so most links are written before the note they name exists.
  const files = [...vault].reverse().map(([path, content]) => ({ path, content }));
  const ids = new Map<string, string>();
  const folders = new Map<string, string>();
  for (let i = 0; i < files.length; i += 500) {
    const res = await user.api.post("/api/v1/files/import", { files: files.slice(i, i + 500) });
    expect(res.status, res.text).toBe(200);
    for (const f of res.body.files) ids.set(f.path, f.id);
    for (const f of res.body.folders) folders.set(f.path, f.id);
  }
  return { user, vault, ids, folders };
}

/** The same, through GET /api/me/files/:id/links. */
async function servedGraph(v: Loaded): Promise<Map<string, [string, string | null][]>> {
  const pathOf = new Map([...v.ids].map(([p, id]) => [id, p]));
  const graph = new Map<string, [string, string | null][]>();
  for (const [path, id] of v.ids) {
    const res = await v.user.api.get(`/api/me/files/${id}/links`);
    expect(res.status, res.text).toBe(200);
    graph.set(
      path,
      res.body.links.map((l: { text: string; targetFileId: string | null; resolved: boolean }) => {
        expect(l.resolved).toBe(l.targetFileId !== null);
        return [l.text, l.targetFileId ? (pathOf.get(l.targetFileId) ?? `unknown ${l.targetFileId}`) : null];
      }),
    );
  }
  return graph;
}

async function expectSameGraph(v: Loaded) {
  const served = await servedGraph(v);
  const expected = expectedGraph(v.vault);
  for (const [path, links] of expected) expect(served.get(path), path).toEqual(links);
  expect([...served.keys()].sort()).toEqual([...expected.keys()].sort());
  await expectSameBacklinks(v, expected);
  return expected;
}

/** GET /api/me/files/:id/backlinks of every note: the expected graph read the other way. */
async function expectSameBacklinks(v: Loaded, expected: Map<string, [string, string | null][]>) {
  const pathOf = new Map([...v.ids].map(([p, id]) => [id, p]));
  const inverted = new Map<string, string[]>([...v.ids.keys()].map((p) => [p, []]));
  for (const [source, links] of expected)
    for (const [text, target] of links) if (target) inverted.get(target)?.push(`${source} ${text}`);
  for (const [path, id] of v.ids) {
    const res = await v.user.api.get(`/api/me/files/${id}/backlinks`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.hasMore).toBe(false);
    const served = res.body.backlinks.map(
      (l: { fileId: string; text: string }) => `${pathOf.get(l.fileId)} ${l.text}`,
    );
    expect(served.sort(), `backlinks of ${path}`).toEqual(inverted.get(path)!.sort());
  }
}

/** Moves every path under `from/` (or `from` itself) to `to`, in the vault and the id maps. */
function repath(v: Loaded, from: string, to: string) {
  const move = <T>(m: Map<string, T>) => {
    for (const [p, x] of [...m]) {
      if (p === from || p.startsWith(`${from}/`)) {
        m.delete(p);
        m.set(to + p.slice(from.length), x);
      }
    }
  };
  move(v.vault);
  move(v.ids);
  move(v.folders);
}

describe("the link graph of a generated vault", () => {
  it("equals the independent resolver's, and stays equal through renames, moves and deletes", async () => {
    const v = await load(generatedVault());
    const graph = await expectSameGraph(v);
    // The shapes are there: duplicate names resolved by nearness, aliases, embeds left unresolved.
    expect(graph.get("Projects/Note.md")!.map(([, p]) => p)).toEqual([
      "Projects/Note.md",
      "Note.md",
      "Projects/Plan.md",
    ]);
    expect(graph.get("Home.md")).toContainEqual(["![[diagram.png]]", null]);
    expect(graph.get("Projects/Archive/Note.md")).toContainEqual(["[[Start]]", "Home.md"]);
    expect(graph.get("Journal/notes.txt")).toEqual([]);
    const api = v.user.api;

    // A rename never rewrites other notes; links to the old name go to another Note or nowhere.
    const before = (await api.get(`/api/v1/files/${v.ids.get("Note.md")}/raw`)).text;
    expect(
      (await api.put(`/api/v1/files/${v.ids.get("Projects/Note.md")}`, { name: "Renamed.md" })).status,
    ).toBe(200);
    repath(v, "Projects/Note.md", "Projects/Renamed.md");
    expect((await api.get(`/api/v1/files/${v.ids.get("Note.md")}/raw`)).text).toBe(before);
    await expectSameGraph(v);

    // A folder renamed, a folder moved under another.
    expect(
      (await api.put(`/api/v1/folders/${v.folders.get("Projects/Archive")}`, { name: "Old" })).status,
    ).toBe(200);
    repath(v, "Projects/Archive", "Projects/Old");
    await expectSameGraph(v);
    const moved = await api.put(`/api/v1/folders/${v.folders.get("Ünïcödé")}`, {
      parentFolderId: v.folders.get("Journal"),
    });
    expect(moved.status, moved.text).toBe(200);
    repath(v, "Ünïcödé", "Journal/Ünïcödé");
    await expectSameGraph(v);

    // A note deleted; a folder deleted (its notes move up one level).
    expect((await api.delete(`/api/v1/files/${v.ids.get("Note.md")}`)).status).toBe(200);
    v.vault.delete("Note.md");
    v.ids.delete("Note.md");
    await expectSameGraph(v);
    expect((await api.delete(`/api/v1/folders/${v.folders.get("Food & drink")}`)).status).toBe(200);
    repath(v, "Food & drink", "");
    for (const m of [v.vault, v.ids] as Map<string, unknown>[])
      for (const [p, x] of [...m])
        if (p.startsWith("/")) {
          m.delete(p);
          m.set(p.slice(1), x);
        }
    await expectSameGraph(v);

    // An alias dropped from the front-matter, and a missing note written at last.
    const home = v.vault.get("Home.md")!.replace("  - Start\n", "");
    expect((await api.put(`/api/v1/files/${v.ids.get("Home.md")}`, { content: home })).status).toBe(200);
    v.vault.set("Home.md", home);
    const created = await api.post("/api/v1/files", { name: "Missing note.md", content: "[[Home]]" });
    expect(created.status, created.text).toBe(201);
    v.vault.set("Missing note.md", "[[Home]]");
    v.ids.set("Missing note.md", created.body.file.id);
    const last = await expectSameGraph(v);
    expect(last.get("Home.md")).toContainEqual(["[[Missing note]]", "Missing note.md"]);
    expect(last.get("Projects/Old/Note.md")).toContainEqual(["[[Start]]", null]);

    // Every unresolved link, paged, is the expected graph's unresolved ones.
    const unresolved: string[] = [];
    let cursor: string | null = null;
    do {
      const res: Res<{ links: { fileId: string; text: string }[]; nextCursor: string | null }> =
        await api.get(`/api/me/links/unresolved?limit=3${cursor ? `&cursor=${cursor}` : ""}`);
      expect(res.status, res.text).toBe(200);
      const pathOf = new Map([...v.ids].map(([p, id]) => [id, p]));
      for (const l of res.body.links) unresolved.push(`${pathOf.get(l.fileId)} ${l.text}`);
      cursor = res.body.nextCursor;
    } while (cursor);
    expect(unresolved.sort()).toEqual(
      [...last]
        .flatMap(([p, links]) => links.filter(([, to]) => to === null).map(([text]) => `${p} ${text}`))
        .sort(),
    );
  });

  it("backlinks of a note the caller cannot see are a 404, and list only notes the caller sees", async () => {
    const owner = await t.user();
    const other = await t.user();
    const target = await owner.api.post("/api/v1/files", { name: "Target.md", content: "me" });
    expect(target.status).toBe(201);
    expect((await other.api.get(`/api/me/files/${target.body.file.id}/backlinks`)).status).toBe(404);
    // Another account's note naming the same name links to its own notes, never to this one.
    await other.api.post("/api/v1/files", { name: "Linker.md", content: "[[Target]]" });
    const res = await owner.api.get(`/api/me/files/${target.body.file.id}/backlinks`);
    expect(res.body).toEqual({ fileId: target.body.file.id, backlinks: [], hasMore: false });
  });

  it("a bad cursor is a clear 400", async () => {
    const u = await t.user();
    const res = await u.api.get("/api/me/links/unresolved?cursor=nope");
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain("cursor");
  });
});

const help = obsidianHelpVault();
if ("missing" in help)
  process.stderr.write(`[skip] the Obsidian help vault test is skipped: ${help.missing}\n`);

describe.skipIf("missing" in help)("the link graph of Obsidian's help vault", () => {
  it("equals the independent resolver's", async () => {
    const vault = (help as { vault: Vault }).vault;
    const v = await load(vault);
    const graph = await expectSameGraph(v);
    const all = [...graph.values()].flat();
    const resolved = all.filter(([, to]) => to !== null).length;
    process.stderr.write(
      `[vault] ${vault.size} notes, ${all.length} links (${all.filter(([text]) => text.startsWith("!")).length} embeds), ${resolved} resolved to notes\n`,
    );
    expect(resolved).toBeGreaterThan(500);
    expect(posix.basename([...vault.keys()][0]!)).toMatch(/\.md$/);
  }, 300_000);
});

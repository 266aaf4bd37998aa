// Links and embeds in a note's text are connections (link on the linking note, backlink on the
// target), resolved by Obsidian's rules and re-resolved when notes appear, are renamed, move or go;
// the same expectations on both stores.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { indexOldNotes } from "../../src/server/domain/links/indexOldNotes.ts";
import { indexNote, relinkNames } from "../../src/server/domain/links/linkIndex.ts";
import { type AttachmentLookup, NO_ATTACHMENTS } from "../../src/server/domain/links/targets.ts";
import {
  expectError,
  mkdir,
  mkfile,
  startTestServer,
  type TestServer,
  type TestUser,
} from "../helpers/server.ts";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

type Reason = { type: string; text?: string; embed?: boolean };

async function connections(u: TestUser, id: string) {
  const res = await u.api.get(`/api/me/files/${id}/connections`);
  expect(res.status, res.text).toBe(200);
  return res.body as {
    connections: { file: { id: string; name: string }; score: number; reasons: Reason[] }[];
    unresolved: { text: string; path: string; embed: boolean }[];
  };
}

async function links(u: TestUser, id: string) {
  const res = await u.api.get(`/api/me/files/${id}/links`);
  expect(res.status, res.text).toBe(200);
  return (res.body.links as { text: string; targetFileId: string | null }[]).map((l) => [
    l.text,
    l.targetFileId,
  ]);
}

async function raw(u: TestUser, id: string) {
  return (await u.api.get(`/api/v1/files/${id}/raw`)).text;
}

describe("links as connections", () => {
  it("a wikilink is a link on the linking note and a backlink on the target, ranked above folder and text", async () => {
    const u = await t.user();
    const dir = await mkdir(u, { name: "garden" });
    const target = await mkfile(u, { name: "Roses.md", content: "Roses need sun, pruning and water." });
    const sibling = await mkfile(u, {
      name: "Tulips.md",
      folderId: dir.id,
      content: "Tulips need sun, pruning and water.",
    });
    const a = await mkfile(u, {
      name: "Plan.md",
      folderId: dir.id,
      content: "Sun, pruning and water for [[roses#Pruning|the roses]] and ![[Roses]].\n`[[Not a link]]`",
    });
    const mine = await connections(u, a.id);
    expect(mine.connections[0]!.file.id).toBe(target.id);
    expect(mine.connections[0]!.reasons.filter((r) => r.type === "link")).toEqual([
      { type: "link", text: "[[roses#Pruning|the roses]]", embed: false },
      { type: "link", text: "![[Roses]]", embed: true },
    ]);
    expect(mine.connections.map((c) => c.file.id)).toContain(sibling.id); // folder and text, below
    expect(mine.unresolved).toEqual([]);
    const theirs = await connections(u, target.id);
    expect(theirs.connections[0]!.file.id).toBe(a.id);
    expect(theirs.connections[0]!.reasons[0]).toEqual({
      type: "backlink",
      text: "[[roses#Pruning|the roses]]",
      embed: false,
    });
  });

  it("a rename never rewrites other notes: links to the old name become unresolved, and resolve again", async () => {
    const u = await t.user();
    const target = await mkfile(u, { name: "Alpha.md", content: "alpha" });
    const text = "See [[Alpha]] and [Alpha](Alpha.md).";
    const a = await mkfile(u, { name: "linker.md", content: text });
    expect(await links(u, a.id)).toEqual([
      ["[[Alpha]]", target.id],
      ["[Alpha](Alpha.md)", target.id],
    ]);
    expect((await u.api.put(`/api/v1/files/${target.id}`, { name: "Beta.md" })).status).toBe(200);
    expect(await raw(u, a.id)).toBe(text);
    expect(await links(u, a.id)).toEqual([
      ["[[Alpha]]", null],
      ["[Alpha](Alpha.md)", null],
    ]);
    expect((await connections(u, a.id)).unresolved.map((l) => l.path)).toEqual(["Alpha", "Alpha.md"]);
    const listed = (await u.api.get("/api/me/links/unresolved")).body;
    expect(listed.links.map((l: { fileId: string; text: string }) => [l.fileId, l.text])).toEqual([
      [a.id, "[[Alpha]]"],
      [a.id, "[Alpha](Alpha.md)"],
    ]);
    // A new note with the old name takes the links; deleting it leaves them unresolved again.
    const again = await mkfile(u, { name: "alpha.md", content: "new" });
    expect(await links(u, a.id)).toEqual([
      ["[[Alpha]]", again.id],
      ["[Alpha](Alpha.md)", again.id],
    ]);
    expect((await u.api.delete(`/api/v1/files/${again.id}`)).status).toBe(200);
    expect(await links(u, a.id)).toEqual([
      ["[[Alpha]]", null],
      ["[Alpha](Alpha.md)", null],
    ]);
    expect((await u.api.put(`/api/v1/files/${target.id}`, { name: "Alpha.md" })).status).toBe(200);
    expect(await links(u, a.id)).toEqual([
      ["[[Alpha]]", target.id],
      ["[Alpha](Alpha.md)", target.id],
    ]);
  });
});

describe("saves that add and drop link, alias and tag syntax", () => {
  // A save whose old and new text hold none skips the index: these prove the index stays exact.
  const put = async (u: TestUser, id: string, body: object) => {
    const res = await u.api.put(`/api/v1/files/${id}`, body);
    expect(res.status, res.text).toBe(200);
    return res.body.file as { tags: string[] };
  };

  it("a note's links follow its text through edits with and without links", async () => {
    const u = await t.user();
    const target = await mkfile(u, { name: "Roses.md", content: "roses" });
    const a = await mkfile(u, { name: "Plan.md", content: "plain" });
    expect(await links(u, a.id)).toEqual([]);
    await put(u, a.id, { content: "plain, edited" });
    expect(await links(u, a.id)).toEqual([]);
    await put(u, a.id, { content: "see [[Roses]]" });
    expect(await links(u, a.id)).toEqual([["[[Roses]]", target.id]]);
    await put(u, a.id, { content: "plain again" });
    expect(await links(u, a.id)).toEqual([]);
    await put(u, a.id, { content: "plain, edited again" });
    expect(await links(u, a.id)).toEqual([]);
    expect((await connections(u, target.id)).connections.map((c) => c.file.id)).not.toContain(a.id);
  });

  it("an alias added and dropped by edits wins and loses the links that name it", async () => {
    const u = await t.user();
    const b = await mkfile(u, { name: "Other.md", content: "plain" });
    const c = await mkfile(u, { name: "linker.md", content: "see [[Nick]]" });
    expect(await links(u, c.id)).toEqual([["[[Nick]]", null]]);
    await put(u, b.id, { content: "plain, edited" });
    expect(await links(u, c.id)).toEqual([["[[Nick]]", null]]);
    await put(u, b.id, { content: "---\naliases: [Nick]\n---\nnamed" });
    expect(await links(u, c.id)).toEqual([["[[Nick]]", b.id]]);
    await put(u, b.id, { content: "---\naliases: [Nick]\n---\nnamed, edited" });
    expect(await links(u, c.id)).toEqual([["[[Nick]]", b.id]]);
    await put(u, b.id, { content: "no front matter" });
    expect(await links(u, c.id)).toEqual([["[[Nick]]", null]]);
    await put(u, b.id, { content: "no front matter, edited" });
    expect(await links(u, c.id)).toEqual([["[[Nick]]", null]]);
  });

  it("declared tags come and go with the text; the set ones stay", async () => {
    const u = await t.user();
    const d = await mkfile(u, { name: "d.md", content: "#alpha text", tags: ["set"] });
    expect(d.tags).toEqual(["set", "alpha"]);
    expect((await put(u, d.id, { content: "no tags" })).tags).toEqual(["set"]);
    expect((await put(u, d.id, { content: "still none" })).tags).toEqual(["set"]);
    expect((await put(u, d.id, { tags: ["other"] })).tags).toEqual(["other"]);
    expect((await put(u, d.id, { content: "#beta now" })).tags).toEqual(["other", "beta"]);
    expect((await put(u, d.id, { content: "none again" })).tags).toEqual(["other"]);
    expect((await u.api.get(`/api/v1/files/${d.id}`)).body.tags).toEqual(["other"]);
  });
});

describe("notes saved before links were read", () => {
  it("are indexed when the server starts, so links to them resolve", async () => {
    const u = await t.user();
    const old = await mkfile(u, { name: "Old note.md", content: "[[Older]]" });
    const older = await mkfile(u, { name: "Older.md", content: "x" });
    // As a store written before the link tables: the notes have no names and no links.
    await t.server.store.transaction(async (tx) => {
      await tx.links.deleteNote(old.id);
      await tx.links.deleteNote(older.id);
    });
    const fresh = await mkfile(u, { name: "fresh.md", content: "[[Old note]]" });
    expect(await links(u, fresh.id)).toEqual([["[[Old note]]", null]]);
    expect(await indexOldNotes(t.server.store)).toBeGreaterThanOrEqual(2);
    expect(await links(u, fresh.id)).toEqual([["[[Old note]]", old.id]]);
    expect(await links(u, old.id)).toEqual([["[[Older]]", older.id]]);
    expect(await indexOldNotes(t.server.store)).toBe(0);
  });
});

describe("every write path reads links", () => {
  it("batch, sync, upload, append and a version restore keep the graph current", async () => {
    const u = await t.user();
    const target = await mkfile(u, { name: "Target.md", content: "t" });
    const batch = await u.api.post("/api/v1/batch", {
      operations: [{ id: "n", op: "file.create", body: { name: "from-batch.md", content: "[[Target]]" } }],
    });
    expect(batch.status, batch.text).toBe(200);
    expect(await links(u, batch.body.results[0].itemId)).toEqual([["[[Target]]", target.id]]);

    const sync = await u.api.post("/api/v1/sync", {
      cursor: "latest",
      push: [{ id: "p", op: "file.create", body: { name: "from-sync.md", content: "![[target]]" } }],
    });
    expect(sync.status, sync.text).toBe(200);
    expect(await links(u, sync.body.pushResults[0].itemId)).toEqual([["![[target]]", target.id]]);

    const up = await u.api.request("POST", "/api/v1/files/upload?name=up.md", {
      body: "[t](Target.md)",
      headers: { "content-type": "text/markdown" },
    });
    expect(up.status, up.text).toBe(201);
    const id = up.body.file.id;
    expect(await links(u, id)).toEqual([["[t](Target.md)", target.id]]);
    // Version 1 had the link; version 2 has none; restoring 1 brings it back.
    expect((await u.api.put(`/api/v1/files/${id}`, { content: "none" })).status).toBe(200);
    expect(await links(u, id)).toEqual([]);
    const restored = await u.api.post(`/api/v1/files/${id}/versions/1/restore`, {});
    expect(restored.status, restored.text).toBe(200);
    expect(await links(u, id)).toEqual([["[t](Target.md)", target.id]]);
  });
});

describe("links to files that are not notes", () => {
  it("stay unresolved without an attachment store, and resolve through an attachment lookup", async () => {
    const u = await t.user();
    const note = await mkfile(u, { name: "pics.md", content: "![[pic.png]] [[pic]]" });
    expect((await connections(u, note.id)).unresolved.map((l) => l.text)).toEqual([
      "![[pic.png]]",
      "[[pic]]",
    ]);
    // An attachment store would provide this lookup; the resolver treats its files by the same rules.
    const lookup: AttachmentLookup = {
      named: async (_tx, _owner, key) =>
        key === "pic.png" ? [{ id: "a_pic", name: "pic.png", folderId: null }] : [],
    };
    await t.server.store.transaction(async (tx) => {
      await tx.links.deleteNote(note.id); // indexed afresh, as a new note is
      await indexNote(tx, (await tx.files.byId(note.id))!, undefined, lookup);
    });
    const listed = (await u.api.get(`/api/me/files/${note.id}/links`)).body.links;
    expect(
      listed.map((l: { resolved: boolean; targetFileId: null }) => [l.resolved, l.targetFileId]),
    ).toEqual([
      [true, null],
      [false, null],
    ]);
    expect((await connections(u, note.id)).unresolved.map((l) => l.text)).toEqual(["[[pic]]"]);
    // The attachment goes: its name's links are looked up again and find nothing.
    await t.server.store.transaction((tx) => relinkNames(tx, u.id, ["pic.png"], NO_ATTACHMENTS));
    expect((await connections(u, note.id)).unresolved.map((l) => l.text)).toEqual([
      "![[pic.png]]",
      "[[pic]]",
    ]);
  });
});

describe("who sees which links", () => {
  it("a note's links are its readers'; a target they cannot see is resolved but not named", async () => {
    const owner = await t.user();
    const reader = await t.user();
    const stranger = await t.user();
    const hidden = await mkfile(owner, { name: "Hidden.md", content: "h" });
    const note = await mkfile(owner, { name: "Shared.md", content: "[[Hidden]] [[Nowhere]]" });
    const share = await owner.api.post("/api/v1/shares", {
      fileId: note.id,
      email: reader.email,
      role: "reader",
    });
    expect(share.status, share.text).toBe(201);
    expect(await links(owner, note.id)).toEqual([
      ["[[Hidden]]", hidden.id],
      ["[[Nowhere]]", null],
    ]);
    const seen = (await reader.api.get(`/api/me/files/${note.id}/links`)).body.links;
    expect(
      seen.map((l: { resolved: boolean; targetFileId: string | null }) => [l.resolved, l.targetFileId]),
    ).toEqual([
      [true, null],
      [false, null],
    ]);
    expect((await connections(reader, note.id)).connections).toEqual([]); // Hidden is not theirs to see
    expectError(await stranger.api.get(`/api/me/files/${note.id}/links`), 404, "not_found");
    // Unresolved links listed are the caller's own notes' only.
    expect((await reader.api.get("/api/me/links/unresolved")).body.links).toEqual([]);
  });
});

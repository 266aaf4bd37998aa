// Related notes (GET /api/v1/files/:id/connections): one rule on both stores (this file runs in the
// sqlite and the postgres project with the same exact expectations), candidates through indexes.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkfile, startTestServer, type TestServer, type TestUser } from "../helpers/server.ts";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

type Related = { file: { id: string; name: string }; score: number; reasons: { type: string }[] };

async function related(user: TestUser, id: string): Promise<Related[]> {
  const res = await user.api.get(`/api/v1/files/${id}/connections`);
  expect(res.status, res.text).toBe(200);
  return res.body.connections;
}

/** name -> reasons (with their details), the whole answer in rank order. */
async function answer(user: TestUser, id: string) {
  return (await related(user, id)).map((c) => [c.file.name, c.reasons] as const);
}

describe("related notes", () => {
  it("a shared word of a name or a single letter is not similar text; a removed link leaves no trace", async () => {
    const u = await t.user();
    const dir = (await u.api.post("/api/v1/folders", { name: "elsewhere" })).body.folder;
    const a = await mkfile(u, { name: "conn-a.md", content: "a" });
    const b = await mkfile(u, { name: "conn-b.md", content: "b" });
    await mkfile(u, { name: "conn-unrelated.md", content: "u", tags: ["omega"], folderId: dir.id });
    expect(await answer(u, a.id)).toEqual([]);
    await u.api.post(`/api/v1/files/${a.id}/connections`, { targetFileId: b.id, reason: "r" });
    expect((await answer(u, a.id)).map(([name]) => name)).toEqual(["conn-b.md"]);
    expect((await u.api.delete(`/api/v1/files/${a.id}/connections?targetFileId=${b.id}`)).status).toBe(200);
    expect(await answer(u, a.id)).toEqual([]);
    expect(await answer(u, b.id)).toEqual([]);
  });

  it("similar text is two or more telling words in common, scored by the share of them, named rarest first", async () => {
    const u = await t.user();
    const a = await mkfile(u, {
      name: "sourdough.md",
      content: "Sourdough starter feeding schedule, flour and water, levain.",
    });
    await mkfile(u, { name: "bread.md", content: "Baking sourdough bread: levain, flour, hydration." });
    await mkfile(u, { name: "pancakes.md", content: "Pancakes need flour, eggs and milk." }); // one word
    await mkfile(u, { name: "cars.md", content: "Oil change intervals." });
    const got = await answer(u, a.id);
    expect(got).toEqual([
      [
        "bread.md",
        [{ type: "similar_text", score: expect.any(Number), words: ["sourdough", "levain", "flour"] }],
      ],
    ]);
    // flour is in three notes, levain in two: the rarer word tells more and comes first
  });

  it("the same ranking on both stores: explicit, then tags, folder and text, ties by id", async () => {
    const u = await t.user();
    const dir = (await u.api.post("/api/v1/folders", { name: "garden" })).body.folder;
    const hub = await mkfile(u, {
      name: "tomatoes.md",
      content: "Tomatoes want sun, compost and deep watering.",
      tags: ["garden", "summer", "veg"],
      folderId: dir.id,
    });
    const linked = await mkfile(u, { name: "shopping.md", content: "milk" });
    await u.api.post(`/api/v1/files/${linked.id}/connections`, { targetFileId: hub.id, reason: "buy seeds" });
    await mkfile(u, { name: "beans.md", content: "Beans climb.", tags: ["summer", "veg"] });
    await mkfile(u, { name: "peppers.md", content: "Peppers.", tags: ["veg"], folderId: dir.id });
    await mkfile(u, { name: "shed.md", content: "The shed key.", folderId: dir.id });
    await mkfile(u, { name: "compost.md", content: "Compost heap: deep layers, watering weekly." });
    await mkfile(u, { name: "taxes.md", content: "Forms due in April.", tags: ["paper"] });
    const got = await related(u, hub.id);
    expect(got.map((c) => c.file.name)).toEqual([
      "shopping.md",
      "beans.md",
      "peppers.md",
      "compost.md",
      "shed.md",
    ]);
    expect(got.map((c) => c.reasons.map((r) => r.type))).toEqual([
      ["explicit"],
      ["shared_tags"],
      ["shared_tags", "same_folder"],
      ["similar_text"],
      ["same_folder"],
    ]);
    expect(got[3]!.reasons[0]).toMatchObject({ words: ["compost", "deep", "watering"] });
  });

  it("a rare shared word counts for more than common ones", async () => {
    const u = await t.user();
    const filler = Array.from({ length: 40 }, (_, i) => ({
      op: "file.create",
      body: { name: `daily-${i}.md`, content: `meeting standup notes ${i}` },
    }));
    expect((await u.api.post("/api/v1/batch", { operations: filler })).status).toBeLessThan(300);
    const a = await mkfile(u, { name: "retro.md", content: "meeting standup notes: velocity, burndown" });
    const b = await mkfile(u, { name: "sprint.md", content: "velocity and burndown charts" });
    const got = await related(u, a.id);
    expect(got[0]!.file.id).toBe(b.id);
    expect(got[0]!.reasons).toEqual([
      { type: "similar_text", score: expect.any(Number), words: ["burndown", "velocity"] },
    ]);
  });

  it("follows tag changes and deletes at once (the tag index is kept by every write)", async () => {
    const u = await t.user();
    const a = await mkfile(u, { name: "a.md", content: "x", tags: ["k1"] });
    const b = await mkfile(u, { name: "b.md", content: "y", tags: ["k2"] });
    expect(await answer(u, a.id)).toEqual([]);
    expect((await u.api.put(`/api/v1/files/${b.id}`, { tags: ["k2", "k1"] })).status).toBe(200);
    expect(await answer(u, a.id)).toEqual([["b.md", [{ type: "shared_tags", tags: ["k1"] }]]]);
    expect((await u.api.put(`/api/v1/files/${b.id}`, { tags: [] })).status).toBe(200);
    expect(await answer(u, a.id)).toEqual([]);
    expect((await u.api.put(`/api/v1/files/${b.id}`, { tags: ["k1"] })).status).toBe(200);
    expect((await answer(u, a.id)).map(([n]) => n)).toEqual(["b.md"]);
    expect((await u.api.delete(`/api/v1/files/${b.id}`)).status).toBe(200);
    expect(await answer(u, a.id)).toEqual([]);
  });

  it("notes shared with the caller are related by tag; another account's notes never are", async () => {
    const owner = await t.user();
    const reader = await t.user();
    const stranger = await t.user();
    const dir = (await owner.api.post("/api/v1/folders", { name: "team" })).body.folder;
    const theirs = await mkfile(owner, { name: "plan.md", content: "p", tags: ["launch"], folderId: dir.id });
    expect(
      (await owner.api.post(`/api/v1/folders/${dir.id}/share`, { email: reader.email, role: "reader" }))
        .status,
    ).toBeLessThan(300);
    await mkfile(stranger, { name: "secret.md", content: "s", tags: ["launch"] });
    const mine = await mkfile(reader, { name: "mine.md", content: "m", tags: ["launch"] });
    const got = await related(reader, mine.id);
    expect(got.map((c) => [c.file.id, c.reasons])).toEqual([
      [theirs.id, [{ type: "shared_tags", tags: ["launch"] }]],
    ]);
    expect((await related(owner, theirs.id)).map((c) => c.file.id)).toEqual([]); // the reader's note is not the owner's to see
  });

  it("a common tag brings a bounded number of notes; the rarer shared tag still finds its note", async () => {
    const u = await t.user();
    const items = Array.from({ length: 60 }, (_, i) => ({
      op: "file.create",
      body: { name: `common-${String(i).padStart(2, "0")}.md`, content: `n${i}`, tags: ["inbox"] },
    }));
    const res = await u.api.post("/api/v1/batch", { operations: items });
    expect(res.status, res.text).toBeLessThan(300);
    const rare = await mkfile(u, { name: "rare.md", content: "r", tags: ["inbox", "zebra"] });
    const hub = await mkfile(u, { name: "hub.md", content: "h", tags: ["inbox", "zebra"] });
    const got = await related(u, hub.id);
    expect(got[0]!.file.id).toBe(rare.id);
    expect(got[0]!.reasons).toEqual([{ type: "shared_tags", tags: ["inbox", "zebra"] }]);
    expect(got.length).toBeLessThanOrEqual(1 + 25);
  });
});

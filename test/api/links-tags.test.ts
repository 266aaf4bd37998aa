// Front-matter `tags:` and inline #tags are a Markdown note's tags as Obsidian sees them: in the
// record (single, listed and in GET /api/me), in related notes; the note's bytes are never
// rewritten, and a request that would drop a tag its text declares is refused with nothing changed.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, mkfile, startTestServer, type TestServer, type TestUser } from "../helpers/server.ts";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

const FM =
  "---\ntags: [vault, t1]\naliases:\n  - Other name\n---\n# Title\nBody with #inline/sub and `#code`.\n";

async function record(u: TestUser, id: string) {
  const res = await u.api.get(`/api/v1/files/${id}`);
  expect(res.status, res.text).toBe(200);
  return res.body as { tags: string[]; content: string; etag: string; updatedAt: string };
}

async function listedTags(u: TestUser, id: string) {
  const files = (await u.api.get("/api/me/files")).body.files as { id: string; tags: string[] }[];
  return files.find((f) => f.id === id)?.tags;
}

describe("tags a note's text declares", () => {
  it("show in the record, the listing and related notes; the bytes stay as written", async () => {
    const u = await t.user();
    const f = await mkfile(u, { name: "fm.md", content: FM, tags: ["api"] });
    expect(f.tags).toEqual(["api", "vault", "t1", "inline/sub"]);
    expect((await record(u, f.id)).content).toBe(FM);
    expect((await u.api.get(`/api/v1/files/${f.id}/raw`)).text).toBe(FM);
    expect(await listedTags(u, f.id)).toEqual(["api", "vault", "t1", "inline/sub"]);
    const other = await mkfile(u, { name: "other.md", content: "#t1 elsewhere" });
    const related = (await u.api.get(`/api/v1/files/${f.id}/connections`)).body.connections;
    expect(related.map((c: { file: { id: string }; reasons: unknown[] }) => [c.file.id, c.reasons])).toEqual([
      [other.id, [{ type: "shared_tags", tags: ["t1"] }]],
    ]);
    // A .txt note is plain text: nothing in it is a tag.
    expect((await mkfile(u, { name: "plain.txt", content: FM })).tags).toEqual([]);
  });

  it("follow the text: a tag removed from the front-matter leaves the record; set tags stay", async () => {
    const u = await t.user();
    const f = await mkfile(u, { name: "fm.md", content: FM });
    const put = await u.api.put(`/api/v1/files/${f.id}`, { tags: ["vault", "t1", "inline/sub", "added"] });
    expect(put.status, put.text).toBe(200);
    expect(put.body.file.tags).toEqual(["added", "vault", "t1", "inline/sub"]);
    const edited = FM.replace("[vault, t1]", "[vault]").replace("#inline/sub", "");
    const res = await u.api.put(`/api/v1/files/${f.id}`, { content: edited });
    expect(res.body.file.tags).toEqual(["added", "vault"]);
    expect((await record(u, f.id)).content).toBe(edited);
  });

  it("a tags-only request that drops a declared tag is refused (409) and nothing changes; a save never is", async () => {
    const u = await t.user();
    const f = await mkfile(u, { name: "fm.md", content: FM, tags: ["api"] });
    const before = await record(u, f.id);
    const e = expectError(
      await u.api.put(`/api/v1/files/${f.id}`, { tags: ["api"] }),
      409,
      "tag_declared_by_note",
    );
    expect(e.message).toContain("'vault', 't1', 'inline/sub'");
    expect(e.details).toEqual({ declared: ["vault", "t1", "inline/sub"] });
    expect(await record(u, f.id)).toEqual(before);
    // A save of content is never refused for its tags: the tags its text declares simply stay.
    const saved = await u.api.put(`/api/v1/files/${f.id}`, { tags: [], content: `${FM}changed too` });
    expect(saved.status, saved.text).toBe(200);
    expect(saved.body.file.tags).toEqual(["vault", "t1", "inline/sub"]);
    expect(await record(u, f.id)).toMatchObject({ content: `${FM}changed too` });
    // The same content sent again with tags is still a save: not refused either.
    const again = await u.api.put(`/api/v1/files/${f.id}`, { tags: ["api"], content: `${FM}changed too` });
    expect(again.status, again.text).toBe(200);
    expect(again.body.file.tags).toEqual(["api", "vault", "t1", "inline/sub"]);
    // Dropping a set tag is fine, and so is dropping a declared one with the text in the same request.
    const ok = await u.api.put(`/api/v1/files/${f.id}`, { tags: [], content: "no tags now" });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.file.tags).toEqual([]);
  });

  it("a note that declares more than 16 shows 16; tags-only requests are checked against what shows", async () => {
    const u = await t.user();
    const body = Array.from({ length: 20 }, (_, i) => `#tag${i}`).join(" ");
    const f = await mkfile(u, { name: "many.md", content: body });
    expect(f.tags).toHaveLength(16);
    expect(f.tags[0]).toBe("tag0");
    const before = await record(u, f.id);
    expectError(
      await u.api.put(`/api/v1/files/${f.id}`, { tags: f.tags.slice(1) }),
      409,
      "tag_declared_by_note",
    );
    expect(await record(u, f.id)).toEqual(before);
    const res = await u.api.put(`/api/v1/files/${f.id}`, { tags: ["mine", ...f.tags.slice(0, 15)] });
    expect(res.status, res.text).toBe(200);
    expect(res.body.file.tags).toEqual(["mine", ...f.tags.slice(0, 15)]);
    // Content and tags at once: accepted; the asked tag is kept as a set tag, the text's 16 new ones
    // come after it, and what shows is capped at 16.
    const more = `${Array.from({ length: 16 }, (_, i) => `#new${i}`).join(" ")} ${body}`;
    const both = await u.api.put(`/api/v1/files/${f.id}`, { content: more, tags: ["mine"] });
    expect(both.status, both.text).toBe(200);
    expect(both.body.file.tags).toEqual(["mine", ...Array.from({ length: 15 }, (_, i) => `new${i}`)]);
  });

  it("aliases are names a link can use", async () => {
    const u = await t.user();
    const target = await mkfile(u, { name: "fm.md", content: FM });
    const a = await mkfile(u, { name: "a.md", content: "see [[other name]]" });
    const links = (await u.api.get(`/api/me/files/${a.id}/links`)).body.links;
    expect(links.map((l: { targetFileId: string }) => l.targetFileId)).toEqual([target.id]);
    // The alias goes from the front-matter: the link no longer names the note.
    await u.api.put(`/api/v1/files/${target.id}`, { content: "# no aliases" });
    expect((await u.api.get(`/api/me/files/${a.id}/links`)).body.links[0].targetFileId).toBeNull();
  });
});

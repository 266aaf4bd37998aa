import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newId } from "../../src/lib/ids.ts";
import type { ShareRow } from "../../src/store/repos/rows.ts";
import { expectError, mkfile, startTestServer, type TestServer, type TestUser } from "../helpers/server.ts";

let t: TestServer;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  t = await startTestServer();
  alice = await t.user();
  bob = await t.user();
});
afterAll(() => t.close());

/** Sharing has no endpoint yet: write an active share row straight into the store. */
async function share(owner: TestUser, grantee: TestUser, fileId: string, role: "writer" | "reader") {
  const now = new Date().toISOString();
  const row: ShareRow = {
    id: newId("s"),
    resource_type: "file",
    resource_id: fileId,
    owner_id: owner.id,
    grantee_id: grantee.id,
    grantee_email: grantee.email,
    role,
    status: "active",
    created_by: owner.id,
    created_at: now,
    updated_at: now,
    expires_at: null,
  };
  await t.server.store.transaction((tx) => tx.shares.insert(row));
}

const DEFAULT_PLAN = { enabled: false, scope: "manual", trust: "unreviewed", source: "", updatedAt: null };
const planOf = async (user: TestUser, id: string) =>
  (await user.api.get(`/api/me/files/${id}/plan`)).body.plan;

describe("plan metadata", () => {
  it("starts at the defaults", async () => {
    const file = await mkfile(alice, { name: "plan.md" });
    for (const path of [`/api/me/files/${file.id}/plan`, `/api/v1/files/${file.id}/plan`]) {
      const res = await alice.api.get(path);
      expect(res.status).toBe(200);
      expect(res.body.plan).toEqual(DEFAULT_PLAN);
    }
  });

  it("PUT saves the values; an omitted source keeps the saved one; the file's ETag stays", async () => {
    const file = await mkfile(alice, { name: "plan2.md", content: "x" });
    const res = await alice.api.put(`/api/me/files/${file.id}/plan`, {
      enabled: true,
      scope: "project",
      trust: "approved",
      source: "agent:planner",
    });
    expect(res.status).toBe(200);
    expect(res.body.plan).toMatchObject({
      enabled: true,
      scope: "project",
      trust: "approved",
      source: "agent:planner",
    });
    expect(Date.parse(res.body.plan.updatedAt)).not.toBeNaN();
    expect(await planOf(alice, file.id)).toEqual(res.body.plan);

    const again = await alice.api.put(`/api/v1/files/${file.id}/plan`, {
      enabled: false,
      scope: "global",
      trust: "unreviewed",
    });
    expect(again.body.plan).toMatchObject({
      enabled: false,
      scope: "global",
      trust: "unreviewed",
      source: "agent:planner",
    });
    expect(await planOf(alice, file.id)).toEqual(again.body.plan);
    // plan metadata is not part of the file's representation
    const now = (await alice.api.get(`/api/v1/files/${file.id}`)).body;
    expect(now.etag).toBe(file.etag);
    expect(now.content).toBe("x");
  });

  it("accepts a 64-character source (counted in characters) and an empty one", async () => {
    const file = await mkfile(alice, { name: "plan3.md" });
    const source = "😀".repeat(64);
    const res = await alice.api.put(`/api/me/files/${file.id}/plan`, {
      enabled: true,
      scope: "manual",
      trust: "unreviewed",
      source,
    });
    expect(res.status).toBe(200);
    expect((await planOf(alice, file.id)).source).toBe(source);
    await alice.api.put(`/api/me/files/${file.id}/plan`, {
      enabled: true,
      scope: "manual",
      trust: "unreviewed",
      source: "",
    });
    expect((await planOf(alice, file.id)).source).toBe("");
  });

  it.each([
    ["a missing enabled", { scope: "manual", trust: "approved" }, "enabled"],
    ["a missing scope", { enabled: true, trust: "approved" }, "scope"],
    ["a missing trust", { enabled: true, scope: "manual" }, "trust"],
    ["an unknown scope", { enabled: true, scope: "team", trust: "approved" }, "scope"],
    ["an unknown trust", { enabled: true, scope: "manual", trust: "trusted" }, "trust"],
    ["a string enabled", { enabled: "yes", scope: "manual", trust: "approved" }, "enabled"],
    [
      "a 65-character source",
      { enabled: true, scope: "manual", trust: "approved", source: "s".repeat(65) },
      "source",
    ],
    ["a numeric source", { enabled: true, scope: "manual", trust: "approved", source: 1 }, "source"],
    ["an unknown field", { enabled: true, scope: "manual", trust: "approved", owner: "me" }, "owner"],
  ])("rejects %s with 400 naming the field and leaves the plan unchanged", async (_label, body, field) => {
    const file = await mkfile(alice, { name: "p.md" });
    const saved = (
      await alice.api.put(`/api/me/files/${file.id}/plan`, {
        enabled: true,
        scope: "project",
        trust: "approved",
        source: "keep",
      })
    ).body.plan;
    for (const path of [`/api/me/files/${file.id}/plan`, `/api/v1/files/${file.id}/plan`]) {
      const err = expectError(await alice.api.put(path, body), 400, "validation_failed");
      expect(err.message).toContain(field);
      expect(JSON.stringify(err.details)).toContain(field);
    }
    expect(await planOf(alice, file.id)).toEqual(saved);
  });

  it("PUT without a body answers 400", async () => {
    const file = await mkfile(alice, { name: "nobody.md" });
    const res = await alice.api.request("PUT", `/api/me/files/${file.id}/plan`);
    expect(res.status).toBe(400);
    expectError(res, 400, res.body.error.code);
    expect(await planOf(alice, file.id)).toEqual(DEFAULT_PLAN);
  });

  it("404s for unknown files and for a non-owner without access, changing nothing", async () => {
    const file = await mkfile(alice, { name: "private-plan.md" });
    const body = { enabled: true, scope: "global", trust: "approved" };
    expectError(await alice.api.get("/api/me/files/f_nope/plan"), 404, "not_found");
    expectError(await alice.api.put("/api/me/files/f_nope/plan", body), 404, "not_found");
    expectError(await bob.api.get(`/api/me/files/${file.id}/plan`), 404, "not_found");
    expectError(await bob.api.put(`/api/me/files/${file.id}/plan`, body), 404, "not_found");
    expectError(await bob.api.put(`/api/v1/files/${file.id}/plan`, body), 404, "not_found");
    expect(await planOf(alice, file.id)).toEqual(DEFAULT_PLAN);
  });
});

describe("roles through shares", () => {
  it("a writer may edit content but not save the plan or delete: 403 owner_only", async () => {
    const carol = await t.user();
    const file = await mkfile(alice, { name: "shared-w.md", content: "v1" });
    await share(alice, carol, file.id, "writer");

    const read = await carol.api.get(`/api/v1/files/${file.id}`);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ content: "v1", access: "shared", role: "writer" });

    const write = await carol.api.put(`/api/me/files/${file.id}`, { content: "v2 by carol" });
    expect(write.status).toBe(200);
    expect(write.body.file).toMatchObject({ content: "v2 by carol", role: "writer", access: "shared" });

    expect((await carol.api.get(`/api/me/files/${file.id}/plan`)).body.plan).toEqual(DEFAULT_PLAN);
    const body = { enabled: true, scope: "project", trust: "approved", source: "carol" };
    expectError(await carol.api.put(`/api/me/files/${file.id}/plan`, body), 403, "owner_only");
    expectError(await carol.api.put(`/api/v1/files/${file.id}/plan`, body), 403, "owner_only");
    expectError(await carol.api.delete(`/api/v1/files/${file.id}`), 403, "owner_only");

    expect(await planOf(alice, file.id)).toEqual(DEFAULT_PLAN);
    expect((await alice.api.get(`/api/v1/files/${file.id}`)).body.content).toBe("v2 by carol");
    // the owner still may
    expect((await alice.api.put(`/api/me/files/${file.id}/plan`, body)).status).toBe(200);
    expect((await carol.api.get(`/api/me/files/${file.id}/plan`)).body.plan.source).toBe("carol");
  });

  it("a reader may read but not write: 403 read_only_access on content, owner_only on plan", async () => {
    const dave = await t.user();
    const file = await mkfile(alice, { name: "shared-r.md", content: "read me" });
    await share(alice, dave, file.id, "reader");

    const read = await dave.api.get(`/api/me/files/${file.id}`);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ content: "read me", access: "shared", role: "reader" });
    expect((await dave.api.get(`/api/v1/files/${file.id}/plan`)).status).toBe(200);

    expectError(
      await dave.api.put(`/api/me/files/${file.id}`, { content: "vandal" }),
      403,
      "read_only_access",
    );
    expectError(await dave.api.put(`/api/v1/files/${file.id}`, { tags: ["x"] }), 403, "read_only_access");
    expectError(
      await dave.api.put(`/api/me/files/${file.id}/plan`, {
        enabled: true,
        scope: "manual",
        trust: "approved",
      }),
      403,
      "owner_only",
    );
    expectError(await dave.api.delete(`/api/v1/files/${file.id}`), 403, "owner_only");
    const now = (await alice.api.get(`/api/v1/files/${file.id}`)).body;
    expect(now).toMatchObject({ content: "read me", tags: [], etag: file.etag });
    expect(await planOf(alice, file.id)).toEqual(DEFAULT_PLAN);
  });
});

describe("connections", () => {
  const connections = async (user: TestUser, id: string) => {
    const res = await user.api.get(`/api/me/files/${id}/connections`);
    expect(res.status, res.text).toBe(200);
    // These tests are about explicit links, tags and folders: full-text similarity (brain tests)
    // would link their look-alike notes, so it is left out here.
    return (res.body.connections as { file: any; score: number; reasons: any[] }[])
      .map((c) => ({ ...c, reasons: c.reasons.filter((r) => r.type !== "similar_text") }))
      .filter((c) => c.reasons.length > 0);
  };

  it("POST creates (created: true) and then updates the reason (created: false)", async () => {
    const a = await mkfile(alice, { name: "a.md" });
    const b = await mkfile(alice, { name: "b.md" });
    const first = await alice.api.post(`/api/me/files/${a.id}/connections`, {
      targetFileId: b.id,
      reason: "b extends a",
    });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      created: true,
      connection: { fileId: a.id, targetFileId: b.id, reason: "b extends a" },
    });
    const second = await alice.api.post(`/api/v1/files/${a.id}/connections`, {
      targetFileId: b.id,
      reason: "b replaces a",
    });
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ created: false, connection: { reason: "b replaces a" } });
    // connecting from the other side finds the same connection
    const reverse = await alice.api.post(`/api/me/files/${b.id}/connections`, { targetFileId: a.id });
    expect(reverse.body).toMatchObject({
      created: false,
      connection: { fileId: b.id, targetFileId: a.id, reason: "b replaces a" },
    });
    const list = await connections(alice, a.id);
    expect(list).toHaveLength(1);
    expect(list[0]!.reasons).toEqual([expect.objectContaining({ type: "explicit", reason: "b replaces a" })]);
  });

  it("an explicit connection shows from both ends", async () => {
    const a = await mkfile(alice, { name: "from.md" });
    const b = await mkfile(alice, { name: "to.md" });
    await alice.api.post(`/api/me/files/${a.id}/connections`, { targetFileId: b.id, reason: "why" });
    for (const [self, other] of [
      [a, b],
      [b, a],
    ]) {
      const list = await connections(alice, self.id);
      expect(list.map((c) => c.file.id)).toEqual([other.id]);
      expect(list[0]!.reasons).toEqual([expect.objectContaining({ type: "explicit", reason: "why" })]);
      expect(list[0]!.file).not.toHaveProperty("content");
    }
  });

  it("ranks explicit above inferred, more shared tags above fewer, and lists the reasons", async () => {
    const u = await t.user();
    const dir = (await u.api.post("/api/v1/folders", { name: "proj" })).body.folder;
    const tags = ["t1", "t2", "t3", "t4", "t5", "t6"];
    const hub = await mkfile(u, { name: "hub.md", tags, folderId: dir.id });
    const explicit = await mkfile(u, { name: "explicit.md" }); // no tags, other folder
    const sixTags = await mkfile(u, { name: "six.md", tags: [...tags, "other"], folderId: dir.id });
    const twoTags = await mkfile(u, { name: "two.md", tags: ["t2", "t1", "zzz"] });
    const oneTag = await mkfile(u, { name: "one.md", tags: ["t6"] });
    const sameFolder = await mkfile(u, { name: "sibling.md", folderId: dir.id });
    await mkfile(u, { name: "unrelated.md", tags: ["nope"] });
    expect(
      (await u.api.post(`/api/me/files/${explicit.id}/connections`, { targetFileId: hub.id, reason: "r" }))
        .status,
    ).toBe(200);

    const list = await connections(u, hub.id);
    expect(list.map((c) => c.file.name)).toEqual(["explicit.md", "six.md", "two.md", "one.md", "sibling.md"]);
    const scores = list.map((c) => c.score);
    expect([...scores].sort((x, y) => y - x)).toEqual(scores);
    expect(new Set(scores).size).toBe(scores.length);
    const by = new Map(list.map((c) => [c.file.id, c.reasons]));
    expect(by.get(explicit.id)).toEqual([expect.objectContaining({ type: "explicit", reason: "r" })]);
    expect(by.get(sixTags.id)).toEqual(
      expect.arrayContaining([
        { type: "shared_tags", tags },
        { type: "same_folder", folderId: dir.id },
      ]),
    );
    expect(by.get(twoTags.id)).toEqual([{ type: "shared_tags", tags: ["t2", "t1"] }]);
    expect(by.get(oneTag.id)).toEqual([{ type: "shared_tags", tags: ["t6"] }]);
    expect(by.get(sameFolder.id)).toEqual([{ type: "same_folder", folderId: dir.id }]);
  });

  it("a file both connected and sharing tags carries every reason", async () => {
    const a = await mkfile(alice, { name: "both-a.md", tags: ["x", "y"] });
    const b = await mkfile(alice, { name: "both-b.md", tags: ["y"] });
    await alice.api.post(`/api/me/files/${b.id}/connections`, { targetFileId: a.id, reason: "see also" });
    const entry = (await connections(alice, a.id)).find((c) => c.file.id === b.id)!;
    expect(entry.reasons).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: "explicit", reason: "see also" }),
        { type: "shared_tags", tags: ["y"] },
      ]),
    );
    expect(entry.reasons).toHaveLength(2);
  });

  it("accepts a 500-character reason; rejects 501 with 400 and keeps the old one", async () => {
    const a = await mkfile(alice, { name: "r-a.md" });
    const b = await mkfile(alice, { name: "r-b.md" });
    const ok = await alice.api.post(`/api/me/files/${a.id}/connections`, {
      targetFileId: b.id,
      reason: "é".repeat(500),
    });
    expect(ok.status).toBe(200);
    const err = expectError(
      await alice.api.post(`/api/me/files/${a.id}/connections`, {
        targetFileId: b.id,
        reason: "x".repeat(501),
      }),
      400,
      "validation_failed",
    );
    expect(err.message).toContain("reason");
    const c = await mkfile(alice, { name: "r-c.md" });
    expectError(
      await alice.api.post(`/api/me/files/${a.id}/connections`, {
        targetFileId: c.id,
        reason: "x".repeat(501),
      }),
      400,
      "validation_failed",
    );
    const list = await connections(alice, a.id);
    expect(list.map((x) => x.file.id)).toEqual([b.id]);
    expect(list[0]!.reasons[0].reason).toBe("é".repeat(500));
  });

  it.each([
    ["a missing targetFileId", { reason: "x" }, "targetFileId"],
    ["an empty targetFileId", { targetFileId: "" }, "targetFileId"],
    ["a numeric targetFileId", { targetFileId: 3 }, "targetFileId"],
    ["a numeric reason", { targetFileId: "f_x", reason: 3 }, "reason"],
    ["an unknown field", { targetFileId: "f_x", weight: 3 }, "weight"],
  ])("rejects %s with 400 naming the field", async (_label, body, field) => {
    const a = await mkfile(alice, { name: "bad-body.md" });
    const err = expectError(
      await alice.api.post(`/api/me/files/${a.id}/connections`, body),
      400,
      "validation_failed",
    );
    expect(err.message).toContain(field);
    expect(await connections(alice, a.id)).toEqual([]);
  });

  it("rejects connecting a file to itself", async () => {
    const a = await mkfile(alice, { name: "self.md", tags: ["solo"] });
    const err = expectError(
      await alice.api.post(`/api/me/files/${a.id}/connections`, { targetFileId: a.id }),
      400,
      "validation_failed",
    );
    expect(err.message).toContain("targetFileId");
    expect(await connections(alice, a.id)).toEqual([]);
  });

  it("404s for an unknown or invisible target, or an invisible source, and connects nothing", async () => {
    const a = await mkfile(alice, { name: "src.md" });
    const bobs = await mkfile(bob, { name: "bobs.md" });
    for (const targetFileId of ["f_nope", bobs.id]) {
      const err = expectError(
        await alice.api.post(`/api/me/files/${a.id}/connections`, { targetFileId }),
        404,
        "not_found",
      );
      expect(err.message).toContain("targetFileId");
    }
    expectError(
      await bob.api.post(`/api/me/files/${a.id}/connections`, { targetFileId: bobs.id }),
      404,
      "not_found",
    );
    expectError(await bob.api.get(`/api/me/files/${a.id}/connections`), 404, "not_found");
    expectError(await alice.api.get("/api/me/files/f_nope/connections"), 404, "not_found");
    expectError(
      await bob.api.delete(`/api/me/files/${a.id}/connections?targetFileId=${bobs.id}`),
      404,
      "not_found",
    );
    expect(await connections(alice, a.id)).toEqual([]);
    expect(await connections(bob, bobs.id)).toEqual([]);
  });

  it("DELETE removes the connection from both ends and is idempotent", async () => {
    const a = await mkfile(alice, { name: "d-a.md" });
    const b = await mkfile(alice, { name: "d-b.md" });
    await alice.api.post(`/api/me/files/${a.id}/connections`, { targetFileId: b.id, reason: "tmp" });
    // removed from the other end than it was made on
    const res = await alice.api.delete(`/api/me/files/${b.id}/connections?targetFileId=${a.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ fileId: b.id, targetFileId: a.id, removed: true });
    expect(await connections(alice, a.id)).toEqual([]);
    expect(await connections(alice, b.id)).toEqual([]);
    const again = await alice.api.delete(`/api/v1/files/${b.id}/connections?targetFileId=${a.id}`);
    expect(again.status).toBe(200);
    expect(again.body.removed).toBe(false);
    // a new POST creates it afresh
    expect(
      (await alice.api.post(`/api/me/files/${a.id}/connections`, { targetFileId: b.id })).body.created,
    ).toBe(true);
  });

  it("DELETE without targetFileId answers 400 and removes nothing", async () => {
    const a = await mkfile(alice, { name: "q-a.md" });
    const b = await mkfile(alice, { name: "q-b.md" });
    await alice.api.post(`/api/me/files/${a.id}/connections`, { targetFileId: b.id });
    for (const query of ["", "?targetFileId=", "?other=1"]) {
      const err = expectError(
        await alice.api.delete(`/api/me/files/${a.id}/connections${query}`),
        400,
        "validation_failed",
      );
      expect(err.message).toContain("targetFileId");
    }
    expect((await connections(alice, a.id)).map((c) => c.file.id)).toEqual([b.id]);
  });

  it("deleting a file drops its connections", async () => {
    const a = await mkfile(alice, { name: "x-a.md" });
    const b = await mkfile(alice, { name: "x-b.md" });
    await alice.api.post(`/api/me/files/${a.id}/connections`, { targetFileId: b.id });
    await alice.api.delete(`/api/v1/files/${b.id}`);
    expect(await connections(alice, a.id)).toEqual([]);
  });

  it("a reader of a shared file may connect to it but not from it", async () => {
    const erin = await t.user();
    const shared = await mkfile(alice, { name: "shared-conn.md" });
    await share(alice, erin, shared.id, "reader");
    const own = await mkfile(erin, { name: "erins.md" });
    const res = await erin.api.post(`/api/me/files/${own.id}/connections`, { targetFileId: shared.id });
    expect(res.status).toBe(200);
    expect((await connections(erin, own.id)).map((c) => c.file.id)).toEqual([shared.id]);
    expectError(
      await erin.api.post(`/api/me/files/${shared.id}/connections`, { targetFileId: own.id, reason: "x" }),
      403,
      "read_only_access",
    );
    // alice cannot see erin's file, so the connection is not shown to her
    expect(await connections(alice, shared.id)).toEqual([]);
  });
});

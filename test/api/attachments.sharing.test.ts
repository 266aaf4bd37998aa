// Attachments (issue 48) among the rest of the service, on a real server over both stores: keys and
// roles, shares, the change feed, batch and sync, folders and listings, names shared with notes.
// Each refused request is checked to have changed nothing.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { attach, bin, fullFingerprint } from "../helpers/attachments.ts";
import {
  expectError,
  mkdir,
  mkfile,
  startTestServer,
  type TestServer,
  type TestUser,
} from "../helpers/server.ts";

let t: TestServer;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  t = await startTestServer();
  alice = await t.user();
  bob = await t.user();
});
afterAll(() => t.close());

const octet = { "content-type": "application/octet-stream" };

describe("auth, scopes and roles", () => {
  it("401 without a key, 403 insufficient_scope for a read-only key; nothing changes", async () => {
    const ro = await t.user(undefined, ["files:read", "folders:read", "shares:read", "collaboration:read"]);
    const a = await attach(t, alice, "private.png", Buffer.from([9]));
    const before = await fullFingerprint(t, ro);
    expectError(
      (await bin(t, undefined, "GET", `/api/v1/attachments/${a.id}/raw`)) as never,
      401,
      "unauthenticated",
    );
    expectError(
      (await bin(t, undefined, "POST", "/api/v1/attachments?name=x.png", Buffer.from([1]), octet)) as never,
      401,
      "unauthenticated",
    );
    expectError(
      (await bin(t, ro, "POST", "/api/v1/attachments?name=x.png", Buffer.from([1]), octet)) as never,
      403,
      "insufficient_scope",
    );
    expect(await fullFingerprint(t, ro)).toBe(before);
    // Another account's attachment is not found (existence is not revealed).
    expectError((await bin(t, bob, "GET", `/api/v1/attachments/${a.id}/raw`)) as never, 404, "not_found");
    expectError(await bob.api.put(`/api/v1/attachments/${a.id}`, { name: "mine.png" }), 404, "not_found");
  });

  it("folder shares apply as to notes: a reader reads, a writer writes, only the owner deletes", async () => {
    const owner = await t.user();
    const reader = await t.user();
    const writer = await t.user();
    const team = await mkdir(owner, { name: "Team" });
    const sub = await mkdir(owner, { name: "Sub", parentFolderId: team.id });
    const pic = await attach(t, owner, "diagram.svg", Buffer.from("<svg/>"), sub.id);
    for (const [user, role] of [
      [reader, "reader"],
      [writer, "writer"],
    ] as const) {
      const res = await owner.api.post(`/api/v1/folders/${team.id}/share`, { email: user.email, role });
      expect(res.status).toBe(201);
    }
    // The reader sees it (listing, record, bytes) with its role.
    const listed = await reader.api.get("/api/v1/attachments");
    expect(listed.body.attachments.map((a: { id: string }) => a.id)).toContain(pic.id);
    const rec = await reader.api.get(`/api/v1/attachments/${pic.id}`);
    expect(rec.body).toMatchObject({ access: "shared", role: "reader" });
    expect((await bin(t, reader, "GET", `/api/v1/attachments/${pic.id}/raw`)).text).toBe("<svg/>");
    const before = await fullFingerprint(t, owner);
    expectError(
      (await bin(t, reader, "PUT", `/api/v1/attachments/${pic.id}/raw`, Buffer.from("x"), octet)) as never,
      403,
      "read_only_access",
    );
    expectError(
      await reader.api.put(`/api/v1/attachments/${pic.id}`, { name: "y.svg" }),
      403,
      "read_only_access",
    );
    expectError(
      (await bin(
        t,
        reader,
        "POST",
        `/api/v1/attachments?name=r.png&folderId=${sub.id}`,
        Buffer.from([1]),
        octet,
      )) as never,
      403,
      "read_only_access",
    );
    expectError(await writer.api.delete(`/api/v1/attachments/${pic.id}`), 403, "owner_only");
    expect(await fullFingerprint(t, owner)).toBe(before);
    // The writer writes and creates inside the owner's tree; the owner owns what it creates.
    expect(
      (await bin(t, writer, "PUT", `/api/v1/attachments/${pic.id}/raw`, Buffer.from("<svg></svg>"), octet))
        .status,
    ).toBe(200);
    const made = await attach(t, writer, "by-writer.png", Buffer.from([7]), sub.id);
    expect(made).toMatchObject({ ownerId: owner.id, role: "writer" });
    expect((await owner.api.delete(`/api/v1/attachments/${made.id}`)).status).toBe(200);
  });
});

describe("the change feed", () => {
  it("strict clients never see attachments; include=attachments carries creates, changes and tombstones", async () => {
    const dave = await t.user();
    await mkfile(dave, { name: "plain.md", content: "x" });
    const head = (await dave.api.get("/api/v1/changes?cursor=latest")).body.cursor;
    const a = await attach(t, dave, "pic.gif", Buffer.from("GIF89a"));
    await bin(t, dave, "PUT", `/api/v1/attachments/${a.id}/raw`, Buffer.from("GIF89b"), octet);
    const gone = await attach(t, dave, "tmp.zip", Buffer.from("PK"));
    await dave.api.delete(`/api/v1/attachments/${gone.id}`);

    const strict = await dave.api.get(`/api/v1/changes?cursor=${head}`);
    expect(strict.body.changes).toEqual([]);
    expect(strict.body.hasMore).toBe(false);
    const all = (await dave.api.get("/api/v1/changes?cursor=0")).body;
    expect(all.changes.every((c: { kind: string }) => c.kind !== "attachment")).toBe(true);
    // The strict reader is at the head: nothing it was not told is in front of it.
    expect(strict.body.cursor).toBe(all.cursor);

    const asked = (await dave.api.get(`/api/v1/changes?cursor=${head}&include=attachments`)).body.changes;
    const mine = asked.filter((c: { kind: string }) => c.kind === "attachment");
    expect(mine.map((c: { id: string; deleted: boolean }) => [c.id, c.deleted])).toEqual([
      [a.id, false],
      [gone.id, true],
    ]);
    expect(mine[0].attachment).toMatchObject({ name: "pic.gif", revision: 2, size: 6 });
    expect(mine[0].etag).toBe(mine[0].attachment.etag);
    const fromZero = (await dave.api.get("/api/v1/changes?cursor=0&include=attachments")).body.changes;
    expect(
      fromZero.filter((c: { kind: string }) => c.kind === "attachment").map((c: { id: string }) => c.id),
    ).toEqual([a.id]);
  });
});

describe("batch and sync", () => {
  it("batch writes attachments (base64) in one transaction; one bad operation and nothing is applied", async () => {
    const erin = await t.user();
    const before = await fullFingerprint(t, erin);
    const bad = await erin.api.post("/api/v1/batch", {
      operations: [
        { id: "d", op: "folder.create", body: { name: "Img" } },
        { op: "attachment.create", body: { name: "ok.png", folderId: { ref: "d" }, contentBase64: "AAEC" } },
        { op: "attachment.create", body: { name: "bad.png", contentBase64: "not base64!" } },
      ],
    });
    expect(expectError(bad, 400, "validation_failed").details[0]).toMatchObject({
      field: "operations[2].body.contentBase64",
      code: "pattern",
    });
    expect(await fullFingerprint(t, erin)).toBe(before);
    const good = await erin.api.post("/api/v1/batch", {
      operations: [
        { id: "d", op: "folder.create", body: { name: "Img" } },
        {
          id: "a",
          op: "attachment.create",
          body: { name: "ok.png", folderId: { ref: "d" }, contentBase64: "AAEC/w==" },
        },
        {
          op: "attachment.update",
          target: { ref: "a" },
          body: { name: "renamed.png", contentBase64: "BQY=" },
        },
      ],
    });
    expect(good.status, good.text).toBe(200);
    const id = good.body.results[1].itemId;
    expect(good.body.results[2]).toMatchObject({
      status: 200,
      itemId: id,
      body: { attachment: { name: "renamed.png", size: 2 } },
    });
    expect((await bin(t, erin, "GET", `/api/v1/attachments/${id}/raw`)).bytes).toEqual(Buffer.from([5, 6]));
  });

  it("sync pushes attachments and pulls them with include; a stale baseEtag is a conflict, not applied", async () => {
    const fred = await t.user();
    const a = await attach(t, fred, "s.bin", Buffer.from("base"));
    const pushed = await fred.api.post("/api/v1/sync", {
      cursor: "latest",
      push: [
        {
          id: "u",
          op: "attachment.update",
          target: a.id,
          baseEtag: a.etag,
          body: { contentBase64: Buffer.from("mine").toString("base64") },
        },
        { id: "c", op: "attachment.create", body: { name: "new.bin", contentBase64: "" } },
      ],
    });
    expect(pushed.status, pushed.text).toBe(200);
    expect(pushed.body.pushResults.map((r: { status: number }) => r.status)).toEqual([200, 201]);
    const before = await fullFingerprint(t, fred);
    const stale = await fred.api.post("/api/v1/sync", {
      cursor: 0,
      include: "attachments",
      push: [
        { id: "s", op: "attachment.update", target: a.id, baseEtag: a.etag, body: { contentBase64: "eA==" } },
      ],
    });
    expect(stale.body.pushResults[0]).toMatchObject({
      status: 409,
      conflict: { reason: "changed_remotely" },
    });
    expect(await fullFingerprint(t, fred)).toBe(before);
    const kinds = stale.body.changes.map((c: { kind: string; id: string }) => `${c.kind}:${c.id}`);
    expect(kinds).toContain(`attachment:${a.id}`);
    const strict = await fred.api.post("/api/v1/sync", { cursor: 0 });
    expect(strict.body.changes.some((c: { kind: string }) => c.kind === "attachment")).toBe(false);
  });
});

describe("folders and listings", () => {
  it("deleting a folder moves its attachments up one level, like notes (a taken name gets (1))", async () => {
    const gina = await t.user();
    const top = await mkdir(gina, { name: "Top" });
    const inner = await mkdir(gina, { name: "Inner", parentFolderId: top.id });
    const x = await attach(t, gina, "x.png", Buffer.from("inner"), inner.id);
    const clash = await attach(t, gina, "x.png", Buffer.from("top"), top.id);
    const note = await mkfile(gina, { name: "n.md", content: "n", folderId: inner.id });
    const del = await gina.api.delete(`/api/v1/folders/${inner.id}`);
    expect(del.status, del.text).toBe(200);
    expect(del.body.movedFileIds).toEqual([note.id]);
    expect(del.body.movedAttachmentIds).toEqual([x.id]);
    const moved = (await gina.api.get(`/api/v1/attachments/${x.id}`)).body;
    expect(moved).toMatchObject({ folderId: top.id, name: "x (1).png" });
    expect((await bin(t, gina, "GET", `/api/v1/attachments/${x.id}/raw`)).text).toBe("inner");
    expect((await gina.api.get(`/api/v1/attachments/${clash.id}`)).body.name).toBe("x.png");
    const inTop = await gina.api.get(`/api/v1/attachments?folderId=${top.id}`);
    expect(inTop.body.attachments.map((a: { id: string }) => a.id).sort()).toEqual([x.id, clash.id].sort());
  });

  it("GET /api/me gains rootAttachments; rootFiles and the notes' listings stay notes only; pages page", async () => {
    const hal = await t.user();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await attach(t, hal, `p${i}.png`, Buffer.from([i]))).id);
    await mkfile(hal, { name: "only-note.md", content: "" });
    const me = await hal.api.get("/api/me");
    expect(me.body.rootFiles.map((f: { name: string }) => f.name)).toEqual(["only-note.md"]);
    expect(me.body.rootAttachments.map((a: { id: string }) => a.id)).toEqual(ids);
    expect((await hal.api.get("/api/v1/files")).body.files).toHaveLength(1);
    const p1 = await hal.api.get("/api/v1/attachments?limit=2&folderId=root");
    expect(p1.body.hasMore).toBe(true);
    const p2 = await hal.api.get(`/api/v1/attachments?limit=10&cursor=${p1.body.nextCursor}`);
    expect([...p1.body.attachments, ...p2.body.attachments].map((a: { id: string }) => a.id)).toEqual(ids);
    expectError(await hal.api.get("/api/v1/attachments?cursor=zzz"), 400, "invalid_cursor");
    expectError(await hal.api.get("/api/v1/attachments?folderId=d_none"), 404, "not_found");
  });
});

describe("one name, one item", () => {
  it("a note may not take an attachment's name in its folder (create, rename, move, import); nothing changes", async () => {
    const ivy = await t.user();
    const dir = await mkdir(ivy, { name: "Mixed" });
    await attach(t, ivy, "chart.png", Buffer.from([1, 2]), dir.id);
    const note = await mkfile(ivy, { name: "draft.md", content: "x" });
    const before = await fullFingerprint(t, ivy);
    expectError(
      await ivy.api.post("/api/v1/files", { name: "chart.png", folderId: dir.id }),
      409,
      "conflict",
    );
    expectError(
      await ivy.api.put(`/api/v1/files/${note.id}`, { name: "chart.png", folderId: dir.id }),
      409,
      "conflict",
    );
    const imported = await ivy.api.post("/api/v1/files/import", {
      files: [{ path: "Mixed/chart.png", content: "text" }],
    });
    expectError(imported, 409, "conflict");
    expect(await fullFingerprint(t, ivy)).toBe(before);
    // The same name elsewhere is fine.
    expect((await ivy.api.post("/api/v1/files", { name: "chart.png" })).status).toBe(201);
  });
});

describe("a share in the feed", () => {
  it("sharing a folder tells the grantee of its attachments; moving one out and revoking take them back", async () => {
    const owner = await t.user();
    const friend = await t.user();
    const shared = await mkdir(owner, { name: "Shared" });
    const mine = await mkdir(owner, { name: "Mine" });
    const pic = await attach(t, owner, "p.png", Buffer.from([1]), shared.id);
    const doc = await attach(t, owner, "d.pdf", Buffer.from("%PDF"), shared.id);
    const head = (await friend.api.get("/api/v1/changes?cursor=latest")).body.cursor;
    const share = await owner.api.post(`/api/v1/folders/${shared.id}/share`, {
      email: friend.email,
      role: "reader",
    });
    expect(share.status).toBe(201);
    const told = async (from: number) =>
      (await friend.api.get(`/api/v1/changes?cursor=${from}&include=attachments`)).body.changes.filter(
        (c: { kind: string }) => c.kind === "attachment",
      );
    const afterShare = await told(head);
    expect(afterShare.map((c: { id: string }) => c.id).sort()).toEqual([pic.id, doc.id].sort());
    expect(afterShare[0].attachment.role).toBe("reader");
    const mark = (await friend.api.get("/api/v1/changes?cursor=latest")).body.cursor;
    // Moving one out of the shared folder: a tombstone for the friend, who can no longer see it.
    expect((await owner.api.put(`/api/v1/attachments/${doc.id}`, { folderId: mine.id })).status).toBe(200);
    const moved = await told(mark);
    expect(moved).toMatchObject([{ id: doc.id, deleted: true, reason: "access_revoked" }]);
    expectError(await friend.api.get(`/api/v1/attachments/${doc.id}`), 404, "not_found");
    const mark2 = (await friend.api.get("/api/v1/changes?cursor=latest")).body.cursor;
    expect((await owner.api.delete(`/api/v1/shares/${share.body.share.id}`)).status).toBe(200);
    expect(await told(mark2)).toMatchObject([{ id: pic.id, deleted: true, reason: "access_revoked" }]);
    expectError(
      (await bin(t, friend, "GET", `/api/v1/attachments/${pic.id}/raw`)) as never,
      404,
      "not_found",
    );
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser } from "../../src/server/domain/accounts.ts";
import {
  expectError,
  mkdir,
  mkfile,
  startTestServer,
  type TestServer,
  type TestUser,
} from "../helpers/server.ts";

let t: TestServer;
let alice: TestUser; // owner
let bob: TestUser; // grantee
let carol: TestUser; // a third user with no access

beforeAll(async () => {
  t = await startTestServer();
  alice = await t.user();
  bob = await t.user();
  carol = await t.user();
});
afterAll(() => t.close());

async function share(owner: TestUser, body: Record<string, unknown>) {
  const res = await owner.api.post("/api/v1/shares", body);
  expect(res.status, res.text).toBe(201);
  return res.body.share;
}

const ids = (files: { id: string }[]) => files.map((f) => f.id);

describe("share a file", () => {
  it("creates an active share by email; the grantee sees the file with access shared and its role", async () => {
    const file = await mkfile(alice, { name: "s1.md", content: "hello" });
    const res = await alice.api.post("/api/v1/shares", { fileId: file.id, email: bob.email, role: "reader" });
    expect(res.status, res.text).toBe(201);
    expect(res.headers.get("location")).toBe(`/api/v1/shares/${res.body.share.id}`);
    expect(res.body.share).toMatchObject({
      resourceType: "file",
      resourceId: file.id,
      role: "reader",
      status: "active",
      grantee: { type: "user", userId: bob.id, email: bob.email },
      ownerId: alice.id,
      inherited: false,
      expiresAt: null,
    });
    const read = await bob.api.get(`/api/v1/files/${file.id}`);
    expect(read.body).toMatchObject({ content: "hello", access: "shared", role: "reader" });
    expect((await alice.api.get(`/api/v1/files/${file.id}`)).body).toMatchObject({
      access: "owner",
      role: "owner",
    });
    // every listing includes it, with the role
    const list = (await bob.api.get("/api/v1/files")).body.files;
    expect(list.find((f: any) => f.id === file.id)).toMatchObject({ access: "shared", role: "reader" });
    const flat = (await bob.api.get("/api/me/files")).body.files;
    expect(flat.find((f: any) => f.id === file.id)).toMatchObject({ access: "shared", role: "reader" });
    const me = (await bob.api.get("/api/me")).body.rootFiles;
    expect(me.find((f: any) => f.id === file.id)).toMatchObject({ access: "shared", role: "reader" });
    // carol sees nothing of it
    expect(ids((await carol.api.get("/api/v1/files")).body.files)).not.toContain(file.id);
    expectError(await carol.api.get(`/api/v1/files/${file.id}`), 404, "not_found");
  });

  it("a file shared alone from inside a folder shows at the grantee's top level in /api/me", async () => {
    const dir = await mkdir(alice, { name: "private-dir" });
    const file = await mkfile(alice, { name: "inside.md", folderId: dir.id });
    await share(alice, { fileId: file.id, email: bob.email, role: "writer" });
    const me = (await bob.api.get("/api/me")).body;
    expect(ids(me.rootFiles)).toContain(file.id);
    expect(ids(me.folders)).not.toContain(dir.id);
  });

  it("sharing again with the same email changes the role (200, created false), never duplicates", async () => {
    const file = await mkfile(alice, { name: "s2.md" });
    const first = await share(alice, { fileId: file.id, email: bob.email, role: "reader" });
    const again = await alice.api.post("/api/v1/shares", {
      fileId: file.id,
      email: bob.email.toUpperCase(),
      role: "writer",
    });
    expect(again.status, again.text).toBe(200);
    expect(again.body).toMatchObject({ created: false, share: { id: first.id, role: "writer" } });
    const list = await alice.api.get(`/api/v1/shares?fileId=${file.id}`);
    expect(list.body.shares).toHaveLength(1);
  });

  it("PATCH changes the role and DELETE revokes; the grantee's access follows at once", async () => {
    const file = await mkfile(alice, { name: "s3.md", content: "v1" });
    const s = await share(alice, { fileId: file.id, email: bob.email, role: "reader" });
    expectError(await bob.api.put(`/api/v1/files/${file.id}`, { content: "x" }), 403, "read_only_access");
    const patched = await alice.api.request("PATCH", `/api/v1/shares/${s.id}`, { json: { role: "writer" } });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.share.role).toBe("writer");
    expect((await bob.api.put(`/api/v1/files/${file.id}`, { content: "v2" })).status).toBe(200);
    const del = await alice.api.delete(`/api/v1/shares/${s.id}`);
    expect(del.status, del.text).toBe(200);
    expect(del.body).toMatchObject({ id: s.id, revoked: true });
    expectError(await bob.api.get(`/api/v1/files/${file.id}`), 404, "not_found");
    expectError(await alice.api.get(`/api/v1/shares/${s.id}`), 404, "not_found");
    expect(ids((await bob.api.get("/api/v1/files")).body.files)).not.toContain(file.id);
  });

  it("the grantee may leave a share but not change it; others cannot see it", async () => {
    const file = await mkfile(alice, { name: "s4.md" });
    const s = await share(alice, { fileId: file.id, email: bob.email, role: "writer" });
    expect((await bob.api.get(`/api/v1/shares/${s.id}`)).body.share.id).toBe(s.id);
    expectError(
      await bob.api.request("PATCH", `/api/v1/shares/${s.id}`, { json: { role: "reader" } }),
      403,
      "owner_only",
    );
    expectError(await carol.api.get(`/api/v1/shares/${s.id}`), 404, "not_found");
    expectError(await carol.api.delete(`/api/v1/shares/${s.id}`), 404, "not_found");
    expect((await alice.api.get(`/api/v1/shares/${s.id}`)).body.share.role).toBe("writer");
    expect((await bob.api.delete(`/api/v1/shares/${s.id}`)).status).toBe(200);
    expectError(await bob.api.get(`/api/v1/files/${file.id}`), 404, "not_found");
  });

  it("a writer cannot re-share, delete or change the plan (403 owner_only); a reader cannot write", async () => {
    const file = await mkfile(alice, { name: "s5.md", content: "orig" });
    await share(alice, { fileId: file.id, email: bob.email, role: "writer" });
    expectError(
      await bob.api.post("/api/v1/shares", { fileId: file.id, email: carol.email, role: "reader" }),
      403,
      "owner_only",
    );
    expectError(await bob.api.delete(`/api/v1/files/${file.id}`), 403, "owner_only");
    expectError(
      await bob.api.put(`/api/v1/files/${file.id}/plan`, {
        enabled: true,
        scope: "manual",
        trust: "approved",
      }),
      403,
      "owner_only",
    );
    expectError(await carol.api.get(`/api/v1/files/${file.id}`), 404, "not_found");
    expect((await alice.api.get(`/api/v1/shares?fileId=${file.id}`)).body.shares).toHaveLength(1);
    // no access at all: sharing someone else's file is a 404 (its existence is not revealed)
    expectError(
      await carol.api.post("/api/v1/shares", { fileId: file.id, email: carol.email, role: "writer" }),
      404,
      "not_found",
    );
  });

  it("bad input gets the error body and changes nothing", async () => {
    const file = await mkfile(alice, { name: "s6.md" });
    const cases: [Record<string, unknown>, string][] = [
      [{ fileId: file.id, email: "not-an-email", role: "reader" }, "validation_failed"],
      [{ fileId: file.id, email: bob.email, role: "owner" }, "validation_failed"],
      [{ fileId: file.id, email: bob.email }, "validation_failed"],
      [{ email: bob.email, role: "reader" }, "validation_failed"],
      [{ fileId: file.id, folderId: "d_x", email: bob.email, role: "reader" }, "validation_failed"],
      [{ fileId: file.id, email: alice.email, role: "reader" }, "validation_failed"],
      [{ fileId: file.id, email: bob.email, role: "reader", expiresAt: "tomorrow" }, "validation_failed"],
      [
        { fileId: file.id, email: bob.email, role: "reader", expiresAt: "2001-01-01T00:00:00Z" },
        "validation_failed",
      ],
      [
        { fileId: file.id, email: bob.email, role: "reader", expiresAt: "2999-01-01T00:00:00Z" },
        "validation_failed",
      ],
      [{ fileId: file.id, email: bob.email, role: "reader", extra: 1 }, "validation_failed"],
    ];
    for (const [body, code] of cases) expectError(await alice.api.post("/api/v1/shares", body), 400, code);
    expectError(
      await alice.api.post("/api/v1/shares", { fileId: "f_missing", email: bob.email, role: "reader" }),
      404,
      "not_found",
    );
    expect((await alice.api.get(`/api/v1/shares?fileId=${file.id}`)).body.shares).toEqual([]);
    expectError(await bob.api.get(`/api/v1/files/${file.id}`), 404, "not_found");
    const s = await share(alice, { fileId: file.id, email: bob.email, role: "reader" });
    expectError(
      await alice.api.request("PATCH", `/api/v1/shares/${s.id}`, { json: {} }),
      400,
      "validation_failed",
    );
    expectError(
      await alice.api.request("PATCH", `/api/v1/shares/${s.id}`, { json: { role: "admin" } }),
      400,
      "validation_failed",
    );
    expect((await alice.api.get(`/api/v1/shares/${s.id}`)).body.share.role).toBe("reader");
  });

  it("needs the shares scopes", async () => {
    const limited = await t.user(undefined, ["files:read", "files:write"]);
    const file = await mkfile(limited, { name: "scoped.md" });
    expectError(
      await limited.api.post("/api/v1/shares", { fileId: file.id, email: bob.email, role: "reader" }),
      403,
      "insufficient_scope",
    );
    expectError(await limited.api.get("/api/v1/shares"), 403, "insufficient_scope");
  });

  it("an expired share gives no access", async () => {
    const file = await mkfile(alice, { name: "s7.md" });
    const s = await share(alice, {
      fileId: file.id,
      email: bob.email,
      role: "reader",
      expiresAt: new Date(Date.now() + 1500).toISOString(),
    });
    expect(s.expiresAt).toBeTruthy();
    expect((await bob.api.get(`/api/v1/files/${file.id}`)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1600));
    expectError(await bob.api.get(`/api/v1/files/${file.id}`), 404, "not_found");
  });
});

describe("share a folder", () => {
  it("its files and subfolders, present and future, inherit the share", async () => {
    const top = await mkdir(alice, { name: "Team" });
    const sub = await mkdir(alice, { name: "skills", parentFolderId: top.id });
    const before = await mkfile(alice, { name: "before.md", folderId: sub.id, content: "b" });
    const res = await alice.api.post(`/api/v1/folders/${top.id}/share`, { email: bob.email, role: "writer" });
    expect(res.status, res.text).toBe(201);
    expect(res.body.share).toMatchObject({ resourceType: "folder", resourceId: top.id, role: "writer" });
    const after = await mkfile(alice, { name: "after.md", folderId: sub.id, content: "a" });
    for (const f of [before, after]) {
      expect((await bob.api.get(`/api/v1/files/${f.id}`)).body).toMatchObject({
        access: "shared",
        role: "writer",
      });
    }
    const folders = (await bob.api.get("/api/me/folders")).body.folders;
    expect(ids(folders)).toEqual(expect.arrayContaining([top.id, sub.id]));
    // the writer may create in the shared folder; the file belongs to the folder's owner
    const made = await bob.api.post("/api/v1/files", { name: "by-bob.md", folderId: sub.id });
    expect(made.status, made.text).toBe(201);
    expect(made.body.file).toMatchObject({ access: "shared", role: "writer" });
    expect((await alice.api.get(`/api/v1/files/${made.body.file.id}`)).body.role).toBe("owner");
    // inherited shares are listed on the file with where they come from
    const onFile = (await bob.api.get(`/api/v1/shares?fileId=${before.id}`)).body.shares;
    expect(onFile).toEqual([expect.objectContaining({ inherited: true, inheritedFrom: top.id })]);
    // carol: nothing
    expectError(await carol.api.get(`/api/v1/files/${after.id}`), 404, "not_found");
    expectError(await carol.api.get(`/api/v1/folders/${top.id}`), 404, "not_found");
  });

  it("a reader of a folder cannot write inside it; a stronger file share wins", async () => {
    const dir = await mkdir(alice, { name: "ReadOnly" });
    const f1 = await mkfile(alice, { name: "r1.md", folderId: dir.id, content: "1" });
    const f2 = await mkfile(alice, { name: "r2.md", folderId: dir.id, content: "2" });
    await alice.api.post(`/api/me/folders/${dir.id}/share`, { email: bob.email, role: "reader" });
    await share(alice, { fileId: f2.id, email: bob.email, role: "writer" });
    expectError(await bob.api.put(`/api/v1/files/${f1.id}`, { content: "x" }), 403, "read_only_access");
    expectError(
      await bob.api.post("/api/v1/files", { name: "n.md", folderId: dir.id }),
      403,
      "read_only_access",
    );
    expect((await bob.api.put(`/api/v1/files/${f2.id}`, { content: "22" })).status).toBe(200);
    expect((await alice.api.get(`/api/v1/files/${f1.id}`)).body.content).toBe("1");
  });

  it("folder share needs the owner; a writer of the folder gets 403 owner_only", async () => {
    const dir = await mkdir(alice, { name: "W" });
    await alice.api.post(`/api/v1/folders/${dir.id}/share`, { email: bob.email, role: "writer" });
    expectError(
      await bob.api.post(`/api/v1/folders/${dir.id}/share`, { email: carol.email, role: "reader" }),
      403,
      "owner_only",
    );
    expectError(
      await carol.api.post(`/api/v1/folders/${dir.id}/share`, { email: carol.email, role: "reader" }),
      404,
      "not_found",
    );
    expectError(
      await alice.api.post(`/api/v1/folders/${dir.id}/share`, { email: carol.email, role: "boss" }),
      400,
      "validation_failed",
    );
    expect((await alice.api.get(`/api/v1/shares?folderId=${dir.id}`)).body.shares).toHaveLength(1);
  });
});

describe("pending shares", () => {
  it("a share to an email with no account waits as pending and activates when the account exists", async () => {
    const file = await mkfile(alice, { name: "p.md", content: "for dan" });
    const email = `dan-${Date.now()}@example.com`;
    const s = await share(alice, { fileId: file.id, email, role: "reader" });
    expect(s).toMatchObject({ status: "pending", grantee: { userId: null, email } });
    const granted = (await alice.api.get("/api/v1/shares?direction=granted")).body.shares;
    expect(granted.find((x: any) => x.id === s.id)).toMatchObject({
      status: "pending",
      direction: "granted",
    });
    const dan = await t.user(email);
    const read = await dan.api.get(`/api/v1/files/${file.id}`);
    expect(read.body).toMatchObject({ content: "for dan", role: "reader" });
    expect((await dan.api.get(`/api/v1/shares/${s.id}`)).body.share).toMatchObject({
      status: "active",
      grantee: { userId: dan.id },
    });
    const received = (await dan.api.get("/api/v1/shares?direction=received")).body.shares;
    expect(ids(received)).toEqual([s.id]);
    // the new account's feed starts with what was shared
    const feed = (await dan.api.get("/api/v1/changes?cursor=0")).body.changes;
    expect(feed.map((c: any) => `${c.kind}:${c.id}`)).toEqual(
      expect.arrayContaining([`file:${file.id}`, `share:${s.id}`]),
    );
  });

  it("createUser activates pending shares in the same transaction", async () => {
    const file = await mkfile(alice, { name: "p2.md" });
    const email = `erin-${Date.now()}@example.com`;
    await share(alice, { fileId: file.id, email, role: "writer" });
    const erin = await t.server.store.transaction((tx) => createUser(tx, email));
    const shares = await t.server.store.read((tx) =>
      tx.shares.activeForGrantee(erin.id, new Date().toISOString()),
    );
    expect(shares.map((s) => s.resource_id)).toEqual([file.id]);
  });
});

describe("share events in the change feed", () => {
  it("sharing publishes the items and the share to the grantee; revoking leaves access_revoked tombstones", async () => {
    const dir = await mkdir(alice, { name: "Feed" });
    const f = await mkfile(alice, { name: "fe.md", folderId: dir.id });
    const head = (await bob.api.get("/api/v1/changes?cursor=latest")).body.cursor;
    const res = await alice.api.post(`/api/v1/folders/${dir.id}/share`, { email: bob.email, role: "reader" });
    const shareId = res.body.share.id;
    const page = (await bob.api.get(`/api/v1/changes?cursor=${head}`)).body.changes;
    // the share first (who shared), then the items, parents before children
    expect(page.map((c: any) => `${c.kind}:${c.id}:${c.deleted}`)).toEqual([
      `share:${shareId}:false`,
      `folder:${dir.id}:false`,
      `file:${f.id}:false`,
    ]);
    expect(page[0].share).toMatchObject({ ownerId: alice.id, ownerEmail: alice.email });
    expect(page[2].file).toMatchObject({ role: "reader", access: "shared", ownerId: alice.id });
    const aliceFeed = (await alice.api.get(`/api/v1/changes?cursor=${res.body.seq - 1}`)).body.changes;
    expect(aliceFeed.map((c: any) => c.kind)).toEqual(["share"]);
    const mid = (await bob.api.get("/api/v1/changes?cursor=latest")).body.cursor;
    await alice.api.delete(`/api/v1/shares/${shareId}`);
    const gone = (await bob.api.get(`/api/v1/changes?cursor=${mid}`)).body.changes;
    expect(gone.map((c: any) => `${c.kind}:${c.id}:${c.reason}`)).toEqual([
      `share:${shareId}:revoked`,
      `folder:${dir.id}:access_revoked`,
      `file:${f.id}:access_revoked`,
    ]);
  });

  it("deleting a shared folder tells the grantee: the share goes, and the children it reached", async () => {
    const top = await mkdir(alice, { name: "Gone" });
    const sub = await mkdir(alice, { name: "sub", parentFolderId: top.id });
    const child = await mkfile(alice, { name: "child.md", folderId: top.id });
    const deep = await mkfile(alice, { name: "deep.md", folderId: sub.id });
    const s = await alice.api.post(`/api/v1/folders/${top.id}/share`, { email: bob.email, role: "reader" });
    const head = (await bob.api.get("/api/v1/changes?cursor=latest")).body.cursor;
    expect((await alice.api.delete(`/api/v1/folders/${top.id}`)).status).toBe(200);
    const feed = (await bob.api.get(`/api/v1/changes?cursor=${head}`)).body.changes;
    const seen = new Map(feed.map((c: any) => [`${c.kind}:${c.id}`, c.reason]));
    expect(seen.get(`share:${s.body.share.id}`)).toBe("revoked");
    expect(seen.get(`folder:${top.id}`)).toBe("deleted");
    expect(seen.get(`folder:${sub.id}`)).toBe("access_revoked");
    expect(seen.get(`file:${child.id}`)).toBe("access_revoked");
    expect(seen.get(`file:${deep.id}`)).toBe("access_revoked");
    for (const id of [child.id, deep.id])
      expectError(await bob.api.get(`/api/v1/files/${id}`), 404, "not_found");
    expect(
      (await bob.api.get("/api/v1/shares?direction=received")).body.shares.map((x: any) => x.id),
    ).not.toContain(s.body.share.id);
  });

  it("deleting a shared file tombstones its share records", async () => {
    const f = await mkfile(alice, { name: "bye.md" });
    const s = await share(alice, { fileId: f.id, email: bob.email, role: "writer" });
    const head = (await bob.api.get("/api/v1/changes?cursor=latest")).body.cursor;
    await alice.api.delete(`/api/v1/files/${f.id}`);
    const feed = (await bob.api.get(`/api/v1/changes?cursor=${head}`)).body.changes;
    expect(feed.map((c: any) => `${c.kind}:${c.reason}`)).toEqual(["share:revoked", "file:deleted"]);
    expect(feed[0].id).toBe(s.id);
  });
});

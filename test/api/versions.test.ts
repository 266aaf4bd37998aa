import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  expectError,
  mkfile,
  mkSharedFile,
  startTestServer,
  type TestServer,
  type TestUser,
} from "../helpers/server.ts";

let t: TestServer;
let alice: TestUser;
let bob: TestUser; // reader
let carol: TestUser; // writer
let dave: TestUser; // no access

beforeAll(async () => {
  t = await startTestServer();
  alice = await t.user();
  bob = await t.user();
  carol = await t.user();
  dave = await t.user();
});
afterAll(() => t.close());

const sharedFile = (name: string, content: string) => mkSharedFile(alice, bob, carol, { name, content });

describe("versions", () => {
  it("every content change is a version with number, hash, size, author and source", async () => {
    const file = await sharedFile("v.md", "one");
    await alice.api.put(`/api/v1/files/${file.id}`, { content: "two two" });
    await carol.api.put(`/api/v1/files/${file.id}`, { content: "three é" });
    await alice.api.put(`/api/v1/files/${file.id}`, { tags: ["meta-only"] }); // no new version
    const res = await bob.api.get(`/api/v1/files/${file.id}/versions`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.currentVersion).toBe(3);
    const vs = res.body.versions;
    expect(vs.map((v: any) => v.version_number)).toEqual([3, 2, 1]);
    expect(vs[0]).toMatchObject({
      file_id: file.id,
      byte_size: Buffer.byteLength("three é"),
      author_user_id: carol.id,
      author_name: expect.any(String),
      source: "api",
      label: null,
      commit_id: null,
      current: true,
    });
    expect(vs[0].content_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(vs[0]).not.toHaveProperty("content"); // listings never carry bodies
    expect(vs[2].author_user_id).toBe(alice.id);
    const one = await bob.api.get(`/api/v1/files/${file.id}/versions/2`);
    expect(one.body.version).toMatchObject({ version_number: 2, content: "two two", current: false });
    const me = await bob.api.get(`/api/me/files/${file.id}/versions/1`);
    expect(me.body.version.content).toBe("one");
  });

  it("pages with limit and before", async () => {
    const file = await mkfile(alice, { name: "paged.md", content: "0" });
    for (let i = 1; i <= 4; i++) await alice.api.put(`/api/v1/files/${file.id}`, { content: String(i) });
    const p1 = (await alice.api.get(`/api/v1/files/${file.id}/versions?limit=2`)).body;
    expect(p1.versions.map((v: any) => v.version_number)).toEqual([5, 4]);
    expect(p1).toMatchObject({ hasMore: true, nextBefore: 4 });
    const p2 = (await alice.api.get(`/api/v1/files/${file.id}/versions?limit=2&before=4`)).body;
    expect(p2.versions.map((v: any) => v.version_number)).toEqual([3, 2]);
    const p3 = (await alice.api.get(`/api/v1/files/${file.id}/versions?limit=2&before=2`)).body;
    expect(p3).toMatchObject({ hasMore: false, nextBefore: null });
  });

  it("commit labels the current (or a given) version; a reader cannot; the label is in the feed", async () => {
    const file = await sharedFile("c.md", "draft");
    await alice.api.put(`/api/v1/files/${file.id}`, { content: "final" });
    const head = (await bob.api.get("/api/v1/changes?cursor=latest")).body.cursor;
    const res = await carol.api.post(`/api/v1/files/${file.id}/versions`, { label: "release 1" });
    expect(res.status, res.text).toBe(201);
    expect(res.body.version).toMatchObject({ version_number: 2, label: "release 1", current: true });
    expect(res.body.version.commit_id).toMatch(/^c_/);
    const older = await alice.api.post(`/api/v1/files/${file.id}/versions`, {
      label: "draft",
      versionNumber: 1,
    });
    expect(older.body.version).toMatchObject({ version_number: 1, label: "draft" });
    expectError(
      await bob.api.post(`/api/v1/files/${file.id}/versions`, { label: "nope" }),
      403,
      "read_only_access",
    );
    expectError(await dave.api.post(`/api/v1/files/${file.id}/versions`, { label: "x" }), 404, "not_found");
    const feed = (await bob.api.get(`/api/v1/changes?cursor=${head}`)).body.changes;
    expect(feed.filter((c: any) => c.kind === "version").map((c: any) => c.version.label)).toEqual([
      "release 1",
      "draft",
    ]);
    expect(feed[0]).toMatchObject({ kind: "version", fileId: file.id });
  });

  it("bad input and unknown versions get the error body and change nothing", async () => {
    const file = await mkfile(alice, { name: "bad.md", content: "x" });
    const base = `/api/v1/files/${file.id}/versions`;
    expectError(await alice.api.post(base, { label: "" }), 400, "validation_failed");
    expectError(await alice.api.post(base, { label: "x".repeat(101) }), 400, "validation_failed");
    expectError(await alice.api.post(base, { label: "a\nb" }), 400, "validation_failed");
    expectError(await alice.api.post(base, {}), 400, "validation_failed");
    expectError(await alice.api.post(base, { label: "ok", versionNumber: 9 }), 404, "version_not_found");
    expectError(await alice.api.get(`${base}/9`), 404, "version_not_found");
    expectError(await alice.api.get(`${base}/abc`), 400, "validation_failed");
    expectError(await alice.api.get(`${base}/0`), 400, "validation_failed");
    expectError(await alice.api.post(`${base}/9/restore`), 404, "version_not_found");
    expectError(await dave.api.get(base), 404, "not_found");
    expect((await alice.api.get(base)).body.versions).toEqual([
      expect.objectContaining({ version_number: 1, label: null }),
    ]);
  });

  it("restore makes a new version with the old text; If-Match guards it; readers cannot", async () => {
    const file = await sharedFile("r.md", "first");
    const v2 = await alice.api.put(`/api/v1/files/${file.id}`, { content: "second" });
    expectError(await bob.api.post(`/api/v1/files/${file.id}/versions/1/restore`), 403, "read_only_access");
    expectError(
      await carol.api.post(`/api/v1/files/${file.id}/versions/1/restore`, undefined, {
        "if-match": file.etag,
      }),
      412,
      "precondition_failed",
    );
    expect((await alice.api.get(`/api/v1/files/${file.id}`)).body.content).toBe("second");
    const res = await carol.api.post(`/api/v1/files/${file.id}/versions/1/restore`, undefined, {
      "if-match": v2.body.file.etag,
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ restored: true, restoredFrom: 1, file: { content: "first" } });
    expect(res.headers.get("etag")).toBe(res.body.file.etag);
    const vs = (await alice.api.get(`/api/v1/files/${file.id}/versions`)).body.versions;
    expect(vs[0]).toMatchObject({ version_number: 3, source: "restore", author_user_id: carol.id });
    // restoring the text that is already current makes no new version
    const same = await alice.api.post(`/api/v1/files/${file.id}/versions/3/restore`);
    expect(same.body.restored).toBe(false);
    expect((await alice.api.get(`/api/v1/files/${file.id}/versions`)).body.versions).toHaveLength(3);
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
let bob: TestUser; // writer of alice's folder
let carol: TestUser; // reader

beforeAll(async () => {
  t = await startTestServer();
  alice = await t.user();
  bob = await t.user();
  carol = await t.user();
});
afterAll(() => t.close());

describe("theme", () => {
  it("the account default starts at `default`, saves with the current revision, 409 when stale", async () => {
    const first = await alice.api.get("/api/v1/theme");
    expect(first.status, first.text).toBe(200);
    expect(first.body.theme).toMatchObject({
      scope: "account",
      scopeId: alice.id,
      themeId: "default",
      overrides: {},
      revision: 0,
      inherited: true,
      inheritedFrom: null,
    });
    expect(first.headers.get("etag")).toBe('"theme-account-0"');
    const saved = await alice.api.put("/api/v1/theme", {
      themeId: "solarized-dark",
      overrides: { fontSize: 15, accent: "#268bd2", ligatures: false },
      revision: 0,
    });
    expect(saved.status, saved.text).toBe(200);
    expect(saved.body.theme).toMatchObject({
      themeId: "solarized-dark",
      overrides: { fontSize: 15, accent: "#268bd2", ligatures: false },
      revision: 1,
      updatedBy: alice.id,
      inherited: false,
    });
    const stale = expectError(
      await alice.api.put("/api/v1/theme", { themeId: "light", revision: 0 }),
      409,
      "revision_conflict",
    );
    expect(stale.details).toEqual({ currentRevision: 1 });
    expectError(
      await alice.api.put(
        "/api/v1/theme",
        { themeId: "light", revision: 1 },
        { "if-match": '"theme-account-0"' },
      ),
      412,
      "precondition_failed",
    );
    expect((await alice.api.get("/api/me/theme")).body.theme).toMatchObject({
      themeId: "solarized-dark",
      revision: 1,
    });
    // each account has its own default
    expect((await bob.api.get("/api/v1/theme")).body.theme.themeId).toBe("default");
  });

  it("file and folder themes inherit (file -> folders -> account) until set", async () => {
    const dir = await mkdir(alice, { name: "Themed" });
    const sub = await mkdir(alice, { name: "Sub", parentFolderId: dir.id });
    const file = await mkfile(alice, { name: "t.md", folderId: sub.id });
    const fileTheme = (await alice.api.get(`/api/v1/theme?fileId=${file.id}`)).body.theme;
    expect(fileTheme).toMatchObject({
      scope: "file",
      themeId: "solarized-dark",
      inherited: true,
      revision: 0,
    });
    expect(fileTheme.inheritedFrom).toEqual({ scope: "account", id: alice.id });
    await alice.api.put(`/api/v1/theme?folderId=${dir.id}`, { themeId: "paper", revision: 0 });
    expect((await alice.api.get(`/api/v1/theme?fileId=${file.id}`)).body.theme).toMatchObject({
      themeId: "paper",
      inheritedFrom: { scope: "folder", id: dir.id },
    });
    const own = await alice.api.put(`/api/v1/theme?fileId=${file.id}`, { themeId: "mono", revision: 0 });
    expect(own.body.theme).toMatchObject({ scope: "file", themeId: "mono", revision: 1, inherited: false });
  });

  it("folder settings need the owner; file settings a writer; no access is 404", async () => {
    const dir = await mkdir(alice, { name: "Shared theme" });
    const file = await mkfile(alice, { name: "w.md", folderId: dir.id });
    await alice.api.post(`/api/v1/folders/${dir.id}/share`, { email: bob.email, role: "writer" });
    await alice.api.post("/api/v1/shares", { fileId: file.id, email: carol.email, role: "reader" });
    expectError(
      await bob.api.put(`/api/v1/theme?folderId=${dir.id}`, { themeId: "x", revision: 0 }),
      403,
      "owner_only",
    );
    expect(
      (await bob.api.put(`/api/v1/theme?fileId=${file.id}`, { themeId: "bobs", revision: 0 })).status,
    ).toBe(200);
    expectError(
      await carol.api.put(`/api/v1/theme?fileId=${file.id}`, { themeId: "x", revision: 1 }),
      403,
      "read_only_access",
    );
    expect((await carol.api.get(`/api/v1/theme?fileId=${file.id}`)).body.theme.themeId).toBe("bobs");
    const stranger = await t.user();
    expectError(await stranger.api.get(`/api/v1/theme?fileId=${file.id}`), 404, "not_found");
    expectError(await stranger.api.get(`/api/v1/theme?folderId=${dir.id}`), 404, "not_found");
    expectError(await alice.api.get("/api/v1/theme?groupId=g_1"), 404, "not_found");
    expect((await alice.api.get(`/api/v1/theme?folderId=${dir.id}`)).body.theme.revision).toBe(0);
  });

  it("bad input gets the error body and changes nothing", async () => {
    const user = await t.user();
    const file = await mkfile(user, { name: "b.md" });
    const bad: [string, Record<string, unknown>][] = [
      ["/api/v1/theme", { themeId: "", revision: 0 }],
      ["/api/v1/theme", { themeId: "has space", revision: 0 }],
      ["/api/v1/theme", { themeId: "x".repeat(65), revision: 0 }],
      ["/api/v1/theme", { themeId: "ok" }],
      ["/api/v1/theme", { themeId: "ok", revision: -1 }],
      ["/api/v1/theme", { themeId: "ok", revision: 0, overrides: [1] }],
      ["/api/v1/theme", { themeId: "ok", revision: 0, overrides: { a: { nested: 1 } } }],
      ["/api/v1/theme", { themeId: "ok", revision: 0, overrides: { a: "x".repeat(257) } }],
      ["/api/v1/theme", { themeId: "ok", revision: 0, extra: 1 }],
      [`/api/v1/theme?fileId=${file.id}&folderId=d_1`, { themeId: "ok", revision: 0 }],
    ];
    for (const [path, body] of bad) expectError(await user.api.put(path, body), 400, "validation_failed");
    expectError(await user.api.get(`/api/v1/theme?fileId=${file.id}&groupId=g`), 400, "validation_failed");
    expect((await user.api.get("/api/v1/theme")).body.theme).toMatchObject({
      themeId: "default",
      revision: 0,
    });
    expect((await user.api.get(`/api/v1/theme?fileId=${file.id}`)).body.theme.revision).toBe(0);
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, mkfile, startTestServer, type TestServer, type TestUser } from "../helpers/server.ts";

let t: TestServer;
let alice: TestUser;
let bob: TestUser; // reader
let carol: TestUser; // writer

beforeAll(async () => {
  t = await startTestServer();
  alice = await t.user();
  bob = await t.user();
  carol = await t.user();
});
afterAll(() => t.close());

describe("temporary URLs", () => {
  it("mints an unguessable link that serves the raw text without credentials", async () => {
    const file = await mkfile(alice, { name: "pub.md", content: "# Public\n" });
    const res = await alice.api.post(`/api/v1/files/${file.id}/share`, {});
    expect(res.status, res.text).toBe(201);
    const tu = res.body.tempUrl;
    expect(tu).toMatchObject({ fileId: file.id, status: "active", createdBy: alice.id, revokedAt: null });
    expect(tu.token).toMatch(/^[0-9A-Za-z]{43}$/); // 43 base62 characters: 256 bits
    expect(tu.url).toBe(`${t.url}/t/${tu.token}`);
    const ttl = Date.parse(tu.expiresAt) - Date.parse(tu.createdAt);
    expect(ttl).toBe(3600_000);
    const anon = await fetch(tu.url);
    expect(anon.status).toBe(200);
    expect(await anon.text()).toBe("# Public\n");
    expect(anon.headers.get("content-type")).toBe("text/markdown; charset=utf-8");
    expect(anon.headers.get("cache-control")).toBe("private, no-store");
    expect(anon.headers.get("referrer-policy")).toBe("no-referrer");
    const etag = anon.headers.get("etag")!;
    expect(etag).toBe(file.etag);
    expect((await fetch(tu.url, { headers: { "if-none-match": etag } })).status).toBe(304);
    // it follows the live text
    await alice.api.put(`/api/v1/files/${file.id}`, { content: "changed" });
    expect(await (await fetch(tu.url)).text()).toBe("changed");
    // the token is stored only as a hash: not in listings
    const list = await alice.api.get(`/api/v1/files/${file.id}/share`);
    expect(list.body.tempUrls).toEqual([expect.objectContaining({ id: tu.id, status: "active" })]);
    expect(list.text).not.toContain(tu.token);
  });

  it("revoked -> 410 temp_url_revoked; unknown -> 404; expiry is validated", async () => {
    const file = await mkfile(alice, { name: "rev.txt", content: "plain" });
    const tu = (await alice.api.post(`/api/v1/files/${file.id}/share`, { expiresIn: 60 })).body.tempUrl;
    const anon = t.client();
    expect((await anon.get(`/t/${tu.token}`)).headers.get("content-type")).toBe("text/plain; charset=utf-8");
    const del = await alice.api.delete(`/api/v1/files/${file.id}/share/${tu.id}`);
    expect(del.body.tempUrl).toMatchObject({ status: "revoked" });
    expectError(await anon.get(`/t/${tu.token}`), 410, "temp_url_revoked");
    expectError(await anon.get(`/t/${"x".repeat(43)}`), 404, "not_found");
    expectError(await anon.get("/t/short"), 404, "not_found");
    for (const expiresIn of [0, 59, 604801, -5]) {
      expectError(
        await alice.api.post(`/api/v1/files/${file.id}/share`, { expiresIn }),
        400,
        "validation_failed",
      );
    }
    expectError(
      await alice.api.post(`/api/v1/files/${file.id}/share`, { expiresIn: "1h" }),
      400,
      "validation_failed",
    );
    expectError(await alice.api.post(`/api/v1/files/${file.id}/share`, { ttl: 5 }), 400, "validation_failed");
    expect((await alice.api.get(`/api/v1/files/${file.id}/share`)).body.tempUrls).toHaveLength(1);
  });

  it("an expired link answers 410 temp_url_expired", async () => {
    const file = await mkfile(alice, { name: "exp.md", content: "soon gone" });
    const tu = (await alice.api.post(`/api/v1/files/${file.id}/share`, { expiresIn: 60 })).body.tempUrl;
    // Age the link in the store rather than waiting a minute.
    await t.server.store.transaction((tx) =>
      (tx as any).tempUrls.sql.run("UPDATE temp_urls SET expires_at = ? WHERE id = ?", [
        new Date(Date.now() - 1000).toISOString(),
        tu.id,
      ]),
    );
    expectError(await t.client().get(`/t/${tu.token}`), 410, "temp_url_expired");
  });

  it("writers may mint, readers and strangers may not; a deleted file's link is gone", async () => {
    const file = await mkfile(alice, { name: "roles.md", content: "r" });
    await alice.api.post("/api/v1/shares", { fileId: file.id, email: bob.email, role: "reader" });
    const share = await alice.api.post("/api/v1/shares", {
      fileId: file.id,
      email: carol.email,
      role: "writer",
    });
    expectError(await bob.api.post(`/api/v1/files/${file.id}/share`, {}), 403, "read_only_access");
    const stranger = await t.user();
    expectError(await stranger.api.post(`/api/v1/files/${file.id}/share`, {}), 404, "not_found");
    const tu = (await carol.api.post(`/api/v1/files/${file.id}/share`, {})).body.tempUrl;
    expect((await t.client().get(`/t/${tu.token}`)).text).toBe("r");
    // when its creator loses access, the link dies with it
    await alice.api.delete(`/api/v1/shares/${share.body.share.id}`);
    expectError(await t.client().get(`/t/${tu.token}`), 410, "temp_url_revoked");
    const minted = await alice.api.post(`/api/v1/files/${file.id}/share`);
    expect(minted.status, minted.text).toBe(201);
    const mine = minted.body.tempUrl;
    await alice.api.delete(`/api/v1/files/${file.id}`);
    expectError(await t.client().get(`/t/${mine.token}`), 404, "not_found");
  });
});

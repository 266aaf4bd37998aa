// POST /api/me/session/link and GET /auth/link on both stores: an all-scopes API key gets a link
// whose first use sets a working session for its user; an OAuth access token (whatever it was
// granted) and bad bodies get none; the session still authorizes no file operation.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signIn } from "../helpers/oidc.ts";
import { expectError, startTestServer, type TestServer, type TestUser } from "../helpers/server.ts";

let t: TestServer;
let me: TestUser;

beforeAll(async () => {
  // An identity provider is configured too: links work beside it.
  t = await startTestServer({ devIdp: {} });
  me = await t.user();
});
afterAll(async () => {
  await t.close();
});

describe("one-time sign-in links", () => {
  it("a link's first use opens a session of the key's user, redirected to the page without the token", async () => {
    const minted = await me.api.post("/api/me/session/link", { page: "dashboard" });
    expect(minted.status).toBe(201);
    expect(minted.headers.get("cache-control")).toBe("no-store");
    expect(minted.body).toMatchObject({ page: "dashboard", url: `${t.url}${minted.body.path}` });
    expect(Date.parse(minted.body.expiresAt) - Date.now()).toBeLessThanOrEqual(60_000);
    const opened = await fetch(t.url + minted.body.path, { redirect: "manual" });
    expect(opened.status).toBe(303);
    expect(opened.headers.get("location")).toBe("/dashboard");
    const cookie = /^session=(\w+)/.exec(opened.headers.get("set-cookie") ?? "")![1]!;
    const session = await fetch(`${t.url}/api/me/session`, { headers: { cookie: `session=${cookie}` } });
    expect(session.status).toBe(200);
    expect(((await session.json()) as { user: { email: string } }).user.email).toBe(me.email);
    // The session manages keys; it still authorizes no file operation.
    const files = await fetch(`${t.url}/api/me/files`, { headers: { cookie: `session=${cookie}` } });
    expect(files.status).toBe(401);
    expect(((await files.json()) as { error: { code: string } }).error.code).toBe("session_not_accepted");
  });

  it("an OAuth access token gets no link (403), whatever its scopes", async () => {
    const tokens = await signIn({ issuer: `${t.url}/dev-idp`, user: "alice", password: "alice-password" });
    const e = expectError(
      await t.client(tokens.access_token).post("/api/me/session/link", {}),
      403,
      "insufficient_scope",
    );
    expect(e.message).toBe("A sign-in link is made for an API key, not an OAuth access token.");
  });

  it("a page it does not know, a lifetime over 60 s or an unknown field is 400", async () => {
    for (const body of [
      { page: "admin" },
      { expiresIn: 61 },
      { expiresIn: 0 },
      { next: "https://example.com" },
    ])
      expectError(await me.api.post("/api/me/session/link", body), 400, "validation_failed");
  });

  it("a malformed or unknown token is 400 sign_in_failed and sets no cookie", async () => {
    for (const token of ["short", "a".repeat(43), `${"b".repeat(43)}%00`]) {
      const res = await fetch(`${t.url}/auth/link?token=${token}`, { redirect: "manual" });
      expect(res.status, token).toBe(400);
      expect(res.headers.get("set-cookie"), token).toBeNull();
    }
  });
});

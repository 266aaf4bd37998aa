// OAuth access tokens from the (real, in-process) dev identity provider: verification, the account
// they map to, the scopes they grant, and every way a token is refused.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startStandaloneDevIdp } from "../../src/server/identity/devIdp.ts";
import { authorize, keyPageSignIn, signIn, tokenRequest } from "../helpers/oidc.ts";
import { expectError, startTestServer, type TestServer } from "../helpers/server.ts";

let srv: TestServer;
let issuer: string;
const userCount = () => srv.server.store.read(async (tx) => (await tx.users.list()).length);
const fileCount = () =>
  // The repositories have no count, so the test reads their executor (any: a private field).
  srv.server.store.read(async (tx) =>
    Number((await (tx as any).files.sql.get("SELECT COUNT(*) AS n FROM files")).n),
  );

beforeAll(async () => {
  srv = await startTestServer({ devIdp: {} });
  issuer = `${srv.url}/dev-idp`;
});
afterAll(() => srv?.close());

describe("a valid access token", () => {
  test("creates the account on first use and shows the identity in GET /api/me", async () => {
    const t = await signIn({ issuer, user: "alice", password: "alice-password" });
    const me = await srv.client(t.access_token).get("/api/me");
    expect(me.status).toBe(200);
    expect(me.body.user.email).toBe("alice@dev.txtfs.test");
    expect(me.body.identity).toMatchObject({
      provider: "dev",
      issuer,
      subject: "alice",
      username: "alice",
      status: "verified",
      verificationError: null,
      wallet: {
        address: "0x00000000000000000000000000000000000a11ce",
        chainType: "evm",
        network: "sepolia",
        walletType: "embedded",
      },
    });
    expect(Date.parse(me.body.identity.verifiedAt)).toBeGreaterThan(0);
    // A second sign-in maps to the same account (issuer + subject), not a new one.
    const before = await userCount();
    const t2 = await signIn({ issuer, user: "alice", password: "alice-password" });
    const me2 = await srv.client(t2.access_token).get("/api/me");
    expect(me2.body.user.id).toBe(me.body.user.id);
    expect(await userCount()).toBe(before);
    // and it writes files
    const created = await srv
      .client(t2.access_token)
      .post("/api/v1/files", { name: "from-oauth.md", content: "# hi" });
    expect(created.status).toBe(201);
  });

  test("a local user (API key) has identity null", async () => {
    const u = await srv.user();
    const me = await u.api.get("/api/me");
    expect(me.status).toBe(200);
    expect(me.body.identity).toBeNull();
  });

  test("OAuth scopes map to the routes' key scopes", async () => {
    const t = await signIn({ issuer, user: "bob", password: "bob-password", scope: "openid files:read" });
    expect(t.scope).toBe("files:read");
    const api = srv.client(t.access_token);
    expect((await api.get("/api/me/files")).status).toBe(200);
    expect((await api.get("/api/me/folders")).status).toBe(200); // folders:read comes with files:read
    const before = await fileCount();
    const denied = await api.post("/api/v1/files", { name: "nope.md", content: "x" });
    expectError(denied, 403, "insufficient_scope");
    expect(denied.headers.get("www-authenticate")).toContain('scope="files:write"');
    expectError(await api.post("/api/v1/folders", { name: "nope" }), 403, "insufficient_scope");
    expect(await fileCount()).toBe(before);
  });
});

describe("the context brain's OAuth scopes", () => {
  test("context:read reads the brain's state; ideation needs context:write (ai:use)", async () => {
    const t = await signIn({
      issuer,
      user: "carol",
      password: "carol-password",
      scope: "openid context:read",
    });
    const api = srv.client(t.access_token);
    expect((await api.get("/api/me/context")).status).toBe(200);
    expect((await api.get("/api/me/ideation")).status).toBe(200);
    const denied = await api.post("/api/me/ideation", { seed: "x" });
    expectError(denied, 403, "insufficient_scope");
    expect(denied.headers.get("www-authenticate")).toContain('scope="ai:use"');
    const w = await signIn({
      issuer,
      user: "carol",
      password: "carol-password",
      scope: "openid context:write files:write",
    });
    // context:write grants ai:use (and files:write the note): past the scopes, a free plan without a key is 402.
    expectError(
      await srv.client(w.access_token).post("/api/me/ideation", { seed: "x" }),
      402,
      "ai_key_required",
    );
  });
});

describe("refused tokens", () => {
  test("a token for another audience is 401 invalid_token and creates nothing", async () => {
    const t = await signIn({
      issuer,
      user: "carol",
      password: "carol-password",
      resource: "urn:example:other-api",
    });
    const before = await userCount();
    const res = await srv.client(t.access_token).get("/api/me");
    const e = expectError(res, 401, "invalid_token");
    expect(e.message).toContain("aud");
    expect(res.headers.get("www-authenticate")).toContain('error="invalid_token"');
    expect(await userCount()).toBe(before);
  });

  test("a token from another issuer is 401 invalid_token", async () => {
    const other = await startStandaloneDevIdp();
    try {
      const t = await signIn({ issuer: other.idp.issuer, user: "alice", password: "alice-password" });
      const before = await userCount();
      const fb = await fileCount();
      const res = await srv
        .client(t.access_token)
        .post("/api/v1/files", { name: "foreign.md", content: "x" });
      expectError(res, 401, "invalid_token");
      expect(await userCount()).toBe(before);
      expect(await fileCount()).toBe(fb);
    } finally {
      await other.close();
    }
  });

  test("a tampered token is 401 invalid_token", async () => {
    const t = await signIn({ issuer, user: "alice", password: "alice-password" });
    const [h, p, s] = t.access_token.split(".");
    const claims = JSON.parse(Buffer.from(p!, "base64url").toString());
    claims.sub = "bob";
    const forged = `${h}.${Buffer.from(JSON.stringify(claims)).toString("base64url")}.${s}`;
    expectError(await srv.client(forged).get("/api/me"), 401, "invalid_token");
    expectError(await srv.client("not-a-key-nor-a-jwt").get("/api/me"), 401, "invalid_api_key");
  });

  test("the provider refuses a wrong PKCE verifier (400 invalid_grant) and issues nothing", async () => {
    const a = await authorize({ issuer, user: "alice", password: "alice-password" });
    const wrong = await tokenRequest(a.tokenEndpoint, {
      grant_type: "authorization_code",
      code: a.code,
      redirect_uri: a.redirectUri,
      code_verifier: `${a.verifier.slice(0, -4)}AAAA`,
      resource: "urn:txtfs:api",
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toBe("invalid_grant");
    expect(wrong.body.access_token).toBeUndefined();
  });

  test("the session cookie is refused on every file operation (401 session_not_accepted), nothing changes", async () => {
    const fb = await fileCount();
    for (const [method, path] of [
      ["GET", "/api/me"],
      ["GET", "/api/v1/files"],
      ["POST", "/api/v1/files"],
      ["GET", "/api/v1/changes"],
      ["GET", "/api/v1/identities"],
      ["GET", "/api/identity/realtime"],
    ] as const) {
      const res = await srv.client().request(method, path, {
        headers: { cookie: "session=abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG" },
        json: method === "POST" ? { name: "cookie.md", content: "x" } : undefined,
      });
      expectError(res, 401, "session_not_accepted");
    }
    expect(await fileCount()).toBe(fb);
  });
});

test("discover and the protected-resource metadata name the provider", async () => {
  const d = await srv.client().get("/api/v1");
  expect(d.body.authentication.oauth).toMatchObject({
    provider: "dev",
    issuer,
    clientId: "txtfs",
    audience: "urn:txtfs:api",
  });
  const verbs = d.body.verbs.map((v: any) => `${v.verb} ${v.method} ${v.path}`);
  expect(verbs).toContain("users GET /api/v1/identities");
  expect(verbs).toContain("use PATCH /api/v1/identities");
  const m = await srv.client().get("/.well-known/oauth-protected-resource");
  expect(m.status).toBe(200);
  expect(m.body).toMatchObject({ resource: "urn:txtfs:api", authorization_servers: [issuer] });
});

test("expired access tokens are 401 token_expired", async () => {
  const short = await startTestServer({ devIdp: { accessTokenTtl: 1, clockToleranceSeconds: 0 } });
  try {
    const t = await signIn({ issuer: `${short.url}/dev-idp`, user: "alice", password: "alice-password" });
    expect(t.expires_in).toBe(1);
    await new Promise((r) => setTimeout(r, 2100));
    const res = await short.client(t.access_token).get("/api/me");
    expectError(res, 401, "token_expired");
    expect(res.headers.get("www-authenticate")).toContain('error_description="expired"');
    // The refresh token gets a new access token (that refreshed tokens work is shown by txtfs
    // login's tests: a 1 s token could expire again before a loaded machine sends it).
    const r = await tokenRequest(`${short.url}/dev-idp/token`, {
      grant_type: "refresh_token",
      refresh_token: t.refresh_token!,
    });
    expect(r.status).toBe(200);
    expect(r.body.access_token).not.toBe(t.access_token);
    const claims = JSON.parse(Buffer.from(r.body.access_token.split(".")[1], "base64url").toString());
    expect(claims).toMatchObject({ sub: "alice", aud: "urn:txtfs:api" });
    expect(claims.exp).toBeGreaterThan(
      JSON.parse(Buffer.from(t.access_token.split(".")[1]!, "base64url").toString()).exp,
    );
  } finally {
    await short.close();
  }
});

test("an external provider configured by its issuer (--idp-issuer): tokens, key page and realtime", async () => {
  const idp = await startStandaloneDevIdp();
  const ext = await startTestServer({
    identity: { name: "example-idp", issuer: idp.idp.issuer, clientId: "txtfs", audience: "urn:txtfs:api" },
  });
  try {
    const t = await signIn({ issuer: idp.idp.issuer, user: "alice", password: "alice-password" });
    const me = await ext.client(t.access_token).get("/api/me");
    expect(me.status).toBe(200);
    expect(me.body.identity).toMatchObject({
      provider: "example-idp",
      issuer: idp.idp.issuer,
      subject: "alice",
    });
    const rt = await ext.client(t.access_token).get("/api/identity/realtime");
    expect(rt.body).toMatchObject({ provider: "example-idp", connectable: true });
    // This server's own dev provider is not running: its path is just an unknown route.
    expect((await ext.client().get("/dev-idp/.well-known/openid-configuration")).status).toBe(404);
    // The key page signs in at the external provider too.
    const session = await keyPageSignIn(ext.url, "bob", "bob-password");
    expect(session.user.email).toBe("bob@dev.txtfs.test");
  } finally {
    await ext.close();
    await idp.close();
  }
});

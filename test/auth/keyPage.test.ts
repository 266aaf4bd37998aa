// The key page: sign-in through the provider, the session cookie, CSRF on every change, minting,
// listing, rotating and revoking keys, the vaulted AI key, linked identities and the realtime
// capability. (The same page in a real browser: test/auth/browser.test.ts.)
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createKey } from "../../src/server/domain/accounts.ts";
import { CookieJar, jarFetch, keyPageAuthorize, keyPageSignIn, signIn } from "../helpers/oidc.ts";
import { expectError, startTestServer, type TestServer } from "../helpers/server.ts";

let srv: TestServer;
let realtimeFails = false;
beforeAll(async () => {
  srv = await startTestServer({ devIdp: { realtimeFails: () => realtimeFails } });
});
afterAll(() => srv?.close());

async function json(
  jar: CookieJar,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const res = await jarFetch(jar, srv.url + path, {
    method,
    headers: { ...(body !== undefined ? { "content-type": "application/json" } : {}), ...headers },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: text ? JSON.parse(text) : undefined };
}

async function form(jar: CookieJar, path: string, fields: Record<string, string | string[]>) {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) for (const one of [v].flat()) params.append(k, one);
  const res = await jarFetch(jar, srv.url + path, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: params.toString(),
  });
  const text = await res.text();
  const isJson = (res.headers.get("content-type") ?? "").includes("json");
  return { status: res.status, headers: res.headers, text, body: isJson ? JSON.parse(text) : text };
}

const keyCount = (userId: string) =>
  srv.server.store.read(async (tx) => (await tx.keys.listForUser(userId)).length);

describe("session and keys", () => {
  test("sign in, mint a key, use it, rotate it, revoke it, see it rejected", async () => {
    const { jar, csrf, user } = await keyPageSignIn(srv.url, "alice", "alice-password");
    const cookieLine = jar.get("session");
    expect(cookieLine).toMatch(/^[0-9A-Za-z]{43}$/);
    const page = await jarFetch(jar, `${srv.url}/keys`);
    const html = await page.text();
    expect(html).toContain("alice@dev.txtfs.test");
    expect(html).toContain(`name="_csrf" value="${csrf}"`);

    const minted = await json(
      jar,
      "POST",
      "/api/me/keys",
      { label: "laptop", scopes: ["files:read", "files:write"], expiresIn: 3600 },
      { "x-csrf-token": csrf },
    );
    expect(minted.status).toBe(201);
    expect(minted.body.secret).toMatch(/^txt_[0-9A-Za-z]{36}$/);
    expect(minted.body.key).toMatchObject({
      label: "laptop",
      scopes: ["files:read", "files:write"],
      requests_today: 0,
    });
    const key = minted.body.secret as string;
    const me = await srv.client(key).get("/api/me");
    expect(me.status).toBe(200);
    expect(me.body.user.id).toBe(user.id);
    expect(me.body.identity.subject).toBe("alice");

    const list = await json(jar, "GET", "/api/me/keys");
    const rec = list.body.keys.find((k: any) => k.id === minted.body.key.id);
    expect(rec.token_prefix).toBe(key.slice(0, 12));
    expect(JSON.stringify(list.body)).not.toContain(key); // the full key is never listed

    // Rotation without grace: the old key stops at once, the new one works.
    const rotated = await json(
      jar,
      "POST",
      `/api/me/keys/${rec.id}/rotate`,
      { graceSeconds: 0 },
      { "x-csrf-token": csrf },
    );
    expect(rotated.status).toBe(201);
    expectError(await srv.client(key).get("/api/me"), 401, "api_key_revoked");
    const key2 = rotated.body.secret as string;
    expect((await srv.client(key2).get("/api/me")).status).toBe(200);
    expect(rotated.body.key.label).toBe("laptop");

    // Relabel, then revoke through the page's form.
    const relabeled = await json(
      jar,
      "PATCH",
      `/api/me/keys/${rotated.body.key.id}`,
      { label: "work" },
      { "x-csrf-token": csrf },
    );
    expect(relabeled.body.key.label).toBe("work");
    const revoked = await form(jar, `/keys/${rotated.body.key.id}/revoke`, { _csrf: csrf });
    expect(revoked.status).toBe(303);
    expectError(await srv.client(key2).get("/api/me"), 401, "api_key_revoked");
  });

  test("the mint form shows the full key once, then only its prefix", async () => {
    const { jar, csrf } = await keyPageSignIn(srv.url, "alice", "alice-password");
    const res = await form(jar, "/keys", {
      _csrf: csrf,
      label: "form key",
      scopes: ["files:read", "folders:read"],
      expires: "30d",
    });
    expect(res.status).toBe(200);
    const secret = /id="new-key">(txt_[0-9A-Za-z]{36})</.exec(res.body)?.[1];
    expect(secret).toBeTruthy();
    expect((await srv.client(secret).get("/api/me/folders")).status).toBe(200);
    expectError(await srv.client(secret).post("/api/v1/files", { name: "x.md" }), 403, "insufficient_scope");
    const again = await (await jarFetch(jar, `${srv.url}/keys`)).text();
    expect(again).not.toContain(secret!);
    expect(again).toContain(secret!.slice(0, 12));
  });

  test("rotation with grace keeps the old key working until then", async () => {
    const { jar, csrf } = await keyPageSignIn(srv.url, "bob", "bob-password");
    const minted = await json(jar, "POST", "/api/me/keys", { label: "ci" }, { "x-csrf-token": csrf });
    const rotated = await json(
      jar,
      "POST",
      `/api/me/keys/${minted.body.key.id}/rotate`,
      { graceSeconds: 3600 },
      { "x-csrf-token": csrf },
    );
    expect(rotated.body.rotated.expires_at > new Date().toISOString()).toBe(true);
    expect((await srv.client(minted.body.secret).get("/api/me")).status).toBe(200);
    expect((await srv.client(rotated.body.secret).get("/api/me")).status).toBe(200);
    const bad = await json(
      jar,
      "POST",
      `/api/me/keys/${minted.body.key.id}/rotate`,
      { graceSeconds: 999999999 },
      { "x-csrf-token": csrf },
    );
    expectError(bad as any, 400, "validation_failed");
  });

  test("CSRF: no token, a wrong token or a foreign origin is 403 csrf_failed and changes nothing", async () => {
    const { jar, csrf, user } = await keyPageSignIn(srv.url, "carol", "carol-password");
    const before = await keyCount(user.id);
    expectError(
      (await form(jar, "/keys", { label: "evil", scopes: "files:read" })) as any,
      403,
      "csrf_failed",
    );
    expectError(
      (await form(jar, "/keys", {
        _csrf: `${csrf.slice(0, -1)}${csrf.endsWith("x") ? "y" : "x"}`,
        label: "evil",
      })) as any,
      403,
      "csrf_failed",
    );
    expectError((await json(jar, "POST", "/api/me/keys", { label: "evil" })) as any, 403, "csrf_failed");
    const foreign = await jarFetch(jar, `${srv.url}/keys`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: "https://evil.example" },
      body: new URLSearchParams({ _csrf: csrf, label: "evil" }).toString(),
    });
    expect(foreign.status).toBe(403);
    expect(((await foreign.json()) as any).error.code).toBe("csrf_failed");
    const malformed = await jarFetch(jar, `${srv.url}/keys`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: "not a url" },
      body: new URLSearchParams({ _csrf: csrf, label: "evil" }).toString(),
    });
    expect(malformed.status).toBe(403);
    expect(await keyCount(user.id)).toBe(before);
  });

  test("key management refuses no session (401 session_required) and bearer credentials", async () => {
    expectError((await json(new CookieJar(), "GET", "/api/me/keys")) as any, 401, "session_required");
    const u = await srv.user();
    const withKey = await u.api.get("/api/me/keys");
    expectError(withKey, 401, "session_required");
    const before = await keyCount(u.id);
    expectError(await u.api.post("/api/me/keys", { label: "x" }), 401, "session_required");
    expect(await keyCount(u.id)).toBe(before);
    // The sign-out form ends the session.
    const { jar, csrf } = await keyPageSignIn(srv.url, "alice", "alice-password");
    expect((await form(jar, "/auth/logout", { _csrf: csrf })).status).toBe(303);
    expectError((await json(jar, "GET", "/api/me/keys")) as any, 401, "session_required");
  });

  test("the session cookie is HttpOnly and SameSite, and rejected by file operations", async () => {
    const jar = new CookieJar();
    const callback = await keyPageAuthorize(srv.url, "alice", "alice-password", jar);
    const res = await jarFetch(jar, callback);
    const set = res.headers.getSetCookie().find((c) => c.startsWith("session="))!;
    expect(set).toMatch(/HttpOnly/);
    expect(set).toMatch(/SameSite=Lax/);
    expect(set).not.toMatch(/Secure/); // plain http on loopback; Secure over HTTPS
    expectError((await json(jar, "GET", "/api/me")) as any, 401, "session_not_accepted");
    expectError(
      (await json(jar, "POST", "/api/v1/files", { name: "c.md" })) as any,
      401,
      "session_not_accepted",
    );
  });

  test("a code exchanged with another login's PKCE verifier is refused (400 sign_in_failed)", async () => {
    const jar = new CookieJar();
    const first = new URL(await keyPageAuthorize(srv.url, "alice", "alice-password", jar));
    // A second login in the same browser: its state (and verifier) replace the first one's cookie.
    const second = new URL(await keyPageAuthorize(srv.url, "alice", "alice-password", jar));
    const iss = encodeURIComponent(first.searchParams.get("iss")!);
    const crossed = `${srv.url}/auth/callback?code=${first.searchParams.get("code")}&state=${second.searchParams.get("state")}&iss=${iss}`;
    const res = await jarFetch(jar, crossed);
    expect(res.status).toBe(400);
    const body = (await res.json()) as any;
    expect(body.error.code).toBe("sign_in_failed");
    expect(body.error.message).toContain("invalid_grant");
    expect(jar.get("session")).toBeUndefined();
    // An unknown state is refused too.
    const unknown = await jarFetch(jar, `${srv.url}/auth/callback?code=abc&state=nope`);
    expect(unknown.status).toBe(400);
  });

  test("an authorization response without the provider's iss, or with another one, is refused (RFC 9207)", async () => {
    for (const iss of [null, "https://evil.example.com"]) {
      const jar = new CookieJar();
      const answer = new URL(await keyPageAuthorize(srv.url, "alice", "alice-password", jar));
      expect(answer.searchParams.get("iss")).toBeTruthy(); // the provider sends it
      if (iss) answer.searchParams.set("iss", iss);
      else answer.searchParams.delete("iss");
      const res = await jarFetch(jar, `${srv.url}/auth/callback${answer.search}`);
      expect(res.status).toBe(400);
      const body = (await res.json()) as any;
      expect(body.error.code).toBe("sign_in_failed");
      expect(body.error.message).toMatch(/iss/);
      expect(jar.get("session")).toBeUndefined();
    }
  });
});

describe("vaulted AI key", () => {
  test("stored encrypted, shown only by its last four characters, removable", async () => {
    const { jar, csrf, user } = await keyPageSignIn(srv.url, "alice", "alice-password");
    const secret = "sk-test-0123456789abcdefWXYZ";
    const put = await json(
      jar,
      "PUT",
      "/api/me/vault/ai-key",
      { secret, label: "openai" },
      { "x-csrf-token": csrf },
    );
    expect(put.status).toBe(200);
    expect(put.body.credential).toMatchObject({ name: "ai-key", label: "openai", hint: "…WXYZ" });
    const row = await srv.server.store.read((tx) => tx.vault.get(user.id, "ai-key"));
    expect(row!.ciphertext).not.toContain(secret);
    expect(row!.ciphertext).not.toContain("0123456789");
    expect(srv.server.identity.cipher.open(row!.ciphertext)).toBe(secret);
    expect(JSON.stringify((await json(jar, "GET", "/api/me/vault")).body)).not.toContain(secret);
    expectError(
      (await json(jar, "PUT", "/api/me/vault/ai-key", { secret: "short" }, { "x-csrf-token": csrf })) as any,
      400,
      "validation_failed",
    );
    expect(
      srv.server.identity.cipher.open(
        (await srv.server.store.read((tx) => tx.vault.get(user.id, "ai-key")))!.ciphertext,
      ),
    ).toBe(secret);
    expectError(
      (await json(jar, "PUT", "/api/me/vault/ai-key", { secret: "sk-another-secret-1" })) as any,
      403,
      "csrf_failed",
    );
    const del = await form(jar, "/keys/vault/ai-key/delete", { _csrf: csrf });
    expect(del.status).toBe(303);
    expect((await json(jar, "GET", "/api/me/vault")).body.credentials).toEqual([]);
  });
});

describe("identities (users / use)", () => {
  test("users lists the account's identity; use refuses unknown ids and bad bodies", async () => {
    const { user } = await keyPageSignIn(srv.url, "carol", "carol-password");
    const t = await signIn({ issuer: `${srv.url}/dev-idp`, user: "carol", password: "carol-password" });
    const api = srv.client(t.access_token);
    const listed = await api.get("/api/v1/identities");
    expect(listed.status).toBe(200);
    expect(listed.body.identities.map((i: any) => i.subject)).toEqual(["carol"]);
    expect(listed.body.activeId).toBe(listed.body.identities[0].id);
    expect((await api.get("/api/me")).body.user.id).toBe(user.id);
    expectError(
      await api.request("PATCH", "/api/v1/identities", { json: { id: "idn_nope" } }),
      404,
      "not_found",
    );
    expectError(
      await api.request("PATCH", "/api/v1/identities", { json: { identity: "x" } }),
      400,
      "validation_failed",
    );
  });

  test("linking: a new subject signing in while a session is open joins that account", async () => {
    const other = await startTestServer({ devIdp: {} });
    try {
      const { jar, user } = await keyPageSignIn(other.url, "alice", "alice-password");
      const linked = await keyPageSignIn(other.url, "bob", "bob-password", jar);
      expect(linked.user.id).toBe(user.id);
      const minted = await json2(
        other.url,
        jar,
        "POST",
        "/api/me/keys",
        { label: "k" },
        { "x-csrf-token": linked.csrf },
      );
      const api = other.client(minted.body.secret);
      const ids = await api.get("/api/v1/identities");
      expect(ids.body.identities.map((i: any) => i.subject).sort()).toEqual(["alice", "bob"]);
      const bob = ids.body.identities.find((i: any) => i.subject === "bob");
      expect(bob.active).toBe(false);
      const used = await api.request("PATCH", "/api/v1/identities", { json: { id: bob.id } });
      expect(used.status).toBe(200);
      expect(used.body.activeId).toBe(bob.id);
      expect((await api.get("/api/me")).body.identity.subject).toBe("bob");
    } finally {
      await other.close();
    }
  });
});

async function json2(
  base: string,
  jar: CookieJar,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const res = await jarFetch(jar, base + path, {
    method,
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

describe("realtime capability (discoverIdentityRealtime)", () => {
  test("connectable, not connectable (fallback), no identity (409), discovery failure (502)", async () => {
    const alice = await signIn({ issuer: `${srv.url}/dev-idp`, user: "alice", password: "alice-password" });
    const a = await srv.client(alice.access_token).get("/api/identity/realtime");
    expect(a.status).toBe(200);
    expect(a.body).toMatchObject({
      provider: "dev",
      configured: true,
      syncMode: "live",
      syncServer: "wss://sync.dev.txtfs.test/v1",
      connectable: true,
      fallback: null,
    });

    const bob = await signIn({ issuer: `${srv.url}/dev-idp`, user: "bob", password: "bob-password" });
    const b = await srv.client(bob.access_token).get("/api/identity/realtime");
    expect(b.body).toMatchObject({ configured: true, syncMode: "off", syncServer: null, connectable: false });
    expect(b.body.fallback).toEqual({ store: "txtfs", changes: "/api/v1/changes" });

    const local = await srv.user();
    expectError(await local.api.get("/api/identity/realtime"), 409, "identity_not_linked");

    realtimeFails = true;
    try {
      expectError(
        await srv.client(alice.access_token).get("/api/identity/realtime"),
        502,
        "identity_discovery_failed",
      );
    } finally {
      realtimeFails = false;
    }
  });

  test("an expired held token: refreshed when possible, else 401 IDENTITY_REAUTH_REQUIRED", async () => {
    // Access tokens live 1 s: the server treats a held token with under 10 s left as expired.
    const short = await startTestServer({ devIdp: { accessTokenTtl: 1 } });
    try {
      // Key-page sign-in: the server holds a refresh token, so an expired access token is refreshed.
      const { jar, csrf } = await keyPageSignIn(short.url, "alice", "alice-password");
      const minted = await json2(
        short.url,
        jar,
        "POST",
        "/api/me/keys",
        { label: "k" },
        { "x-csrf-token": csrf },
      );
      await new Promise((r) => setTimeout(r, 1500));
      const ok = await short.client(minted.body.secret).get("/api/identity/realtime");
      expect(ok.status).toBe(200);
      expect(ok.body.connectable).toBe(true);

      // Bearer-only identity: the server holds just that access token; once it expires, re-auth.
      const t = await signIn({ issuer: `${short.url}/dev-idp`, user: "carol", password: "carol-password" });
      expect((await short.client(t.access_token).get("/api/me")).status).toBe(200);
      const carol = await short.server.store.read(
        async (tx) => (await tx.identities.bySubject(`${short.url}/dev-idp`, "carol"))!,
      );
      const key = await short.server.store.transaction(async (tx) => {
        return (await createKey(tx, carol.user_id, { label: "k" })).secret;
      });
      await new Promise((r) => setTimeout(r, 1500));
      expectError(await short.client(key).get("/api/identity/realtime"), 401, "IDENTITY_REAUTH_REQUIRED");
      const me = await short.client(key).get("/api/me");
      expect(me.body.identity.status).toBe("reauth_required");
      expect(me.body.identity.verificationError).toBeTruthy();
    } finally {
      await short.close();
    }
  });
});

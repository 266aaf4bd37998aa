// Sign-in without a browser, for API tests: walks the dev identity provider's authorization code
// flow over plain HTTP (a tiny cookie jar, manual redirects), so tokens come from the real provider.
// The real-browser flow is tested with Chromium in test/auth/browser.test.ts.
import { createHash, randomBytes } from "node:crypto";

export class CookieJar {
  private readonly cookies = new Map<string, string>();

  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }

  take(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const i = pair!.indexOf("=");
      const name = pair!.slice(0, i).trim();
      const value = pair!.slice(i + 1).trim();
      if (value === "" || /max-age=0\b/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  get(name: string): string | undefined {
    return this.cookies.get(name);
  }

  set(name: string, value: string): void {
    this.cookies.set(name, value);
  }
}

/** GET/POST with the jar, not following redirects. */
export async function jarFetch(jar: CookieJar, url: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  const c = jar.header();
  if (c) headers.set("cookie", c);
  const res = await fetch(url, { ...init, headers, redirect: "manual" });
  jar.take(res);
  return res;
}

/** Follows redirects (with the jar) until a page answers or `stop` matches the next location. */
export async function follow(
  jar: CookieJar,
  start: string,
  stop: (url: string) => boolean,
  init: RequestInit = {},
): Promise<{ res: Response; url: string }> {
  let url = start;
  let res = await jarFetch(jar, url, init);
  for (let hops = 0; hops < 20; hops++) {
    const loc = res.headers.get("location");
    if (res.status < 300 || res.status >= 400 || !loc) return { res, url };
    url = new URL(loc, url).toString();
    if (stop(url)) return { res, url };
    res = await jarFetch(jar, url);
  }
  throw new Error("too many redirects");
}

/**
 * Follows like a browser would through oidc-provider's self-submitting forms (a different account
 * signing in ends the remembered session first: "Submitting Callback").
 */
async function settle(jar: CookieJar, at: { res: Response; url: string }, stop: (url: string) => boolean) {
  let cur = at;
  for (let i = 0; i < 5 && !stop(cur.url) && cur.res.status === 200; i++) {
    const html = await cur.res.clone().text();
    if (!html.includes("Submitting Callback")) break;
    const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1];
    const fields = [...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"\/>/g)].map((m) => [
      m[1]!,
      m[2]!,
    ]);
    cur = await follow(jar, action!.replace(/&amp;/g, "&"), stop, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(fields as [string, string][]).toString(),
    });
  }
  return cur;
}

export const pkcePair = () => {
  const verifier = randomBytes(32).toString("base64url");
  const challenge = createHash("sha256").update(verifier).digest("base64url");
  return { verifier, challenge };
};

export interface AuthorizeOptions {
  issuer: string;
  user: string;
  password: string;
  redirectUri?: string;
  scope?: string;
  resource?: string;
  clientId?: string;
}

/**
 * Follows an authorization URL (built by anyone: this helper, the MCP SDK's OAuth client) through
 * the dev provider's login page as `user`; returns the redirect back to `redirectUri` (code, state).
 */
export async function loginAt(authorizationUrl: string, user: string, password: string, redirectUri: string) {
  const jar = new CookieJar();
  const isCallback = (u: string) => u.startsWith(redirectUri);
  const login = await follow(jar, authorizationUrl, isCallback);
  if (login.res.status !== 200)
    throw new Error(`expected the login page, got ${login.res.status} at ${login.url}`);
  const html = await login.res.text();
  const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1];
  if (!action) throw new Error(`no login form at ${login.url}: ${html.slice(0, 300)}`);
  const done = await follow(jar, new URL(action.replace(/&amp;/g, "&"), login.url).toString(), isCallback, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ login: user, password }).toString(),
  });
  const settled = await settle(jar, done, isCallback);
  if (!isCallback(settled.url))
    throw new Error(`login did not return to ${redirectUri}: ${settled.res.status} at ${settled.url}`);
  return new URL(settled.url);
}

/** Runs the authorization request through the provider's login page; returns the code and verifier. */
export async function authorize(o: AuthorizeOptions) {
  const { verifier, challenge } = pkcePair();
  const redirectUri = o.redirectUri ?? "http://127.0.0.1:9/callback";
  const state = randomBytes(12).toString("hex");
  const meta = (await (await fetch(`${o.issuer}/.well-known/openid-configuration`)).json()) as Record<
    string,
    string
  >;
  const url = new URL(meta.authorization_endpoint!);
  url.search = new URLSearchParams({
    response_type: "code",
    client_id: o.clientId ?? "txtfs",
    redirect_uri: redirectUri,
    scope:
      o.scope ??
      "openid profile email offline_access files:read files:write files:share context:read context:write",
    state,
    code_challenge: challenge,
    code_challenge_method: "S256",
    resource: o.resource ?? "urn:txtfs:api",
    prompt: "consent",
  }).toString();
  const back = await loginAt(url.toString(), o.user, o.password, redirectUri);
  const code = back.searchParams.get("code");
  if (!code) throw new Error(`no code in ${back}`);
  if (back.searchParams.get("state") !== state) throw new Error("state mismatch");
  return { code, verifier, redirectUri, tokenEndpoint: meta.token_endpoint!, meta };
}

export async function tokenRequest(tokenEndpoint: string, form: Record<string, string>) {
  const res = await fetch(tokenEndpoint, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ client_id: "txtfs", ...form }).toString(),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

/** A full sign-in: the tokens the provider issues for `user` (access token audience = `resource`). */
export async function signIn(o: AuthorizeOptions) {
  const a = await authorize(o);
  const t = await tokenRequest(a.tokenEndpoint, {
    grant_type: "authorization_code",
    code: a.code,
    redirect_uri: a.redirectUri,
    code_verifier: a.verifier,
    resource: o.resource ?? "urn:txtfs:api",
  });
  if (t.status !== 200) throw new Error(`token exchange failed: ${JSON.stringify(t.body)}`);
  return t.body as {
    access_token: string;
    refresh_token?: string;
    expires_in: number;
    scope: string;
    id_token?: string;
  };
}

/**
 * Signs in on a txtfs server's key page (GET /auth/login -> provider -> /auth/callback) and returns
 * the jar holding the `session` cookie plus the session's CSRF token. Pass `jar` to link an identity
 * to an open session.
 */
export async function keyPageSignIn(base: string, user: string, password: string, jar?: CookieJar) {
  const link = jar !== undefined;
  jar ??= new CookieJar();
  const callback = await keyPageAuthorize(base, user, password, jar, link);
  const done = await jarFetch(jar, callback);
  if (done.status !== 303) throw new Error(`callback answered ${done.status}: ${await done.text()}`);
  const s = await jarFetch(jar, `${base}/api/me/session`);
  const body = (await s.json()) as { csrfToken: string; user: { id: string; email: string } };
  return { jar, csrf: body.csrfToken, user: body.user };
}

/** The key page's sign-in up to (not including) the callback: returns the callback URL with the code. */
export async function keyPageAuthorize(
  base: string,
  user: string,
  password: string,
  jar: CookieJar,
  link = false,
) {
  const isCallback = (u: string) => u.startsWith(`${base}/auth/callback`);
  const login = await follow(jar, `${base}/auth/login${link ? "?link=1" : ""}`, isCallback);
  if (isCallback(login.url)) return login.url; // the provider remembered this browser's sign-in
  const html = await login.res.text();
  const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1];
  if (!action) throw new Error(`no login form at ${login.url}: ${html.slice(0, 300)}`);
  const posted = await follow(jar, new URL(action.replace(/&amp;/g, "&"), login.url).toString(), isCallback, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ login: user, password }).toString(),
  });
  const done = await settle(jar, posted, isCallback);
  if (!isCallback(done.url)) {
    throw new Error(
      `did not come back to the callback: ${done.url} ${done.res.status} ${(await done.res.text()).slice(0, 500)}`,
    );
  }
  return done.url;
}

/** Plays the browser for a sign-in URL printed by `txtfs login`: logs in, then lands on its loopback callback. */
export async function completeLogin(authUrl: string, user: string, password: string) {
  const jar = new CookieJar();
  const redirect = new URL(authUrl).searchParams.get("redirect_uri")!;
  const isCallback = (u: string) => u.startsWith(redirect);
  const login = await follow(jar, authUrl, isCallback);
  const html = await login.res.text();
  const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1];
  if (!action) throw new Error(`no login form at ${login.url}`);
  const posted = await follow(jar, new URL(action.replace(/&amp;/g, "&"), login.url).toString(), isCallback, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ login: user, password }).toString(),
  });
  const done = await settle(jar, posted, isCallback);
  if (!isCallback(done.url)) throw new Error(`did not reach the loopback callback: ${done.url}`);
  const res = await fetch(done.url); // the CLI's listener
  return { status: res.status, text: await res.text(), callbackUrl: done.url };
}

// Signing in from the command line (RFC 8252): authorization code + PKCE (S256) in the system
// browser, with a one-shot redirect listener on 127.0.0.1 and a random port. The tokens live in
// ~/.config/txtfs/config.json (mode 0600) and are refreshed before they expire. No server imports.
import { createHash, randomBytes } from "node:crypto";
import { createServer } from "node:http";
import { type CliConfig, loadCliConfig, type StoredSignIn, updateCliConfig } from "../lib/cliConfig.ts";

export type { CliConfig, StoredSignIn };

export interface SignInConfig {
  provider: string;
  issuer: string;
  clientId: string;
  audience: string;
}

export class SignInError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SignInError";
  }
}

export const SIGN_IN_SCOPE =
  "openid profile email offline_access files:read files:write files:share context:read context:write";
/** Refresh when less than this is left, so a request never leaves with a token about to die. */
export const REFRESH_MARGIN_MS = 60_000;
const TIMEOUT_MS = 10_000;

async function getJson(url: string): Promise<Record<string, unknown>> {
  let res: Response;
  try {
    res = await fetch(url, {
      headers: { accept: "application/json" },
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (err) {
    throw new SignInError(`cannot reach ${url}: ${(err as Error).message}`);
  }
  if (!res.ok) throw new SignInError(`${url} answered ${res.status}`);
  return (await res.json()) as Record<string, unknown>;
}

/** What the txtfs server says about its identity provider, and that provider's endpoints. */
export async function discoverSignIn(url: string) {
  const discover = await getJson(`${url.replace(/\/$/, "")}/api/v1`);
  const oauth = (discover.authentication as { oauth?: SignInConfig | null } | undefined)?.oauth;
  if (!oauth) throw new SignInError(`${url} has no identity provider: use an API key (txtfs mount --key)`);
  const meta = await getJson(`${oauth.issuer}/.well-known/openid-configuration`);
  if (String(meta.issuer).replace(/\/$/, "") !== oauth.issuer.replace(/\/$/, "")) {
    throw new SignInError(`the provider's discovery names issuer ${meta.issuer}, not ${oauth.issuer}`);
  }
  return {
    config: oauth,
    authorizationEndpoint: String(meta.authorization_endpoint),
    tokenEndpoint: String(meta.token_endpoint),
    revocationEndpoint: typeof meta.revocation_endpoint === "string" ? meta.revocation_endpoint : null,
  };
}

async function tokenRequest(endpoint: string, form: Record<string, string>) {
  let res: Response;
  try {
    res = await fetch(endpoint, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
      body: new URLSearchParams(form),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (err) {
    throw new SignInError(`cannot reach the token endpoint: ${(err as Error).message}`);
  }
  const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  if (!res.ok || typeof body.access_token !== "string") {
    throw new SignInError(
      `the identity provider refused: ${String(body.error ?? res.status)}${body.error_description ? ` (${body.error_description})` : ""}`,
    );
  }
  return {
    accessToken: body.access_token,
    refreshToken: typeof body.refresh_token === "string" ? body.refresh_token : null,
    expiresAt: new Date(Date.now() + Number(body.expires_in ?? 3600) * 1000).toISOString(),
    scope: String(body.scope ?? ""),
  };
}

const PAGE = (title: string, text: string) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1><p>${text}</p></body></html>`;

export interface LoginOptions {
  url: string;
  /** Called with the authorization URL (print it; open a browser). */
  onAuthorizationUrl: (url: string) => void | Promise<void>;
  timeoutMs?: number;
}

/** The whole sign-in; returns (and saves) the stored tokens. */
export async function login(opts: LoginOptions): Promise<StoredSignIn> {
  const url = opts.url.replace(/\/$/, "");
  const found = await discoverSignIn(url);
  const verifier = randomBytes(32).toString("base64url");
  const challenge = createHash("sha256").update(verifier).digest("base64url");
  const state = randomBytes(16).toString("base64url");

  // One-shot loopback listener for the redirect (RFC 8252 §7.3: 127.0.0.1, any free port).
  let settle!: (v: { code: string } | { error: string }) => void;
  const result = new Promise<{ code: string } | { error: string }>((resolve) => {
    settle = resolve;
  });
  const server = createServer((req, res) => {
    const u = new URL(req.url ?? "/", "http://127.0.0.1");
    if (u.pathname !== "/callback") {
      res.writeHead(404).end();
      return;
    }
    const html = (status: number, title: string, text: string) => {
      res.writeHead(status, { "content-type": "text/html; charset=utf-8", connection: "close" });
      res.end(PAGE(title, text));
    };
    if (u.searchParams.get("state") !== state) {
      html(400, "Sign-in failed", "The answer does not belong to this sign-in. Run txtfs login again.");
      return; // a stray or forged request: keep waiting for the real one
    }
    const iss = u.searchParams.get("iss");
    const error = u.searchParams.get("error");
    const code = u.searchParams.get("code");
    if (iss && iss.replace(/\/$/, "") !== found.config.issuer.replace(/\/$/, "")) {
      html(400, "Sign-in failed", "The answer came from another issuer.");
      settle({ error: `the answer came from another issuer (${iss})` }); // RFC 9207 mix-up defence
    } else if (error || !code) {
      html(400, "Sign-in failed", `The identity provider said: ${error ?? "no code"}.`);
      settle({
        error: `the identity provider said ${error ?? "no code"}: ${u.searchParams.get("error_description") ?? ""}`,
      });
    } else {
      html(200, "Signed in", "You are signed in to txtfs. You can close this tab.");
      settle({ code });
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  try {
    const port = (server.address() as { port: number }).port;
    const redirectUri = `http://127.0.0.1:${port}/callback`;
    const authUrl = new URL(found.authorizationEndpoint);
    authUrl.search = new URLSearchParams({
      response_type: "code",
      client_id: found.config.clientId,
      redirect_uri: redirectUri,
      scope: SIGN_IN_SCOPE,
      state,
      code_challenge: challenge,
      code_challenge_method: "S256",
      resource: found.config.audience,
      prompt: "consent", // needed for offline_access (the refresh token)
    }).toString();
    await opts.onAuthorizationUrl(authUrl.toString());
    const timeoutMs = opts.timeoutMs ?? 300_000;
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      result,
      new Promise<{ error: string }>((resolve) => {
        timer = setTimeout(
          () => resolve({ error: `no answer within ${Math.round(timeoutMs / 1000)} s` }),
          timeoutMs,
        );
      }),
    ]);
    clearTimeout(timer);
    if ("error" in outcome) throw new SignInError(`sign-in failed: ${outcome.error}`);
    const tokens = await tokenRequest(found.tokenEndpoint, {
      grant_type: "authorization_code",
      client_id: found.config.clientId,
      code: outcome.code,
      redirect_uri: redirectUri,
      code_verifier: verifier,
      resource: found.config.audience,
    });
    const stored: StoredSignIn = {
      ...found.config,
      url,
      tokenEndpoint: found.tokenEndpoint,
      revocationEndpoint: found.revocationEndpoint,
      ...tokens,
    };
    await updateCliConfig((cfg) => ({ ...cfg, url, signIn: stored }));
    return stored;
  } finally {
    server.closeAllConnections();
    server.close();
  }
}

/** Refreshes the stored tokens (the provider rotates the refresh token); saves and returns them. */
export async function refreshSignIn(s: StoredSignIn): Promise<StoredSignIn> {
  if (!s.refreshToken)
    throw new SignInError("the sign-in has expired and holds no refresh token: run txtfs login");
  let tokens: Awaited<ReturnType<typeof tokenRequest>>;
  try {
    tokens = await tokenRequest(s.tokenEndpoint, {
      grant_type: "refresh_token",
      client_id: s.clientId,
      refresh_token: s.refreshToken,
      resource: s.audience,
    });
  } catch (err) {
    throw new SignInError(`${(err as Error).message}; run txtfs login again`);
  }
  const next: StoredSignIn = { ...s, ...tokens, refreshToken: tokens.refreshToken ?? s.refreshToken };
  await updateCliConfig((cfg) => ({ ...cfg, signIn: next }));
  return next;
}

/** The stored sign-in with an access token valid for at least `marginMs` (refreshed if needed). */
export async function currentSignIn(marginMs = REFRESH_MARGIN_MS): Promise<StoredSignIn | null> {
  const s = (await loadCliConfig()).signIn;
  if (!s) return null;
  if (Date.parse(s.expiresAt) - Date.now() > marginMs) return s;
  return refreshSignIn(s);
}

/** Revokes the tokens at the provider (best effort) and forgets them. Returns whether any were held. */
export async function logout(): Promise<{ hadSignIn: boolean; revoked: boolean }> {
  const s = (await loadCliConfig()).signIn;
  if (!s) return { hadSignIn: false, revoked: false };
  let revoked = false;
  if (s.revocationEndpoint) {
    // Revoking the refresh token ends the whole grant (RFC 7009); JWT access tokens cannot be
    // revoked at most providers and simply run out.
    const [token, hint] = s.refreshToken
      ? [s.refreshToken, "refresh_token"]
      : [s.accessToken, "access_token"];
    try {
      const res = await fetch(s.revocationEndpoint, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ token, token_type_hint: hint, client_id: s.clientId }),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
      revoked = res.ok;
    } catch {
      revoked = false;
    }
  }
  await updateCliConfig(({ signIn: _gone, ...rest }) => rest);
  return { hadSignIn: true, revoked };
}

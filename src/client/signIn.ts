// Signing in from the command line (RFC 8252): authorization code + PKCE (S256) in the system
// browser, with a one-shot redirect listener on 127.0.0.1 and a random port. The tokens live in
// ~/.config/txtfs/config.json (mode 0600) and are refreshed before they expire. The protocol
// (discovery, PKCE, the authorization response's state and RFC 9207 `iss`, the token, refresh and
// revocation requests, the ID token's claims) is oauth4webapi's, as on the server's side
// (src/server/identity/provider.ts). No server imports.
import { createServer } from "node:http";
import * as oauth from "oauth4webapi";
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

/** How oauth4webapi reaches the provider: a deadline, and plain HTTP only for an http: issuer. */
const httpOptions = (issuer: string) => ({
  signal: () => AbortSignal.timeout(TIMEOUT_MS),
  [oauth.allowInsecureRequests]: issuer.startsWith("http:"),
});

/** txtfs is a public client (PKCE, no secret): it authenticates with its client_id alone. */
const publicClient = (clientId: string): oauth.Client => ({
  client_id: clientId,
  [oauth.clockTolerance]: 30,
});

/** The provider as a stored sign-in knows it (no discovery needed to refresh or revoke). */
const storedServer = (s: StoredSignIn): oauth.AuthorizationServer => ({
  issuer: s.issuer,
  token_endpoint: s.tokenEndpoint,
  revocation_endpoint: s.revocationEndpoint ?? undefined,
});

/** What the txtfs server says about its identity provider, and that provider's metadata. */
export async function discoverSignIn(url: string) {
  const discover = await getJson(`${url.replace(/\/$/, "")}/api/v1`);
  const config = (discover.authentication as { oauth?: SignInConfig | null } | undefined)?.oauth;
  if (!config)
    throw new SignInError(
      `${url} has no identity provider: use an API key instead, in a file (chmod 600; --key-file FILE, or the config file's keyFile) or in TXTFS_API_KEY; txtfs admin key add EMAIL on the server (or its /keys page) makes one`,
    );
  // OpenID discovery; oauth4webapi checks that the metadata names this issuer exactly.
  const issuer = new URL(config.issuer);
  let server: oauth.AuthorizationServer;
  try {
    const res = await oauth.discoveryRequest(issuer, { algorithm: "oidc", ...httpOptions(config.issuer) });
    server = await oauth.processDiscoveryResponse(issuer, res);
  } catch (err) {
    throw new SignInError(`the discovery of ${config.issuer} failed: ${(err as Error).message}`);
  }
  if (!server.authorization_endpoint || !server.token_endpoint)
    throw new SignInError(`${config.issuer} names no authorization or token endpoint`);
  return { config, server };
}

/** A token endpoint's answer, or the provider's refusal as one SignInError. */
async function tokens(
  send: () => Promise<Response>,
  read: (res: Response) => Promise<oauth.TokenEndpointResponse>,
) {
  let body: oauth.TokenEndpointResponse;
  try {
    body = await read(await send());
  } catch (err) {
    if (err instanceof oauth.ResponseBodyError)
      throw new SignInError(
        `the identity provider refused: ${err.error}${err.error_description ? ` (${err.error_description})` : ""}`,
      );
    throw new SignInError(`the token endpoint failed: ${(err as Error).message}`);
  }
  return {
    accessToken: body.access_token,
    refreshToken: body.refresh_token ?? null,
    expiresAt: new Date(Date.now() + (body.expires_in ?? 3600) * 1000).toISOString(),
    scope: body.scope ?? "",
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
  const { config, server: provider } = await discoverSignIn(url);
  const client = publicClient(config.clientId);
  const verifier = oauth.generateRandomCodeVerifier();
  const challenge = await oauth.calculatePKCECodeChallenge(verifier);
  const state = oauth.generateRandomState();

  // One-shot loopback listener for the redirect (RFC 8252 §7.3: 127.0.0.1, any free port).
  let settle!: (v: { params: URLSearchParams } | { error: string }) => void;
  const result = new Promise<{ params: URLSearchParams } | { error: string }>((resolve) => {
    settle = resolve;
  });
  const listener = createServer((req, res) => {
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
    // state, the RFC 9207 `iss` (the mix-up defence) and an `error` answer, checked by oauth4webapi.
    try {
      const params = oauth.validateAuthResponse(provider, client, u.searchParams, state);
      html(200, "Signed in", "You are signed in to txtfs. You can close this tab.");
      settle({ params });
    } catch (err) {
      const said =
        err instanceof oauth.AuthorizationResponseError
          ? `the identity provider said ${err.error}${err.error_description ? `: ${err.error_description}` : ""}`
          : `the answer is not valid: ${(err as Error).message}`;
      html(400, "Sign-in failed", `${said[0]!.toUpperCase()}${said.slice(1)}.`);
      settle({ error: said });
    }
  });
  await new Promise<void>((resolve, reject) => {
    listener.once("error", reject);
    listener.listen(0, "127.0.0.1", resolve);
  });
  try {
    const port = (listener.address() as { port: number }).port;
    const redirectUri = `http://127.0.0.1:${port}/callback`;
    const authUrl = new URL(provider.authorization_endpoint!);
    authUrl.search = new URLSearchParams({
      response_type: "code",
      client_id: config.clientId,
      redirect_uri: redirectUri,
      scope: SIGN_IN_SCOPE,
      state,
      code_challenge: challenge,
      code_challenge_method: "S256",
      resource: config.audience,
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
    const got = await tokens(
      () =>
        oauth.authorizationCodeGrantRequest(
          provider,
          client,
          oauth.None(),
          outcome.params,
          redirectUri,
          verifier,
          {
            additionalParameters: { resource: config.audience },
            ...httpOptions(config.issuer),
          },
        ),
      (res) => oauth.processAuthorizationCodeResponse(provider, client, res),
    );
    const stored: StoredSignIn = {
      ...config,
      url,
      tokenEndpoint: provider.token_endpoint!,
      revocationEndpoint: provider.revocation_endpoint ?? null,
      ...got,
    };
    await updateCliConfig((cfg) => ({ ...cfg, url, signIn: stored }));
    return stored;
  } finally {
    listener.closeAllConnections();
    listener.close();
  }
}

/** Refreshes the stored tokens (the provider rotates the refresh token); saves and returns them. */
export async function refreshSignIn(s: StoredSignIn): Promise<StoredSignIn> {
  const refreshToken = s.refreshToken;
  if (!refreshToken)
    throw new SignInError("the sign-in has expired and holds no refresh token: run txtfs login");
  const client = publicClient(s.clientId);
  let got: Awaited<ReturnType<typeof tokens>>;
  try {
    got = await tokens(
      () =>
        oauth.refreshTokenGrantRequest(storedServer(s), client, oauth.None(), refreshToken, {
          additionalParameters: { resource: s.audience },
          ...httpOptions(s.issuer),
        }),
      (res) => oauth.processRefreshTokenResponse(storedServer(s), client, res),
    );
  } catch (err) {
    throw new SignInError(`${(err as Error).message}; run txtfs login again`);
  }
  const next: StoredSignIn = { ...s, ...got, refreshToken: got.refreshToken ?? refreshToken };
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
      const res = await oauth.revocationRequest(
        storedServer(s),
        publicClient(s.clientId),
        oauth.None(),
        token,
        {
          additionalParameters: { token_type_hint: hint },
          ...httpOptions(s.issuer),
        },
      );
      await oauth.processRevocationResponse(res);
      revoked = true;
    } catch {
      revoked = false;
    }
  }
  await updateCliConfig(({ signIn: _gone, ...rest }) => rest);
  return { hadSignIn: true, revoked };
}

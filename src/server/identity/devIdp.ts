// A development identity provider: a real OpenID provider (oidc-provider) run in-process, so sign-in,
// the key page and the tests need no external host. Test users are fixed and documented (README
// "Sign-in"). Its access tokens are JWTs bound to the txtfs API by a resource indicator (RFC 8707).
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer } from "node:http";
import { createLocalJWKSet, exportJWK, generateKeyPair, type JWK, jwtVerify } from "jose";
import Provider, { type Configuration } from "oidc-provider";
import { OAUTH_SCOPES } from "../domain/scopes.ts";

export const DEV_CLIENT_ID = "txtfs";
/** The identifier (and access-token audience) of the txtfs API at the dev provider. */
export const DEV_AUDIENCE = "urn:txtfs:api";
/** A second resource the dev provider knows, so tests can get a token meant for someone else. */
export const OTHER_AUDIENCE = "urn:example:other-api";

const RESOURCE_SCOPES = OAUTH_SCOPES.filter((s) => s.includes(":")).join(" ");

export interface DevUser {
  subject: string;
  password: string;
  email: string;
  name: string;
  /** What the provider's realtime-sync capability answers for this user. */
  realtime: { configured: boolean; syncMode: string; syncServer?: string };
  wallet?: { address: string; chainType: string; network: string; walletType: string };
}

/** The documented test users of the dev provider (docs/api.md "Sign-in"). */
export const DEV_USERS: readonly DevUser[] = [
  {
    subject: "alice",
    password: "alice-password",
    email: "alice@dev.txtfs.test",
    name: "Alice Dev",
    realtime: { configured: true, syncMode: "live", syncServer: "wss://sync.dev.txtfs.test/v1" },
    wallet: {
      address: "0x00000000000000000000000000000000000a11ce",
      chainType: "evm",
      network: "sepolia",
      walletType: "embedded",
    },
  },
  {
    subject: "bob",
    password: "bob-password",
    email: "bob@dev.txtfs.test",
    name: "Bob Dev",
    realtime: { configured: true, syncMode: "off" },
  },
  {
    subject: "carol",
    password: "carol-password",
    email: "carol@dev.txtfs.test",
    name: "Carol Dev",
    realtime: { configured: false, syncMode: "off" },
  },
];

export interface DevIdpOptions {
  /** Full issuer URL, e.g. http://127.0.0.1:8750/dev-idp. */
  issuer: string;
  /** Access-token lifetime in seconds (default 3600). */
  accessTokenTtl?: number;
  /** Where the signing key is kept (mode 0600), so tokens survive a restart; memory only when absent. */
  keyFile?: string;
  /** When true the realtime endpoint answers 500 (to test the 502 path). */
  realtimeFails?: () => boolean;
  /**
   * The MCP endpoint's URL, a resource it also issues tokens for: an MCP client asks for a token
   * with `resource` = the server's URL (MCP authorization, RFC 8707), not the API's URN.
   */
  mcpResource?: string;
}

export interface DevIdp {
  issuer: string;
  provider: Provider;
  /** Node request handler for requests below the issuer's path (the prefix is stripped here). */
  handle(req: IncomingMessage, res: ServerResponse): void;
}

async function signingKey(keyFile: string | undefined): Promise<JWK> {
  if (keyFile && existsSync(keyFile)) return JSON.parse(readFileSync(keyFile, "utf8")) as JWK;
  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  const jwk = {
    ...(await exportJWK(privateKey)),
    kid: randomBytes(8).toString("hex"),
    alg: "RS256",
    use: "sig",
  };
  if (keyFile) writeFileSync(keyFile, JSON.stringify(jwk), { mode: 0o600 });
  return jwk;
}

const esc = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

function page(title: string, body: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>${esc(title)}</title></head><body><h1>${esc(title)}</h1>${body}</body></html>`;
}

function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  return new Promise((resolve, reject) => {
    let data = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => {
      data += chunk;
      if (data.length > 64 * 1024) req.destroy(new Error("form too large"));
    });
    req.on("end", () => resolve(new URLSearchParams(data)));
    req.on("error", reject);
  });
}

export async function createDevIdp(opts: DevIdpOptions): Promise<DevIdp> {
  const issuerUrl = new URL(opts.issuer);
  const prefix = issuerUrl.pathname.replace(/\/$/, "");
  const key = await signingKey(opts.keyFile);
  const publicJwks = createLocalJWKSet({
    keys: [{ kty: key.kty, n: key.n, e: key.e, kid: key.kid, alg: key.alg, use: "sig" } as JWK],
  });
  const users = new Map(DEV_USERS.map((u) => [u.subject, u]));
  const ttl = opts.accessTokenTtl ?? 3600;

  const configuration: Configuration = {
    clients: [
      {
        client_id: DEV_CLIENT_ID,
        client_name: "txtfs",
        application_type: "native", // loopback redirects on any port (RFC 8252 §7.3)
        token_endpoint_auth_method: "none", // a public client: PKCE protects the code
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        redirect_uris: ["http://127.0.0.1/callback", "http://127.0.0.1/auth/callback"],
      },
    ],
    jwks: { keys: [key] },
    cookies: { keys: [randomBytes(32).toString("hex")] },
    scopes: [...OAUTH_SCOPES],
    claims: {
      openid: ["sub"],
      email: ["email", "email_verified"],
      profile: ["name", "preferred_username"],
      wallet: ["wallet"],
    },
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: false },
      revocation: { enabled: true },
      introspection: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: async (_ctx: unknown, _client: unknown, oneOf?: string) => oneOf ?? DEV_AUDIENCE,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx: unknown, indicator: string) => {
          if (indicator !== DEV_AUDIENCE && indicator !== OTHER_AUDIENCE && indicator !== opts.mcpResource) {
            throw new Error(`unknown resource ${indicator}`);
          }
          return {
            audience: indicator,
            scope: RESOURCE_SCOPES,
            accessTokenTTL: ttl,
            accessTokenFormat: "jwt",
            jwt: { sign: { alg: "RS256" } },
          };
        },
      },
    },
    discovery: { realtime_sync_endpoint: `${opts.issuer.replace(/\/$/, "")}/realtime` },
    // Identity claims in the access token, so the API can name a new user without a userinfo call.
    extraTokenClaims: async (_ctx, token) => {
      const user = users.get(String(token.accountId));
      if (!user) return undefined;
      return {
        email: user.email,
        preferred_username: user.subject,
        name: user.name,
        ...(user.wallet ? { wallet: user.wallet } : {}),
      };
    },
    findAccount: async (_ctx, sub) => {
      const user = users.get(sub);
      if (!user) return undefined;
      return {
        accountId: sub,
        claims: async () => ({
          sub,
          email: user.email,
          email_verified: true,
          name: user.name,
          preferred_username: user.subject,
          ...(user.wallet ? { wallet: user.wallet } : {}),
        }),
      };
    },
    interactions: { url: (_ctx, interaction) => `${prefix}/interaction/${interaction.uid}` },
    ttl: {
      Interaction: 600,
      IdToken: 3600,
      AuthorizationCode: 60,
      AccessToken: ttl,
      RefreshToken: 14 * 24 * 3600,
      Session: 3600,
      Grant: 14 * 24 * 3600,
    },
    rotateRefreshToken: true,
    renderError: async (ctx, out) => {
      ctx.type = "html";
      ctx.body = page(
        "Sign-in error",
        `<p id="error">${esc(String(out.error))}: ${esc(String(out.error_description ?? ""))}</p>`,
      );
    },
  };
  const provider = new Provider(opts.issuer, configuration);
  provider.proxy = false;
  const callback = provider.callback();

  /** Our own sign-in page: checks the documented test users' passwords; consent is implied (first party). */
  async function interaction(req: IncomingMessage, res: ServerResponse, uid: string) {
    const details = await provider.interactionDetails(req, res);
    if (details.uid !== uid) throw new Error("interaction mismatch");
    if (details.prompt.name === "consent") {
      const params = details.params as Record<string, string>;
      const grant = details.grantId
        ? (await provider.Grant.find(details.grantId))!
        : new provider.Grant({ accountId: details.session!.accountId, clientId: params.client_id! });
      const missing = details.prompt.details as {
        missingOIDCScope?: string[];
        missingOIDCClaims?: string[];
        missingResourceScopes?: Record<string, string[]>;
      };
      if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(" "));
      if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
      for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
        grant.addResourceScope(indicator, scopes.join(" "));
      }
      const grantId = await grant.save();
      await provider.interactionFinished(
        req,
        res,
        { consent: { grantId } },
        { mergeWithLastSubmission: true },
      );
      return;
    }
    let error = "";
    if (req.method === "POST") {
      const form = await readForm(req);
      const user = users.get(form.get("login") ?? "");
      if (user && user.password === form.get("password")) {
        await provider.interactionFinished(
          req,
          res,
          { login: { accountId: user.subject } },
          { mergeWithLastSubmission: false },
        );
        return;
      }
      error = '<p id="error">Unknown user or wrong password.</p>';
    }
    res.writeHead(req.method === "POST" ? 401 : 200, {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-store",
    });
    res.end(
      page(
        "Sign in to the txtfs dev identity provider",
        `${error}<form method="post" action="${esc(`${prefix}/interaction/${uid}`)}">` +
          '<label>User <input name="login" id="login" autocomplete="username" required></label> ' +
          '<label>Password <input name="password" id="password" type="password" required></label> ' +
          '<button type="submit" id="sign-in">Sign in</button></form>' +
          "<p>Test users: alice / alice-password, bob / bob-password, carol / carol-password.</p>",
      ),
    );
  }

  /** The provider's realtime-sync capability for the token's subject (what txtfs discovers). */
  async function realtime(req: IncomingMessage, res: ServerResponse) {
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
      res.end(JSON.stringify(body));
    };
    if (opts.realtimeFails?.()) return json(500, { error: "server_error" });
    const token = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? "")?.[1];
    if (!token) return json(401, { error: "invalid_token" });
    try {
      // The usual resource-server leeway: a token refreshed just now must not fail on clock jitter.
      const { payload } = await jwtVerify(token, publicJwks, { issuer: opts.issuer, clockTolerance: 30 });
      const user = users.get(String(payload.sub));
      if (!user) return json(401, { error: "invalid_token" });
      return json(200, { realtime: user.realtime });
    } catch {
      return json(401, { error: "invalid_token" });
    }
  }

  function handle(req: IncomingMessage, res: ServerResponse): void {
    const original = req.url ?? "/";
    const path = original.startsWith(prefix) ? original.slice(prefix.length) || "/" : original;
    const fail = (err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
      res.end(`dev identity provider error: ${err instanceof Error ? err.message : String(err)}`);
    };
    const m = /^\/interaction\/([\w-]+)(?:\?|$)/.exec(path);
    if (m) {
      interaction(req, res, m[1]!).catch(fail);
      return;
    }
    if (/^\/realtime(?:\?|$)/.test(path)) {
      realtime(req, res).catch(fail);
      return;
    }
    (req as IncomingMessage & { originalUrl?: string }).originalUrl = original;
    req.url = path;
    callback(req, res);
  }

  return {
    issuer: opts.issuer,
    provider,
    handle,
  };
}

/** A dev provider on its own loopback port (tests: a second, foreign issuer). */
export async function startStandaloneDevIdp(
  opts: Omit<DevIdpOptions, "issuer"> & { path?: string } = {},
): Promise<{ idp: DevIdp; close(): Promise<void> }> {
  let idp: DevIdp | undefined;
  const server = createServer((req, res) => idp!.handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  idp = await createDevIdp({ ...opts, issuer: `http://127.0.0.1:${port}${opts.path ?? "/dev-idp"}` });
  return {
    idp,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

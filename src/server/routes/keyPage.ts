// The key page (/keys) and key management. A person signs in with the identity provider (browser
// redirect, authorization code + PKCE), gets a `session` cookie (HttpOnly, SameSite=Lax, Secure over
// HTTPS) and with it — and a CSRF token on every change — mints, lists, rotates and revokes API keys
// and vaults an AI key. The cookie authorizes nothing else: file operations refuse it (401).
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import { Type } from "typebox";
import { randomBase62 } from "../../lib/ids.ts";
import { nowIso, parseDuration } from "../../lib/time.ts";
import type { UserRow } from "../../store/repos/rows.ts";
import type { SessionRow } from "../../store/repos/sessions.ts";
import { ServiceError } from "../domain/errors.ts";
import { holdTokens, listIdentities, signInIdentity } from "../domain/identities.ts";
import {
  listUserKeys,
  mintUserKey,
  relabelUserKey,
  revokeUserKey,
  rotateUserKey,
} from "../domain/keyManagement.ts";
import { KEY_SCOPES } from "../domain/scopes.ts";
import { deleteVaultSecret, listVault, putVaultSecret } from "../domain/vault.ts";
import { TokenEndpointError, TokenRejected } from "../identity/provider.ts";
import type { RouteDeps } from "./deps.ts";
import { renderKeyPage } from "./keyPageHtml.ts";

const SESSION_COOKIE = "session";
const LOGIN_COOKIE = "txtfs_login";
const SESSION_TTL_MS = 8 * 3600 * 1000;
const LOGIN_TTL_MS = 10 * 60 * 1000;
const DEFAULT_SCOPES = ["files:read", "files:write", "folders:read", "folders:write"];
const SIGN_IN_SCOPES =
  "openid profile email offline_access files:read files:write files:share context:read context:write";

interface PendingLogin {
  verifier: string;
  redirectUri: string;
  /** The account of a session already open: the new identity is linked to it. */
  linkTo?: string;
  expiresAt: number;
}

interface SessionContext {
  session: SessionRow;
  user: UserRow;
  idHash: string;
}

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");
const b64url = (b: Buffer) => b.toString("base64url");

function cookies(request: FastifyRequest): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of (request.headers.cookie ?? "").split(";")) {
    const i = part.indexOf("=");
    if (i > 0) out.set(part.slice(0, i).trim(), decodeURIComponent(part.slice(i + 1).trim()));
  }
  return out;
}

function cookie(
  request: FastifyRequest,
  name: string,
  value: string,
  maxAgeSeconds: number,
  path = "/",
): string {
  const secure = request.protocol === "https" ? "; Secure" : "";
  return `${name}=${value}; Path=${path}; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${secure}`;
}

const sessionRequired = () =>
  new ServiceError(
    401,
    "session_required",
    "Key management needs a signed-in browser session.",
    "Sign in on the key page (/keys) first; API keys and access tokens cannot manage keys.",
  );

const csrfFailed = (why: string) =>
  new ServiceError(
    403,
    "csrf_failed",
    `The request was refused as a possible cross-site request forgery: ${why}.`,
    "Reload the key page and submit the form again (JSON clients: send the session's X-CSRF-Token).",
  );

function parseForm(body: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of new URLSearchParams(body)) {
    const prev = out[k];
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return out;
}

const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
const many = (v: string | string[] | undefined) => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

const KeyCreateBody = Type.Object(
  {
    label: Type.Optional(Type.String()),
    scopes: Type.Optional(Type.Array(Type.String())),
    /** Seconds from now; omitted or null = never expires. */
    expiresIn: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
  },
  { additionalProperties: false },
);
const KeyPatchBody = Type.Object({ label: Type.String() }, { additionalProperties: false });
const RotateBody = Type.Object(
  { graceSeconds: Type.Optional(Type.Integer({ minimum: 0 })) },
  { additionalProperties: false },
);
const VaultBody = Type.Object(
  { secret: Type.String(), label: Type.Optional(Type.String()) },
  { additionalProperties: false },
);
const KeyParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
const VaultParams = Type.Object({ name: Type.String({ minLength: 1, maxLength: 64 }) });

export function keyPageRoutes({ store, identity: hub }: RouteDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    const pending = new Map<string, PendingLogin>();
    const pub = { config: { scope: "public" as const } };

    // HTML forms post urlencoded bodies; only the routes of this plugin accept them.
    app.addContentTypeParser("application/x-www-form-urlencoded", { parseAs: "string" }, (_req, body, done) =>
      done(null, parseForm(String(body))),
    );

    async function loadSession(request: FastifyRequest): Promise<SessionContext | null> {
      const raw = cookies(request).get(SESSION_COOKIE);
      if (!raw || !/^[0-9A-Za-z]{20,64}$/.test(raw)) return null;
      const idHash = sha256(raw);
      const found = await store.read(async (tx) => {
        const session = await tx.sessions.byHash(idHash);
        const user = session ? await tx.users.byId(session.user_id) : undefined;
        return session && user ? { session, user } : null;
      });
      if (!found || found.session.expires_at <= nowIso()) return null;
      return { ...found, idHash };
    }

    async function requireSession(request: FastifyRequest): Promise<SessionContext> {
      if (request.headers.authorization) {
        throw new ServiceError(
          401,
          "session_required",
          "Key management accepts only the browser session, never a bearer credential.",
          "Sign in on the key page (/keys) and manage keys there.",
        );
      }
      const ctx = await loadSession(request);
      if (!ctx) throw sessionRequired();
      return ctx;
    }

    /** A change: the session, plus its CSRF token (form field `_csrf` or header X-CSRF-Token) and origin. */
    async function requireChange(request: FastifyRequest): Promise<SessionContext> {
      const ctx = await requireSession(request);
      const origin = request.headers.origin;
      if (origin && origin !== "null" && new URL(origin).host !== request.host)
        throw csrfFailed("foreign origin");
      const header = request.headers["x-csrf-token"];
      const body = request.body as Record<string, string | string[]> | undefined;
      const given = typeof header === "string" ? header : one(body?._csrf);
      if (!given) throw csrfFailed("no CSRF token");
      const a = Buffer.from(given);
      const b = Buffer.from(ctx.session.csrf_token);
      if (a.length !== b.length || !timingSafeEqual(a, b)) throw csrfFailed("wrong CSRF token");
      return ctx;
    }

    async function page(
      reply: FastifyReply,
      ctx: SessionContext | null,
      extra: Parameters<typeof renderKeyPage>[0]["extra"] = {},
    ) {
      reply
        .header("cache-control", "no-store")
        .header("x-frame-options", "DENY")
        .header("referrer-policy", "no-referrer");
      reply.header(
        "content-security-policy",
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
      );
      reply.type("text/html; charset=utf-8");
      if (!ctx) {
        return renderKeyPage({ signedIn: null, providerName: hub.provider?.config.name ?? null, extra });
      }
      const data = await store.read(async (tx) => ({
        keys: await listUserKeys(tx, ctx.user.id),
        identities: await listIdentities(tx, ctx.user.id),
        vault: await listVault(tx, ctx.user.id),
      }));
      return renderKeyPage({
        signedIn: {
          user: ctx.user,
          csrf: ctx.session.csrf_token,
          ...data,
          scopes: KEY_SCOPES,
          defaultScopes: DEFAULT_SCOPES,
        },
        providerName: hub.provider?.config.name ?? null,
        extra,
      });
    }

    const seeOther = (reply: FastifyReply, to: string) => reply.code(303).header("location", to).send();

    app.get("/keys", pub, async (req, reply) => page(reply, await loadSession(req)));

    // Sign-in, step 1: PKCE (S256) and state, bound to this browser by a short-lived cookie.
    app.get(
      "/auth/login",
      { ...pub, schema: { querystring: Type.Object({ link: Type.Optional(Type.Literal("1")) }) } },
      async (req, reply) => {
        const provider = hub.provider;
        if (!provider) {
          throw new ServiceError(
            404,
            "not_found",
            "This server has no identity provider configured.",
            "Start txtfs serve with --dev-idp or --idp-issuer to enable sign-in.",
          );
        }
        const meta = await provider.metadata().catch((err: Error) => {
          throw new ServiceError(
            502,
            "identity_discovery_failed",
            `The identity provider is unreachable: ${err.message}.`,
            "Retry later.",
          );
        });
        const now = Date.now();
        for (const [k, v] of pending) if (v.expiresAt <= now) pending.delete(k);
        const state = randomBase62(32);
        const verifier = b64url(randomBytes(32));
        const redirectUri = `${req.protocol}://${req.host}/auth/callback`;
        const existing = await loadSession(req);
        pending.set(state, {
          verifier,
          redirectUri,
          linkTo: existing?.user.id,
          expiresAt: now + LOGIN_TTL_MS,
        });
        const url = new URL(meta.authorization_endpoint);
        url.search = new URLSearchParams({
          response_type: "code",
          client_id: provider.config.clientId,
          redirect_uri: redirectUri,
          scope: SIGN_IN_SCOPES,
          state,
          code_challenge: b64url(createHash("sha256").update(verifier).digest()),
          code_challenge_method: "S256",
          resource: provider.config.audience,
          // Linking another identity asks the provider for a fresh login, not its remembered one.
          prompt: req.query.link ? "login consent" : "consent",
        }).toString();
        reply.header("set-cookie", cookie(req, LOGIN_COOKIE, state, LOGIN_TTL_MS / 1000, "/auth"));
        return seeOther(reply, url.toString());
      },
    );

    // Sign-in, step 2: the provider redirects back with a code; we exchange it with the verifier.
    app.get(
      "/auth/callback",
      {
        ...pub,
        schema: {
          querystring: Type.Object({
            code: Type.Optional(Type.String({ maxLength: 2048 })),
            state: Type.Optional(Type.String({ maxLength: 256 })),
            iss: Type.Optional(Type.String({ maxLength: 2048 })),
            error: Type.Optional(Type.String({ maxLength: 256 })),
            error_description: Type.Optional(Type.String({ maxLength: 2048 })),
          }),
        },
      },
      async (req, reply) => {
        const provider = hub.provider;
        const q = req.query;
        const signInFailed = (why: string, status = 400) =>
          new ServiceError(
            status,
            "sign_in_failed",
            `Sign-in failed: ${why}.`,
            "Start again from the key page (/keys).",
          );
        if (!provider) throw signInFailed("no identity provider is configured", 404);
        const login = q.state ? pending.get(q.state) : undefined;
        if (
          !q.state ||
          !login ||
          login.expiresAt <= Date.now() ||
          cookies(req).get(LOGIN_COOKIE) !== q.state
        ) {
          throw signInFailed("the sign-in state is unknown, expired or belongs to another browser");
        }
        pending.delete(q.state);
        reply.header("set-cookie", cookie(req, LOGIN_COOKIE, "", 0, "/auth"));
        if (q.error)
          throw signInFailed(
            `the identity provider said ${q.error}${q.error_description ? `: ${q.error_description}` : ""}`,
          );
        if (q.iss && q.iss.replace(/\/$/, "") !== provider.config.issuer)
          throw signInFailed("the answer came from another issuer"); // RFC 9207
        if (!q.code) throw signInFailed("no authorization code");
        let verified: Awaited<ReturnType<typeof provider.verify>>;
        let tokens: Awaited<ReturnType<typeof provider.exchangeCode>>;
        try {
          tokens = await provider.exchangeCode(q.code, login.redirectUri, login.verifier);
          verified = await provider.verify(tokens.accessToken);
        } catch (err) {
          if (err instanceof TokenEndpointError) {
            throw err.status >= 400 && err.status < 500
              ? signInFailed(`the identity provider refused the code (${err.oauthError}: ${err.message})`)
              : signInFailed(`the identity provider's token endpoint failed (${err.message})`, 502);
          }
          if (err instanceof TokenRejected)
            throw signInFailed(`the issued access token is not accepted (${err.message})`);
          throw err;
        }
        const raw = randomBase62(43);
        await store.transaction(async (tx) => {
          const { user, identity } = await signInIdentity(
            tx,
            {
              provider: provider.config.name,
              issuer: verified.issuer,
              subject: verified.subject,
              email: verified.email,
              username: verified.username,
              name: verified.name,
              wallet: verified.wallet,
            },
            login.linkTo,
          );
          await holdTokens(tx, identity.id, tokens, hub.cipher);
          await tx.sessions.purgeExpired(nowIso());
          await tx.sessions.insert({
            id_hash: sha256(raw),
            user_id: user.id,
            identity_id: identity.id,
            csrf_token: randomBase62(32),
            created_at: nowIso(),
            expires_at: new Date(Date.now() + SESSION_TTL_MS).toISOString(),
          });
        });
        reply.header("set-cookie", [
          cookie(req, LOGIN_COOKIE, "", 0, "/auth"),
          cookie(req, SESSION_COOKIE, raw, SESSION_TTL_MS / 1000),
        ]);
        return seeOther(reply, "/keys");
      },
    );

    app.post("/auth/logout", pub, async (req, reply) => {
      const ctx = await requireChange(req);
      await store.transaction((tx) => tx.sessions.delete(ctx.idHash));
      reply.header("set-cookie", cookie(req, SESSION_COOKIE, "", 0));
      return seeOther(reply, "/keys");
    });

    // --- The page's forms (urlencoded, CSRF token in `_csrf`) ---

    app.post("/keys", pub, async (req, reply) => {
      const ctx = await requireChange(req);
      const form = (req.body ?? {}) as Record<string, string | string[]>;
      const expires = one(form.expires) ?? "90d";
      const expiresIn = expires === "never" ? undefined : (parseDuration(expires) ?? Number.NaN);
      if (Number.isNaN(expiresIn)) {
        throw new ServiceError(
          400,
          "validation_failed",
          "expires: use a duration like 30d, or never.",
          "Pick an expiry from the list.",
          [{ field: "expires", code: "invalid", message: "not a duration" }],
        );
      }
      const minted = await store.transaction((tx) =>
        mintUserKey(tx, ctx.user.id, { label: one(form.label), scopes: many(form.scopes), expiresIn }),
      );
      return page(reply, ctx, { newKey: minted });
    });

    app.post("/keys/:id/rotate", { ...pub, schema: { params: KeyParams } }, async (req, reply) => {
      const ctx = await requireChange(req);
      const form = (req.body ?? {}) as Record<string, string | string[]>;
      const grace = Number(one(form.grace) ?? 86400);
      const minted = await store.transaction((tx) => rotateUserKey(tx, ctx.user.id, req.params.id, grace));
      return page(reply, ctx, { newKey: minted, rotated: minted.rotated });
    });

    app.post("/keys/:id/revoke", { ...pub, schema: { params: KeyParams } }, async (req, reply) => {
      const ctx = await requireChange(req);
      await store.transaction((tx) => revokeUserKey(tx, ctx.user.id, req.params.id));
      return seeOther(reply, "/keys");
    });

    app.post("/keys/vault/:name", { ...pub, schema: { params: VaultParams } }, async (req, reply) => {
      const ctx = await requireChange(req);
      const form = (req.body ?? {}) as Record<string, string | string[]>;
      await store.transaction((tx) =>
        putVaultSecret(
          tx,
          ctx.user.id,
          req.params.name,
          { secret: one(form.secret) ?? "", label: one(form.label) },
          hub.cipher,
        ),
      );
      return seeOther(reply, "/keys");
    });

    app.post("/keys/vault/:name/delete", { ...pub, schema: { params: VaultParams } }, async (req, reply) => {
      const ctx = await requireChange(req);
      await store.transaction((tx) => deleteVaultSecret(tx, ctx.user.id, req.params.name));
      return seeOther(reply, "/keys");
    });

    // --- The same operations as JSON (session cookie + X-CSRF-Token), for scripts in the page ---

    app.get("/api/me/session", pub, async (req) => {
      const ctx = await requireSession(req);
      return {
        user: { id: ctx.user.id, email: ctx.user.email, name: ctx.user.name },
        csrfToken: ctx.session.csrf_token,
        expiresAt: ctx.session.expires_at,
      };
    });

    app.get("/api/me/keys", pub, async (req) => {
      const ctx = await requireSession(req);
      return { keys: await store.read((tx) => listUserKeys(tx, ctx.user.id)) };
    });

    app.post("/api/me/keys", { ...pub, schema: { body: KeyCreateBody } }, async (req, reply) => {
      const ctx = await requireChange(req);
      const b = req.body;
      const minted = await store.transaction((tx) =>
        mintUserKey(tx, ctx.user.id, {
          label: b.label,
          scopes: b.scopes ?? DEFAULT_SCOPES,
          expiresIn: b.expiresIn ?? undefined,
        }),
      );
      return reply.code(201).send(minted);
    });

    app.patch(
      "/api/me/keys/:id",
      { ...pub, schema: { params: KeyParams, body: KeyPatchBody } },
      async (req) => {
        const ctx = await requireChange(req);
        return {
          key: await store.transaction((tx) =>
            relabelUserKey(tx, ctx.user.id, req.params.id, req.body.label),
          ),
        };
      },
    );

    app.post(
      "/api/me/keys/:id/rotate",
      { ...pub, schema: { params: KeyParams, body: Type.Optional(RotateBody) } },
      async (req, reply) => {
        const ctx = await requireChange(req);
        const grace = req.body?.graceSeconds;
        return reply
          .code(201)
          .send(await store.transaction((tx) => rotateUserKey(tx, ctx.user.id, req.params.id, grace)));
      },
    );

    app.delete("/api/me/keys/:id", { ...pub, schema: { params: KeyParams } }, async (req) => {
      const ctx = await requireChange(req);
      return { key: await store.transaction((tx) => revokeUserKey(tx, ctx.user.id, req.params.id)) };
    });

    app.get("/api/me/vault", pub, async (req) => {
      const ctx = await requireSession(req);
      return { credentials: await store.read((tx) => listVault(tx, ctx.user.id)) };
    });

    app.put(
      "/api/me/vault/:name",
      { ...pub, schema: { params: VaultParams, body: VaultBody } },
      async (req) => {
        const ctx = await requireChange(req);
        return {
          credential: await store.transaction((tx) =>
            putVaultSecret(tx, ctx.user.id, req.params.name, req.body, hub.cipher),
          ),
        };
      },
    );

    app.delete("/api/me/vault/:name", { ...pub, schema: { params: VaultParams } }, async (req) => {
      const ctx = await requireChange(req);
      return store.transaction((tx) => deleteVaultSecret(tx, ctx.user.id, req.params.name));
    });
  };
}

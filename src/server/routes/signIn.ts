// Signing in on the web (the key page's "Sign in"): authorization code + PKCE (S256) at the
// identity provider, the state bound to this browser by a short-lived cookie; the callback exchanges
// the code, verifies the access token like any other, signs the identity in (linking it to an open
// session's account) and opens a session. Logout ends it.
import { createHash, randomBytes } from "node:crypto";
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyReply } from "fastify";
import { Type } from "typebox";
import { randomBase62 } from "../../lib/ids.ts";
import { ServiceError } from "../domain/errors.ts";
import { holdTokens, signInIdentity } from "../domain/identities.ts";
import {
  createSession,
  readCookie,
  SESSION_COOKIE,
  SESSION_TTL_MS,
  sessionGuard,
  setCookie,
} from "../http/session.ts";
import { CallbackRejected, TokenEndpointError, TokenRejected } from "../identity/provider.ts";
import type { RouteDeps } from "./deps.ts";

const LOGIN_COOKIE = "txtfs_login";
const LOGIN_TTL_MS = 10 * 60 * 1000;
const SIGN_IN_SCOPES =
  "openid profile email offline_access files:read files:write files:share context:read context:write";

interface PendingLogin {
  verifier: string;
  redirectUri: string;
  /** The account of a session already open: the new identity is linked to it. */
  linkTo?: string;
  expiresAt: number;
}

const b64url = (b: Buffer) => b.toString("base64url");
const seeOther = (reply: FastifyReply, to: string) => reply.code(303).header("location", to).send();

/** Registered inside the key page plugin (it parses the forms). */
export function signInRoutes({ store, identity: hub }: RouteDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    // Pending sign-ins live in this process for their 10 minutes (see README "Status").
    const pending = new Map<string, PendingLogin>();
    const pub = { config: { scope: "public" as const } };
    const { loadSession, requireChange } = sessionGuard(store);

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
        setCookie(req, reply, LOGIN_COOKIE, state, LOGIN_TTL_MS / 1000, "/auth");
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
          readCookie(req, LOGIN_COOKIE) !== q.state
        ) {
          throw signInFailed("the sign-in state is unknown, expired or belongs to another browser");
        }
        pending.delete(q.state);
        setCookie(req, reply, LOGIN_COOKIE, "", 0, "/auth");
        let verified: Awaited<ReturnType<typeof provider.verify>>;
        let tokens: Awaited<ReturnType<typeof provider.exchangeCallback>>;
        try {
          // The provider's answer as it came (error, state, RFC 9207 iss are checked there).
          const callback = new URLSearchParams(
            Object.entries(q).filter((e): e is [string, string] => typeof e[1] === "string"),
          );
          tokens = await provider.exchangeCallback(callback, q.state, login.redirectUri, login.verifier);
          verified = await provider.verify(tokens.accessToken);
        } catch (err) {
          if (err instanceof CallbackRejected) throw signInFailed(err.message);
          if (err instanceof TokenEndpointError) {
            throw err.status >= 400 && err.status < 500
              ? signInFailed(`the identity provider refused the code (${err.oauthError}: ${err.message})`)
              : signInFailed(`the identity provider's token endpoint failed (${err.message})`, 502);
          }
          if (err instanceof TokenRejected)
            throw signInFailed(`the issued access token is not accepted (${err.message})`);
          throw err;
        }
        const raw = await store.transaction(async (tx) => {
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
          return createSession(tx, user.id, identity.id);
        });
        setCookie(req, reply, SESSION_COOKIE, raw, SESSION_TTL_MS / 1000);
        return seeOther(reply, "/keys");
      },
    );

    app.post("/auth/logout", pub, async (req, reply) => {
      const ctx = await requireChange(req);
      await store.transaction((tx) => tx.sessions.delete(ctx.idHash));
      setCookie(req, reply, SESSION_COOKIE, "", 0);
      return seeOther(reply, "/keys");
    });
  };
}

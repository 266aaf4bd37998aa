// Authentication: a bearer API key or an OAuth access token of the configured identity provider
// (a JWT verified against its JWKS). The `session` cookie is for key management only and never
// authenticates a file operation.
import type { FastifyRequest } from "fastify";
import { LRUCache } from "lru-cache";
import type { Store } from "../../store/store.ts";
import { authenticateKey, loadKey } from "../domain/accounts.ts";
import type { Actor } from "../domain/actor.ts";
import { ServiceError } from "../domain/errors.ts";
import { heldTokensOf, holdTokens, signInIdentity } from "../domain/identities.ts";
import { AI_READ, keyScopesOfOAuth } from "../domain/scopes.ts";
import type { IdentityHub } from "../identity/hub.ts";
import { TokenRejected, type VerifiedToken } from "../identity/provider.ts";
import type { KeyUsage } from "./usage.ts";

const CHALLENGE = 'Bearer realm="txtfs"';

const unauthorized = (code: string, message: string, resolution: string, credentialSent: boolean) =>
  new ServiceError(401, code, message, resolution, undefined, {
    "WWW-Authenticate": credentialSent ? `${CHALLENGE}, error="invalid_token"` : CHALLENGE,
  });

const KEY_FAILURES = {
  invalid_api_key: [
    "The API key is not valid.",
    "Check that you copied the whole key (txt_...), or mint a new one.",
  ],
  api_key_revoked: [
    "This API key was revoked.",
    "Mint a new key (txtfs admin key add, or the key page) and use it.",
  ],
  api_key_expired: [
    "This API key has expired.",
    "Mint a new key (txtfs admin key add, or the key page) and use it.",
  ],
} as const;

function sourceOf(request: FastifyRequest): string {
  const s = request.headers["x-txtfs-source"];
  return typeof s === "string" && /^[a-z][a-z0-9-]{0,31}$/.test(s) ? s : "api";
}

const JWT = /^[\w-]+\.[\w-]+\.[\w-]+$/;

/** Access tokens already seen by this process (their identity's held token is up to date). */
const seenTokens = new LRUCache<string, true>({ max: 10_000 });

/** Maps a verified access token to its account (created on first sign-in) and keeps it as held token. */
async function oauthActor(
  request: FastifyRequest,
  store: Store,
  hub: IdentityHub,
  token: string,
): Promise<Actor> {
  const provider = hub.provider;
  if (!provider) {
    throw unauthorized(
      "invalid_token",
      "This server accepts no OAuth access tokens: no identity provider is configured.",
      "Send an API key (txt_...) instead.",
      true,
    );
  }
  let v: VerifiedToken;
  try {
    v = await provider.verify(token);
  } catch (err) {
    if (!(err instanceof TokenRejected)) throw err;
    const expired = err.code === "token_expired";
    throw new ServiceError(
      401,
      err.code,
      err.message,
      expired
        ? "Refresh the access token at the identity provider's token endpoint (txtfs login refreshes by itself), then retry."
        : `Sign in with ${provider.config.name} (txtfs login) and send its access token, or use an API key.`,
      undefined,
      {
        "WWW-Authenticate": `${CHALLENGE}, error="invalid_token", error_description="${expired ? "expired" : "invalid"}"`,
      },
    );
  }
  const key = `identity:${v.issuer} ${v.subject}`;
  let found = await store.memoized(key, async (tx) => {
    const identity = await tx.identities.bySubject(v.issuer, v.subject);
    const user = identity ? await tx.users.byId(identity.user_id) : undefined;
    return identity && user ? { identity, user } : null;
  });
  const seen = v.jti ? seenTokens.has(v.jti) : false;
  if (!found || !seen) {
    // First sign-in (the account is created) or a new token: hold the freshest one for the identity.
    found = await store.transaction(async (tx) => {
      const { user, identity } = await signInIdentity(tx, {
        provider: provider.config.name,
        issuer: v.issuer,
        subject: v.subject,
        email: v.email,
        username: v.username,
        name: v.name,
        wallet: v.wallet,
      });
      const held = heldTokensOf(identity, hub.cipher);
      if (!held || held.expiresAt < v.expiresAt) {
        const tokens = {
          accessToken: token,
          refreshToken: held?.refreshToken ?? null,
          expiresAt: v.expiresAt,
        };
        await holdTokens(tx, identity.id, tokens, hub.cipher);
      }
      return { user, identity };
    });
    if (v.jti) seenTokens.set(v.jti, true);
  }
  return {
    userId: found.user.id,
    email: found.user.email,
    name: found.user.name,
    principal: `oauth:${found.identity.id}`,
    scopes: keyScopesOfOAuth(v.scopes),
    source: sourceOf(request),
    identityId: found.identity.id,
  };
}

export async function authenticate(
  request: FastifyRequest,
  store: Store,
  usage: KeyUsage,
  hub: IdentityHub,
): Promise<Actor> {
  const header = request.headers.authorization;
  if (!header) {
    if (/(?:^|;\s*)session=/.test(request.headers.cookie ?? "")) {
      throw unauthorized(
        "session_not_accepted",
        "The session cookie is only for managing API keys; it does not authorize file operations.",
        "Send an API key or OAuth access token as Authorization: Bearer <token>.",
        false,
      );
    }
    throw unauthorized(
      "unauthenticated",
      "No credentials were sent.",
      "Send Authorization: Bearer <API key or OAuth access token>.",
      false,
    );
  }
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!m) {
    throw unauthorized(
      "invalid_token",
      "The Authorization header is not a bearer token.",
      "Send Authorization: Bearer <API key>.",
      true,
    );
  }
  const token = m[1]!;
  if (JWT.test(token)) return oauthActor(request, store, hub, token);
  const check = await authenticateKey(token, (hash) =>
    store.memoized(`key:${hash}`, (tx) => loadKey(tx, hash)),
  );
  if (!check.ok) {
    const [message, resolution] = KEY_FAILURES[check.code];
    throw unauthorized(check.code, message, resolution, true);
  }
  usage.record(check.keyId);
  return {
    userId: check.user.id,
    email: check.user.email,
    name: check.user.name,
    principal: check.keyId,
    scopes: new Set(check.scopes),
    source: sourceOf(request),
  };
}

export function requireScope(actor: Actor, scope: string): void {
  if (scope === "any" || actor.scopes.has(scope)) return;
  if (scope === AI_READ && actor.scopes.has("ai:use")) return; // ai:use includes reading the brain's state
  throw new ServiceError(
    403,
    "insufficient_scope",
    `This operation needs the ${scope} scope, which your ${actor.identityId ? "access token" : "key"} does not have.`,
    `Use a key with the ${scope} scope (keys' scopes are fixed when minted), or an access token with the OAuth scope that grants it (README "Scopes").`,
    { requiredScopes: [scope] },
    { "WWW-Authenticate": `${CHALLENGE}, error="insufficient_scope", scope="${scope}"` },
  );
}

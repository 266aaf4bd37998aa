// Authentication: a bearer API key (OAuth access tokens arrive with sign-in). The `session` cookie
// is for key management only and never authenticates a file operation.
import type { FastifyRequest } from "fastify";
import type { Store } from "../../store/store.ts";
import { authenticateKey, loadKey } from "../domain/accounts.ts";
import type { Actor } from "../domain/actor.ts";
import { ServiceError } from "../domain/errors.ts";
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

export async function authenticate(request: FastifyRequest, store: Store, usage: KeyUsage): Promise<Actor> {
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
      "Send Authorization: Bearer <API key>.",
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
  if (actor.scopes.has(scope)) return;
  throw new ServiceError(
    403,
    "insufficient_scope",
    `This operation needs the ${scope} scope, which your key does not have.`,
    `Use a key with the ${scope} scope (keys' scopes are fixed when minted).`,
    { requiredScopes: [scope] },
    { "WWW-Authenticate": `${CHALLENGE}, error="insufficient_scope", scope="${scope}"` },
  );
}

// Key scopes of the spec. Which scope each operation needs is declared on its route (README table).
export const KEY_SCOPES = [
  "files:read",
  "files:write",
  "folders:read",
  "folders:write",
  "collaboration:read",
  "collaboration:write",
  "shares:read",
  "shares:write",
  "ai:use",
] as const;

export type KeyScope = (typeof KEY_SCOPES)[number];

export function isKeyScope(s: string): s is KeyScope {
  return (KEY_SCOPES as readonly string[]).includes(s);
}

/**
 * Reading the brain's state (ideation status and records, workspace context, proposals, the model
 * list) needs `ai:read`: not a key scope of its own — a key with `ai:use` has it, and so has an OAuth
 * token with `context:read` or `context:write`.
 */
export const AI_READ = "ai:read";
export type RouteScope = KeyScope | typeof AI_READ;

/**
 * What an OAuth access token's scopes allow, in key scopes (README "Scopes of OAuth tokens"):
 * the identity provider's coarser scopes cover several key scopes each.
 */
export const OAUTH_SCOPE_GRANTS: Readonly<Record<string, readonly RouteScope[]>> = {
  "files:read": ["files:read", "folders:read", "collaboration:read"],
  "files:write": ["files:write", "folders:write", "collaboration:write"],
  "files:share": ["shares:read", "shares:write"],
  "context:read": [AI_READ],
  "context:write": ["ai:use", AI_READ],
};

export function keyScopesOfOAuth(oauthScopes: readonly string[]): Set<string> {
  const out = new Set<string>();
  for (const s of oauthScopes) for (const k of OAUTH_SCOPE_GRANTS[s] ?? []) out.add(k);
  return out;
}

/** The OAuth scopes of the spec (the identity provider grants them; txtfs maps them above). */
export const OAUTH_SCOPES = [
  "openid",
  "profile",
  "email",
  "wallet",
  "offline_access",
  "files:read",
  "files:write",
  "files:share",
  "context:read",
  "context:write",
  "mcp:use",
] as const;

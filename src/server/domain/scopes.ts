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

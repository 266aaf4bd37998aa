/** Who is calling: resolved once per request by authentication, passed to every domain call. */
export interface Actor {
  userId: string;
  email: string;
  name: string;
  /** Key id or token subject: what rate limits and idempotency keys are scoped to. */
  principal: string;
  scopes: ReadonlySet<string>;
  /** What made the change, recorded on versions: `api`, `mount`, `import`, ... */
  source: string;
  /** The identity an OAuth access token was issued to (absent for API keys). */
  identityId?: string;
  /** An OAuth access token's own scopes (absent for API keys): `mcp:use` admits it to /mcp. */
  oauthScopes?: ReadonlySet<string>;
}

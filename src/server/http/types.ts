import type { Actor } from "../domain/actor.ts";
import type { RouteScope } from "../domain/scopes.ts";

declare module "fastify" {
  interface FastifyRequest {
    actor?: Actor;
  }
  interface FastifyContextConfig {
    /**
     * Key scope the route needs; `public` routes need no credentials; `any` needs a valid
     * credential and no particular scope (identities, realtime capability).
     */
    scope?: RouteScope | "public" | "any";
    /** Outside rate limiting (health probes, metrics scrapes): no points spent, no RateLimit-* headers. */
    unmetered?: boolean;
    /**
     * The route honours `If-Match` against the record's ETag. A mutation of a record without an
     * ETag refuses the header (400 `if_match_not_supported`) rather than ignore it: a client that
     * sends it believes it is protected from overwriting someone else's change.
     */
    ifMatch?: true;
    /** A method registered only to answer 405 (not listed in `Allow`). */
    notOffered?: true;
  }
}

/** Rate-limit cost of a request: reads 1 point, writes 5 (GitHub's model); a 304 or a 429 is free. */
export function costOf(method: string, status: number): number {
  if (status === 304 || status === 429) return 0;
  return method === "GET" || method === "HEAD" || method === "OPTIONS" ? 1 : 5;
}

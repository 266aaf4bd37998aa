// Registered as an onRoute hook before any route: completes each route's schema with what follows
// from how the service works rather than from the route itself — errors every route of its kind can
// answer, its security requirement (from `config.scope`) and an operationId when it has none — so a
// route added later (another branch, another plugin) is documented the same way without a list.
import type { RouteOptions } from "fastify";
import { OAUTH_SCOPE_GRANTS } from "../domain/scopes.ts";
import { BRAIN_OPERATIONS } from "../routes/brainOperations.ts";
import { errorResponse } from "./describe.ts";

/** OAuth scopes that grant a key scope (the reverse of OAUTH_SCOPE_GRANTS). */
export function oauthScopesFor(keyScope: string): string[] {
  return Object.entries(OAUTH_SCOPE_GRANTS)
    .filter(([, keys]) => (keys as readonly string[]).includes(keyScope))
    .map(([oauth]) => oauth);
}

/** `POST /api/v1/files/:id/share` -> `postApiV1FilesIdShare`: for routes that name no operation. */
export function fallbackOperationId(method: string, url: string): string {
  const words = [method.toLowerCase(), ...url.split(/[^A-Za-z0-9]+/).filter(Boolean)];
  return words.map((w, i) => (i === 0 ? w : w[0]!.toUpperCase() + w.slice(1))).join("");
}

type Schema = Record<string, unknown> & { response?: Record<string, unknown> };

export function completeRoute(route: RouteOptions): void {
  const method = [route.method].flat()[0] as string;
  if (method === "HEAD" || method === "OPTIONS") return;
  const schema: Schema = { ...((route.schema as Schema | undefined) ?? {}) };
  if (schema.hide) return;
  const scope = route.config?.scope as string | undefined;
  const session = schema["x-surface"] === "session";
  const signIn = schema["x-surface"] === "signIn";
  const known = BRAIN_OPERATIONS[`${method} ${route.url}`];
  // The brain's writes take an Idempotency-Key (a replay does not ask the model again).
  if (known && method === "POST") schema["x-request-headers"] ??= ["Idempotency-Key"];
  const headers = (schema["x-request-headers"] as string[] | undefined) ?? [];
  if (known && !schema.operationId) {
    schema.operationId = known.id;
    schema["x-verb"] ??= known.verb;
    schema.summary ??= known.summary;
    schema.tags ??= ["brain"];
  }
  // A route that names no area goes on the reference page of its family (every operation is on one).
  schema.tags ??= [
    /\/(ideation|ideate|context|artifacts|transcriptions|search|ai)(\/|$)/.test(route.url)
      ? "brain"
      : "service",
  ];
  if (route.config?.unmetered) schema["x-unmetered"] = true;
  schema.operationId ??= fallbackOperationId(method, route.url);
  const response: Record<string, unknown> = { ...(schema.response ?? {}) };
  // Without any declared response the route stays undocumented: the document flags it
  // (x-undocumented) and the contract test fails on it rather than inventing a 200.
  if (!schema.response) schema["x-undocumented"] = true;
  const add = (status: number, meaning?: string) => {
    response[status] ??= errorResponse(status, meaning);
  };
  if (schema.body || schema.querystring || schema.params) add(400);
  if (schema.body) {
    add(413);
    add(415);
  }
  if (headers.includes("Idempotency-Key")) {
    add(400);
    add(409, "A request with this Idempotency-Key is still being processed (Retry-After: 1).");
    add(422);
  }
  if (headers.includes("If-Match")) add(412);
  if ((scope && scope !== "public") || session) add(401);
  if ((scope && scope !== "public" && scope !== "any") || session) add(403);
  if (/:\w/.test(route.url) && !signIn) add(404);
  add(429);
  add(500);
  if (scope && scope !== "public" && !schema.security) {
    schema.security =
      scope === "any"
        ? [{ apiKey: [] }, { oauth2: [] }]
        : [{ apiKey: [scope] }, { oauth2: oauthScopesFor(scope) }];
  } else if (!schema.security && !session) {
    schema.security = [];
  }
  schema.response = response;
  route.schema = schema;
}

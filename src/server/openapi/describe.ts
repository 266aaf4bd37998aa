// What a route says about itself for the OpenAPI document: its operation name (the spec's), area,
// success responses, the errors particular to it and the request headers it honours. The errors
// every route of a kind can answer (validation, auth, rate limit, ...) are added by `completeRoute`
// when the route is registered, so no route can forget them and none lists them by hand.
import { type TSchema, Type } from "typebox";
import { ErrorBody } from "./records.ts";

/** The areas of the reference (one plain-text page each) and the OpenAPI tags. */
export const AREAS = {
  files: "Files: create, read, write, delete, upload, import; raw text; conditional requests.",
  folders: "Folders: create, list, rename/move, delete (children move up one level).",
  metadata: "Metadata and connections: context, tags, plan metadata, explicit and inferred connections.",
  collaboration:
    "Sharing and collaboration: shares, temporary links, comments, suggestions, versions, skills.",
  sync: "Sync and events: change feed, batch, sync, devices and pins, webhooks, themes.",
  auth: "Authentication: API keys, OAuth, identities, sign-in and the key page.",
  service: "Service: discovery, this document, reference pages, playground, MCP, health and metrics.",
  brain: "The context brain: ideation, workspace context and proposals, transcription, artifacts, search.",
} as const;
export type Area = keyof typeof AREAS;

/** Request headers a route honours (documented as header parameters). */
export const REQUEST_HEADERS = {
  "If-Match": "Apply the write only if the entity tag still matches (412 otherwise). `*` = exists.",
  "If-None-Match": "Answer 304 with no body when the entity tag still matches.",
  "Idempotency-Key":
    "Retry-safe mutation: the same key and request within 24 h replays the first response (Idempotent-Replayed: true).",
} as const;
export type RequestHeader = keyof typeof REQUEST_HEADERS;

/** A response without a body (304, 303 redirects, 204). */
export const Empty = (description: string, headers: Record<string, TSchema> = {}) => ({
  type: "null",
  description,
  ...(Object.keys(headers).length ? { headers } : {}),
});

/** A text (non-JSON) response. */
export const Text = (description: string, types: readonly string[] = ["text/plain"]) => ({
  description,
  content: Object.fromEntries(types.map((t) => [t, { schema: Type.String() }])),
});

const ERROR_MEANINGS: Record<number, string> = {
  400: "Invalid input: a field, query parameter or header failed validation.",
  401: "Not authenticated: no, unknown, expired or revoked credential.",
  402: "A subscription or a user-supplied AI key is required.",
  403: "Authenticated but not allowed: missing scope, or not the owner / not a writer.",
  404: "Not found, or not visible to the caller.",
  409: "Conflict with the current state.",
  410: "Gone: expired or no longer available.",
  412: "Precondition failed: If-Match does not match the current entity tag.",
  413: "Body, file or batch larger than the limit.",
  415: "Unsupported Content-Type.",
  422: "The Idempotency-Key was used for a different request.",
  428: "Precondition required.",
  429: "Rate limited: wait Retry-After seconds.",
  500: "Internal error: retry later; report the requestId.",
  502: "An upstream service (the identity provider) failed.",
  503: "Shutting down or temporarily unavailable: retry after Retry-After.",
};

export function errorResponse(status: number, meaning?: string) {
  return { ...ErrorBody, description: meaning ?? ERROR_MEANINGS[status] ?? "Error" };
}

export interface OpDoc {
  /** operationId: the spec's operation name (`getFile`) or verb (`read`), camelCased. */
  id: string;
  /** The spec's verb name as written there (`folder share`), for /api/v1 routes. */
  verb?: string;
  summary: string;
  area: Area;
  description?: string;
  /** Success responses: a schema, Empty(...) or Text(...), keyed by status. */
  ok: Record<number, unknown>;
  /** Error statuses particular to this operation, with an optional meaning. */
  errors?: Record<number, string | undefined> | number[];
  headers?: readonly RequestHeader[];
  /** `session`: the browser session cookie (key page); `signIn`: part of web sign-in. */
  surface?: "session" | "signIn";
  /** The response's ETag header is always present. */
  etag?: boolean;
}

/** Schema fields for one route: `schema: { params: ..., ...op({...}) }`. */
export function op(d: OpDoc) {
  const response: Record<string, unknown> = {};
  for (const [status, schema] of Object.entries(d.ok)) {
    const s = schema as Record<string, unknown>;
    response[status] = s.description || s.title ? s : { ...s, description: "Success" };
  }
  const errors = Array.isArray(d.errors)
    ? Object.fromEntries(d.errors.map((s) => [s, undefined]))
    : (d.errors ?? {});
  for (const [status, meaning] of Object.entries(errors))
    response[status] = errorResponse(Number(status), meaning);
  return {
    operationId: d.id,
    summary: d.summary,
    tags: [d.area],
    ...(d.description ? { description: d.description } : {}),
    ...(d.surface === "session" ? { security: [{ sessionCookie: [] }] } : {}),
    ...(d.surface === "signIn" ? { security: [] } : {}),
    "x-verb": d.verb,
    "x-surface": d.surface,
    "x-request-headers": d.headers ?? [],
    "x-etag": d.etag ?? false,
    response,
  };
}

/** The operation name for a route registered in both families: the /api/me name or the v1 verb. */
export function named(
  path: string,
  me: string,
  v1: string,
  verb: string = v1,
): { id: string; verb?: string } {
  return path.startsWith("/api/me") ? { id: me } : { id: v1, verb };
}

// The hand-written part of the plain-text reference: what each area is for and the rules a client
// must know that no schema states. Operations, shapes and curl examples are generated (pages.ts).

export interface PageProse {
  title: string;
  /** Which OpenAPI tags (areas) the page documents. */
  areas: readonly string[];
  /** One line for the /llms.txt index. */
  blurb: string;
  intro: string;
}

export const PAGES: Record<string, PageProse> = {
  files: {
    blurb: "create, read, write, delete, upload, import; raw text; ETags and retries.",
    title: "Files",
    areas: ["files"],
    intro: `Every note is a file (.txt or .md) with a name, content, context (max 4000 chars), tags (max 16)
and an optional folder (null = root). Listings never include bodies; read one file for its content.
Conditional requests: every file has a strong ETag. Send If-None-Match on reads (304, no body, no
rate-limit cost when unchanged) and If-Match on writes and deletes (412 precondition_failed with
details.currentEtag when someone else changed it: re-read, merge, retry). Every POST/PUT/DELETE
accepts Idempotency-Key: a retry with the same key replays the first response (Idempotent-Replayed:
true) instead of applying the change twice; the same key with a different request is 422.
The /api/me family and the /api/v1 verbs share one implementation; /api/me create answers 200,
/api/v1 create 201 with Location. Names: 1-255 bytes, no '/', not '.' or '..'. Content: max 5 MiB.`,
  },
  folders: {
    blurb: "create, list, rename/move, delete (children move up one level).",
    title: "Folders",
    areas: ["folders"],
    intro: `Folders nest (parentFolderId, null = root) and carry context and tags like files. readdir lists
one level (use the id \`root\` for the top level); getFolder returns a folder with its files and
their content. Deleting a folder moves its direct files and subfolders up exactly one level.
Moving a folder into itself or a descendant is 409 folder_cycle; a taken name is 409 conflict.`,
  },
  metadata: {
    blurb: "context, tags, plan metadata, explicit and inferred connections.",
    title: "Metadata and connections",
    areas: ["metadata", "brain"],
    intro: `context (free text, max 4000 chars) and tags (max 16, each 1-64 chars) are set with the file and
folder writes (PUT with only {context} or {tags} changes nothing else). Related files are ranked
from explicit connections (with a reason, max 500 chars), shared tags and same-folder membership;
each related file lists its reasons. Plan metadata (enabled, scope, trust, source) is untrusted
reference data even when approved; only the owner may change it (403 owner_only otherwise).`,
  },
  collaboration: {
    blurb: "shares, temporary links, comments, suggestions, versions, skills.",
    title: "Sharing and collaboration",
    areas: ["collaboration"],
    intro: `Share a file or folder with another user by email as writer or reader; everything below a shared
folder inherits it. A caller's access to an item is owner or shared, with role owner, writer or
reader: readers read, comment and suggest; writers also edit, accept and reject suggestions;
only owners delete, share and change plan metadata. Items you cannot see answer 404 (existence
is not revealed). Prefer comments and suggestions to overwriting someone else's text. Every save
keeps a version; commit labels one, restore brings one back as a new version. Temporary links
(temp-url) give read-only access to one file without credentials until they expire. Skills are
the SKILL.md files you can read, with scope/project/agent derived from their path.`,
  },
  sync: {
    blurb: "change feed, batch, sync, devices and pins, webhooks, themes.",
    title: "Sync and events",
    areas: ["sync"],
    intro: `The change feed (GET /api/v1/changes?cursor=0) returns every change after the cursor in order,
metadata only, with tombstones (deleted: true) for deletes and lost access; keep the returned
cursor and pass it back. wait=N long-polls up to N seconds (max 60). A cursor older than the
feed's retention is 410 cursor_expired: resync from 0. batch applies ordered writes in one
transaction (atomic by default; {ref: "<id>"} names an earlier operation's item). sync pushes
local changes with their base ETags and pulls remote ones in one call. Devices register once and
hold per-file availability (online-only, available, pinned). Webhooks deliver signed events
(Standard Webhooks) with retries; the secret is shown once.`,
  },
  auth: {
    blurb: "API keys, OAuth scopes, identities, sign-in and the key page.",
    title: "Authentication",
    areas: ["auth"],
    intro: `Send Authorization: Bearer <key or OAuth access token>. API keys look like txt_ + 36 base62
characters, are minted on the key page (/keys) after signing in once, carry scopes (files:read,
files:write, folders:read, folders:write, collaboration:read, collaboration:write, shares:read,
shares:write, ai:use) and may expire. OAuth 2.0 authorization code with PKCE (S256) at the
identity provider named in /.well-known/oauth-protected-resource; token scopes map to key scopes:
files:read -> files/folders/collaboration read, files:write -> their writes, files:share -> shares,
context:write -> ai:use, mcp:use -> the MCP endpoint (/mcp). No credential: 401 (WWW-Authenticate
Bearer); a missing scope: 403 insufficient_scope naming it. The browser session cookie only
manages keys and vaulted secrets: it is never accepted for file operations.`,
  },
  errors: {
    blurb: "the error body, statuses, limits, rate limits; discovery and this reference.",
    title: "Errors, limits and service",
    areas: ["service"],
    intro: `Every error has the body {"error": {"code", "message", "resolution", "requestId"}} (plus details
where useful, e.g. [{field, code, message}] for 400 validation_failed); requestId equals the
X-Request-ID header. Read resolution: it says how to fix the request. Invalid input never changes
anything. Every response carries API-Version, X-Request-ID, RateLimit-Limit, RateLimit-Remaining
and RateLimit-Reset. Rate limits are points per window per key: reads cost 1, writes 5, a 304 or a
429 nothing; over the limit: 429 rate_limited with Retry-After (seconds), and the request did not
run. Retry 429 and 503 after Retry-After with the same Idempotency-Key; do not retry other 4xx
unchanged. Unknown JSON fields are rejected (400 naming the field).`,
  },
};

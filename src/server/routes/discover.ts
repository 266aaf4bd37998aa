// GET /api/v1 (discover): the verbs this server serves, machine-readable, no credentials needed.
import type { FastifyPluginAsync } from "fastify";
import { LIMITS } from "../domain/limits.ts";
import { KEY_SCOPES, OAUTH_SCOPE_GRANTS, OAUTH_SCOPES } from "../domain/scopes.ts";
import type { IdentityHub } from "../identity/hub.ts";

/** The spec's verb names (and additive ones) for each /api/v1 route; tests check each is served. */
export const VERBS = [
  ["discover", "GET", "/api/v1", "Machine-readable list of verbs (this document)."],
  [
    "list",
    "GET",
    "/api/v1/files",
    "List files (metadata only), `limit` and `cursor` paging, optional `folderId`.",
  ],
  ["read", "GET", "/api/v1/files/:id", "One file with its content; ETag, If-None-Match -> 304."],
  ["raw", "GET", "/api/v1/files/:id/raw", "The file's text (text/plain or text/markdown)."],
  ["write", "PUT", "/api/v1/files/:id", "Update content and/or metadata; If-Match -> 412 on mismatch."],
  ["create", "POST", "/api/v1/files", "Create a file from JSON."],
  [
    "upload",
    "POST",
    "/api/v1/files/upload",
    "Create a file from a text/plain or text/markdown body; `?name=`.",
  ],
  ["import", "POST", "/api/v1/files/import", "Create many files with folder paths in one transaction."],
  ["unlink", "DELETE", "/api/v1/files/:id", "Delete a file (owner only)."],
  ["readdir", "GET", "/api/v1/folders/:id", "A folder's subfolders and files (`root` for the top level)."],
  ["mkdir", "POST", "/api/v1/folders", "Create a folder."],
  ["rename-folder", "PUT", "/api/v1/folders/:id", "Rename, move or retag a folder."],
  ["rmdir", "DELETE", "/api/v1/folders/:id", "Delete a folder; its direct children move up one level."],
  ["connect", "POST", "/api/v1/files/:id/connections", "Create or update an explicit connection."],
  ["connections", "GET", "/api/v1/files/:id/connections", "Ranked related files with reasons."],
  [
    "disconnect",
    "DELETE",
    "/api/v1/files/:id/connections",
    "Remove an explicit connection (`?targetFileId=`).",
  ],
  ["plan", "GET", "/api/v1/files/:id/plan", "Plan metadata."],
  ["plan-save", "PUT", "/api/v1/files/:id/plan", "Save plan metadata (owner only)."],
  ["changes", "GET", "/api/v1/changes", "Change feed from `cursor` (0 = everything); `wait` long-polls."],
  ["users", "GET", "/api/v1/identities", "Identities linked to the account, and the active one."],
  ["use", "PATCH", "/api/v1/identities", "Select the active identity (`{id}`)."],
] as const;

/** `scopeOf("GET /api/v1/files")` -> the key scope that route needs, as registered. */
export function discoverRoutes(
  scopeOf: (route: string) => string | undefined,
  hub?: IdentityHub,
): FastifyPluginAsync {
  return async (app) => {
    app.get("/api/v1", { config: { scope: "public" } }, async () => ({
      name: "txtfs",
      description: "Remote Text Filesystem Service",
      apiVersion: "v1",
      version: "1.0.0",
      status: "beta",
      authentication: {
        header: "Authorization: Bearer <API key or OAuth access token>",
        keyPrefix: "txt_",
        scopes: KEY_SCOPES,
        // Sign-in (null when this server accepts API keys only): what `txtfs login` needs.
        oauth: hub?.provider
          ? {
              provider: hub.provider.config.name,
              issuer: hub.provider.config.issuer,
              clientId: hub.provider.config.clientId,
              audience: hub.provider.config.audience,
              scopes: OAUTH_SCOPES,
              scopeGrants: OAUTH_SCOPE_GRANTS,
              keyPage: "/keys",
            }
          : null,
      },
      limits: {
        contextChars: LIMITS.contextChars,
        tags: LIMITS.tags,
        reasonChars: LIMITS.reasonChars,
        planSourceChars: LIMITS.planSourceChars,
        nameBytes: LIMITS.nameBytes,
        fileBytes: LIMITS.contentBytes,
        pageSizeDefault: LIMITS.pageDefault,
        pageSizeMax: LIMITS.pageMax,
        importFiles: LIMITS.importFiles,
      },
      verbs: VERBS.map(([verb, method, path, description]) => ({
        verb,
        method,
        path,
        scope: scopeOf(`${method} ${path}`) ?? null,
        description,
      })),
    }));
  };
}

// GET /api/v1 (discover): the verbs this server serves, machine-readable, no credentials needed.
import type { FastifyPluginAsync } from "fastify";
import { LIMITS } from "../domain/limits.ts";
import { KEY_SCOPES } from "../domain/scopes.ts";

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
  ["share", "POST", "/api/v1/shares", "Share a file (or folder) with a user by email as writer or reader."],
  [
    "shares",
    "GET",
    "/api/v1/shares",
    "Shares you granted or received; `fileId`/`folderId` for one resource.",
  ],
  ["share-get", "GET", "/api/v1/shares/:id", "One share."],
  ["share-update", "PATCH", "/api/v1/shares/:id", "Change a share's role or expiry (owner only)."],
  ["share-revoke", "DELETE", "/api/v1/shares/:id", "Revoke a share (owner), or leave it (grantee)."],
  ["folder share", "POST", "/api/v1/folders/:id/share", "Share a folder: everything below inherits it."],
  ["temp-url", "POST", "/api/v1/files/:id/share", "Mint an expiring read-only link (GET /t/:token)."],
  ["temp-urls", "GET", "/api/v1/files/:id/share", "A file's temporary links (no tokens)."],
  ["temp-url-revoke", "DELETE", "/api/v1/files/:id/share/:itemId", "Revoke a temporary link."],
  ["comment", "POST", "/api/v1/files/:id/comments", "Comment, optionally on a selection of the text."],
  ["comments", "GET", "/api/v1/files/:id/comments", "A file's comments (`resolved=true|false`)."],
  ["comment-get", "GET", "/api/v1/files/:id/comments/:itemId", "One comment."],
  ["comment-update", "PATCH", "/api/v1/files/:id/comments/:itemId", "Edit the body, or resolve/reopen."],
  ["resolve", "POST", "/api/v1/files/:id/comments/:itemId/resolve", "Resolve a comment."],
  ["reopen", "POST", "/api/v1/files/:id/comments/:itemId/reopen", "Reopen a resolved comment."],
  ["comment-delete", "DELETE", "/api/v1/files/:id/comments/:itemId", "Delete a comment (author or owner)."],
  ["suggest", "POST", "/api/v1/files/:id/suggestions", "Suggest replacing a selection of the text."],
  ["suggestions", "GET", "/api/v1/files/:id/suggestions", "A file's suggestions (`status=`)."],
  ["suggestion-get", "GET", "/api/v1/files/:id/suggestions/:itemId", "One suggestion."],
  ["accept", "POST", "/api/v1/files/:id/suggestions/:itemId/accept", "Accept: the text changes (writer)."],
  ["reject", "POST", "/api/v1/files/:id/suggestions/:itemId/reject", "Reject a suggestion (writer)."],
  ["review", "PATCH", "/api/v1/files/:id/suggestions/:itemId", "Accept or reject with `{status}`."],
  ["commit", "POST", "/api/v1/files/:id/versions", "Label a version (the current one by default)."],
  ["versions", "GET", "/api/v1/files/:id/versions", "Version history, newest first, no bodies."],
  ["version", "GET", "/api/v1/files/:id/versions/:version", "One version with its content."],
  ["restore", "POST", "/api/v1/files/:id/versions/:version/restore", "Restore a version as a new one."],
  ["skills", "GET", "/api/v1/skills", "Every SKILL.md you can read, as TxtSkill records."],
  ["theme", "GET", "/api/v1/theme", "The account theme, or one file's/folder's (`fileId`/`folderId`)."],
  ["theme-save", "PUT", "/api/v1/theme", "Save `themeId`, `overrides` with the current `revision`."],
] as const;

/** `scopeOf("GET /api/v1/files")` -> the key scope that route needs, as registered. */
export function discoverRoutes(scopeOf: (route: string) => string | undefined): FastifyPluginAsync {
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

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
  [
    "batch",
    "POST",
    "/api/v1/batch",
    "Ordered writes in one transaction (atomic by default); `{ref}` names an earlier operation's item.",
  ],
  [
    "sync",
    "POST",
    "/api/v1/sync",
    "Push local changes with their base ETags, pull remote changes since `cursor`.",
  ],
  [
    "events",
    "POST",
    "/api/v1/webhooks",
    "Register a webhook (Standard Webhooks signing); the secret is shown once.",
  ],
  ["webhooks", "GET", "/api/v1/webhooks", "List webhooks with their status and disabled reason."],
  ["webhook", "GET", "/api/v1/webhooks/:id", "One webhook."],
  [
    "webhook-update",
    "PATCH",
    "/api/v1/webhooks/:id",
    "Change url, events, description; `status` enables/disables.",
  ],
  ["webhook-delete", "DELETE", "/api/v1/webhooks/:id", "Remove a webhook and its queued deliveries."],
  ["webhook-ping", "POST", "/api/v1/webhooks/:id/ping", "Queue a signed webhook.ping to test the endpoint."],
  ["deliveries", "GET", "/api/v1/webhooks/:id/deliveries", "Delivery log: attempts, status codes, errors."],
  [
    "redeliver",
    "POST",
    "/api/v1/webhooks/:id/deliveries/:deliveryId/redeliver",
    "Send a delivery again under the same webhook-id.",
  ],
  ["device", "POST", "/api/v1/devices", "Register a device (name, platform)."],
  ["devices", "GET", "/api/v1/devices", "List your devices."],
  ["device-get", "GET", "/api/v1/devices/:id", "One device."],
  ["device-remove", "DELETE", "/api/v1/devices/:id", "Remove a device and its states."],
  [
    "pin",
    "PUT",
    "/api/v1/devices/:id/state",
    "Set availability (online-only, available, pinned) of files/folders.",
  ],
  [
    "device-state",
    "GET",
    "/api/v1/devices/:id/state",
    "The device's states, explicit and effective per file.",
  ],
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
        batchOperations: LIMITS.batchOps,
        batchBytes: LIMITS.batchBytes,
        syncPush: LIMITS.syncPush,
        syncBytes: LIMITS.syncBytes,
        deviceStateItems: LIMITS.deviceStateItems,
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

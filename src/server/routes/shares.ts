// Sharing: POST /api/v1/shares (share), POST /api/v1/folders/:id/share (folder share), and the
// additive list/read/change/revoke routes of a share.
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import { invalid } from "../domain/errors.ts";
import { createShare, getShare, listShares, revokeShare, updateShare } from "../domain/shares.ts";
import { actorOf, mutate } from "../http/mutation.ts";
import { named, op } from "../openapi/describe.ts";
import { ShareEnvelope, TxtShare } from "../openapi/records.ts";
import type { RouteDeps } from "./deps.ts";
import { FolderShareBody, IdParams, ShareCreateBody, ShareListQuery, ShareUpdateBody } from "./schemas.ts";

const read = { config: { scope: "shares:read" as const } };
const write = { config: { scope: "shares:write" as const } };

export function shareRoutes({ store }: RouteDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    for (const path of ["/api/me/shares", "/api/v1/shares"]) {
      const listDoc = op({
        ...named(path, "listShares", "shares"),
        area: "collaboration",
        summary: "Shares you granted or received; `fileId`/`folderId` for one resource.",
        ok: { 200: Type.Object({ shares: Type.Array(TxtShare) }) },
        errors: { 404: "`fileId` or `folderId` names nothing visible to you." },
      });
      const createDoc = op({
        ...named(path, "createShare", "share"),
        area: "collaboration",
        summary:
          "Share a file or folder with a user by email as writer or reader (200 when it already existed).",
        ok: { 200: ShareEnvelope, 201: ShareEnvelope },
        errors: { 403: undefined, 404: "The file, folder or user does not exist." },
        headers: ["Idempotency-Key"],
      });
      app.get(path, { ...read, schema: { querystring: ShareListQuery, ...listDoc } }, async (req) =>
        store.read((tx) => listShares(tx, actorOf(req), req.query)),
      );
      app.post(path, { ...write, schema: { body: ShareCreateBody, ...createDoc } }, (req, reply) =>
        mutate(store, req, reply, async (tx, actor) => {
          const { fileId, folderId, ...input } = req.body;
          if (!fileId === !folderId) throw invalid("fileId", "give exactly one of fileId and folderId");
          const out = await createShare(tx, actor, fileId ? "file" : "folder", (fileId ?? folderId)!, input);
          return {
            status: out.created ? 201 : 200,
            body: out,
            headers: out.created ? { Location: out.share.endpoint } : undefined,
          };
        }),
      );
    }

    for (const path of ["/api/me/folders/:id/share", "/api/v1/folders/:id/share"]) {
      const doc = op({
        ...named(path, "shareFolder", "folderShare", "folder share"),
        area: "collaboration",
        summary: "Share a folder: everything below it inherits the share.",
        ok: { 200: ShareEnvelope, 201: ShareEnvelope },
        headers: ["Idempotency-Key"],
      });
      app.post(
        path,
        { ...write, schema: { params: IdParams, body: FolderShareBody, ...doc } },
        (req, reply) =>
          mutate(store, req, reply, async (tx, actor) => {
            const out = await createShare(tx, actor, "folder", req.params.id, req.body);
            return {
              status: out.created ? 201 : 200,
              body: out,
              headers: out.created ? { Location: out.share.endpoint } : undefined,
            };
          }),
      );
    }

    for (const path of ["/api/me/shares/:id", "/api/v1/shares/:id"]) {
      const getDoc = op({
        ...named(path, "getShare", "shareGet", "share-get"),
        area: "collaboration",
        summary: "One share.",
        ok: { 200: Type.Object({ share: TxtShare }) },
      });
      const patchDoc = op({
        ...named(path, "updateShare", "shareUpdate", "share-update"),
        area: "collaboration",
        summary: "Change a share's role or expiry (owner only).",
        ok: { 200: ShareEnvelope },
        headers: ["Idempotency-Key"],
      });
      const deleteDoc = op({
        ...named(path, "revokeShare", "shareRevoke", "share-revoke"),
        area: "collaboration",
        summary: "Revoke a share (owner), or leave it (grantee).",
        ok: {
          200: Type.Object({
            id: Type.String(),
            revoked: Type.Literal(true),
            seq: Type.Optional(Type.Integer()),
          }),
        },
        headers: ["Idempotency-Key"],
      });
      app.get(path, { ...read, schema: { params: IdParams, ...getDoc } }, async (req) =>
        store.read(async (tx) => ({ share: await getShare(tx, actorOf(req), req.params.id) })),
      );
      app.patch(
        path,
        { ...write, schema: { params: IdParams, body: ShareUpdateBody, ...patchDoc } },
        (req, reply) =>
          mutate(store, req, reply, async (tx, actor) => ({
            status: 200,
            body: await updateShare(tx, actor, req.params.id, req.body),
          })),
      );
      app.delete(path, { ...write, schema: { params: IdParams, ...deleteDoc } }, (req, reply) =>
        mutate(store, req, reply, async (tx, actor) => ({
          status: 200,
          body: await revokeShare(tx, actor, req.params.id),
        })),
      );
    }
  };
}

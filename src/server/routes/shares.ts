// Sharing: POST /api/v1/shares (share), POST /api/v1/folders/:id/share (folder share), and the
// additive list/read/change/revoke routes of a share.
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { invalid } from "../domain/errors.ts";
import { createShare, getShare, listShares, revokeShare, updateShare } from "../domain/shares.ts";
import { actorOf, mutate } from "../http/mutation.ts";
import type { RouteDeps } from "./deps.ts";
import { FolderShareBody, IdParams, ShareCreateBody, ShareListQuery, ShareUpdateBody } from "./schemas.ts";

const read = { config: { scope: "shares:read" as const } };
const write = { config: { scope: "shares:write" as const } };

export function shareRoutes({ store }: RouteDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    for (const path of ["/api/me/shares", "/api/v1/shares"]) {
      app.get(path, { ...read, schema: { querystring: ShareListQuery } }, async (req) =>
        store.read((tx) => listShares(tx, actorOf(req), req.query)),
      );
      app.post(path, { ...write, schema: { body: ShareCreateBody } }, (req, reply) =>
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
      app.post(path, { ...write, schema: { params: IdParams, body: FolderShareBody } }, (req, reply) =>
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
      app.get(path, { ...read, schema: { params: IdParams } }, async (req) =>
        store.read(async (tx) => ({ share: await getShare(tx, actorOf(req), req.params.id) })),
      );
      app.patch(path, { ...write, schema: { params: IdParams, body: ShareUpdateBody } }, (req, reply) =>
        mutate(store, req, reply, async (tx, actor) => ({
          status: 200,
          body: await updateShare(tx, actor, req.params.id, req.body),
        })),
      );
      app.delete(path, { ...write, schema: { params: IdParams } }, (req, reply) =>
        mutate(store, req, reply, async (tx, actor) => ({
          status: 200,
          body: await revokeShare(tx, actor, req.params.id),
        })),
      );
    }
  };
}

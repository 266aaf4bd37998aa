// Folders in both path families, plus the v1 readdir/mkdir verbs.
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import {
  createFolder,
  deleteFolder,
  getFolderWithFiles,
  listFolders,
  readDirectory,
  updateFolder,
} from "../domain/folders.ts";
import { folderEndpoint, toTxtFolder } from "../domain/records.ts";
import { actorOf, mutate } from "../http/mutation.ts";
import type { RouteDeps } from "./deps.ts";
import { FolderCreateBody, FolderUpdateBody, IdParams } from "./schemas.ts";

const read = { config: { scope: "folders:read" as const } };
const write = { config: { scope: "folders:write" as const } };

export function folderRoutes({ store }: RouteDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get("/api/me/folders", read, async (req) =>
      store.read(async (tx) => ({ folders: await listFolders(tx, actorOf(req)) })),
    );

    app.get("/api/me/folders/:id", { ...read, schema: { params: IdParams } }, async (req) =>
      store.read((tx) => getFolderWithFiles(tx, actorOf(req), req.params.id)),
    );

    // readdir: `root` names the top level.
    app.get("/api/v1/folders/:id", { ...read, schema: { params: IdParams } }, async (req) =>
      store.read((tx) => readDirectory(tx, actorOf(req), req.params.id)),
    );

    for (const [path, status] of [
      ["/api/me/folders", 200],
      ["/api/v1/folders", 201],
    ] as const) {
      app.post(path, { ...write, schema: { body: FolderCreateBody } }, (req, reply) =>
        mutate(store, req, reply, async (tx, actor) => {
          const { folder, role, seq } = await createFolder(tx, actor, req.body);
          return {
            status,
            body: { folder: toTxtFolder(folder, role, 0), seq },
            headers: { Location: folderEndpoint(folder.id) },
          };
        }),
      );
    }

    for (const path of ["/api/me/folders/:id", "/api/v1/folders/:id"]) {
      app.put(path, { ...write, schema: { params: IdParams, body: FolderUpdateBody } }, (req, reply) =>
        mutate(store, req, reply, async (tx, actor) => {
          const { folder, role, seq } = await updateFolder(tx, actor, req.params.id, req.body);
          const count = (await tx.folders.fileCounts([folder.id])).get(folder.id) ?? 0;
          return { status: 200, body: { folder: toTxtFolder(folder, role, count), seq } };
        }),
      );
      app.delete(path, { ...write, schema: { params: IdParams } }, (req, reply) =>
        mutate(store, req, reply, async (tx, actor) => ({
          status: 200,
          body: await deleteFolder(tx, actor, req.params.id),
        })),
      );
    }
  };
}

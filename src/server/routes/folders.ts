// Folders in both path families, plus the v1 readdir/mkdir verbs.
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
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
import { named, op } from "../openapi/describe.ts";
import { FolderEnvelope, TxtFile, TxtFolder, TxtFolderWithFiles } from "../openapi/records.ts";
import type { RouteDeps } from "./deps.ts";
import { FolderCreateBody, FolderUpdateBody, IdParams } from "./schemas.ts";

const read = { config: { scope: "folders:read" as const } };
const write = { config: { scope: "folders:write" as const } };

const Directory = Type.Object({
  folder: Type.Union([TxtFolder, Type.Null()], { description: "null for `root`" }),
  folders: Type.Array(TxtFolder),
  files: Type.Array(TxtFile),
});
const FolderDeleted = Type.Object({
  id: Type.String(),
  deleted: Type.Literal(true),
  movedTo: Type.Union([Type.String(), Type.Null()]),
  movedFileIds: Type.Array(Type.String()),
  movedFolderIds: Type.Array(Type.String()),
  seq: Type.Optional(Type.Integer()),
});

export function folderRoutes({ store }: RouteDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    const listDoc = op({
      id: "listFolders",
      area: "folders",
      summary: "Every folder you can read (metadata).",
      ok: { 200: Type.Object({ folders: Type.Array(TxtFolder) }) },
    });
    app.get("/api/me/folders", { ...read, schema: listDoc }, async (req) =>
      store.read(async (tx) => ({ folders: await listFolders(tx, actorOf(req)) })),
    );

    const getDoc = op({
      id: "getFolder",
      area: "folders",
      summary: "One folder with its files, including their content.",
      ok: { 200: TxtFolderWithFiles },
    });
    app.get("/api/me/folders/:id", { ...read, schema: { params: IdParams, ...getDoc } }, async (req) =>
      store.read((tx) => getFolderWithFiles(tx, actorOf(req), req.params.id)),
    );

    // readdir: `root` names the top level.
    const readdirDoc = op({
      id: "readdir",
      verb: "readdir",
      area: "folders",
      summary: "A folder's subfolders and files, metadata only (`root` for the top level).",
      ok: { 200: Directory },
    });
    app.get("/api/v1/folders/:id", { ...read, schema: { params: IdParams, ...readdirDoc } }, async (req) =>
      store.read((tx) => readDirectory(tx, actorOf(req), req.params.id)),
    );

    for (const [path, status] of [
      ["/api/me/folders", 200],
      ["/api/v1/folders", 201],
    ] as const) {
      const doc = op({
        ...named(path, "createFolder", "mkdir"),
        area: "folders",
        summary: "Create a folder (`parentFolderId` null or omitted: at the root).",
        ok: { [status]: FolderEnvelope },
        errors: { 404: "parentFolderId names no folder you can write.", 409: "The name is taken there." },
        headers: ["Idempotency-Key"],
      });
      app.post(path, { ...write, schema: { body: FolderCreateBody, ...doc } }, (req, reply) =>
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
      const putDoc = op({
        ...named(path, "updateFolder", "renameFolder", "rename-folder"),
        area: "folders",
        summary: "Rename, move (`parentFolderId`) or retag a folder.",
        ok: { 200: FolderEnvelope },
        errors: { 409: "The name is taken there, or the move would put the folder inside itself." },
        headers: ["Idempotency-Key"],
      });
      const deleteDoc = op({
        ...named(path, "deleteFolder", "rmdir"),
        area: "folders",
        summary: "Delete a folder; its direct files and subfolders move up one level.",
        ok: { 200: FolderDeleted },
        errors: { 409: "A moved child's name is taken in the parent." },
        headers: ["Idempotency-Key"],
      });
      app.put(
        path,
        { ...write, schema: { params: IdParams, body: FolderUpdateBody, ...putDoc } },
        (req, reply) =>
          mutate(store, req, reply, async (tx, actor) => {
            const { folder, role, seq } = await updateFolder(tx, actor, req.params.id, req.body);
            const count = (await tx.folders.fileCounts([folder.id])).get(folder.id) ?? 0;
            return { status: 200, body: { folder: toTxtFolder(folder, role, count), seq } };
          }),
      );
      app.delete(path, { ...write, schema: { params: IdParams, ...deleteDoc } }, (req, reply) =>
        mutate(store, req, reply, async (tx, actor) => ({
          status: 200,
          body: await deleteFolder(tx, actor, req.params.id),
        })),
      );
    }
  };
}

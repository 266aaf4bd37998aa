// Files in both path families: the spec's /api/me/files... operations and the /api/v1 verbs.
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyReply } from "fastify";
import type { FileRow, Role } from "../../store/repos/rows.ts";
import { requireFile } from "../domain/access.ts";
import { connectFiles, disconnectFiles, relatedFiles } from "../domain/connections.ts";
import { ServiceError } from "../domain/errors.ts";
import { createFile, deleteFile, updateFile, updatePlan } from "../domain/files.ts";
import { importFiles } from "../domain/importer.ts";
import { flatIndex, listFilesPage, overview } from "../domain/listing.ts";
import { fileEndpoint, toPlan, toTxtFileDetail } from "../domain/records.ts";
import { notModified, parseIfMatch } from "../http/conditional.ts";
import { actorOf, mutate } from "../http/mutation.ts";
import type { RouteDeps } from "./deps.ts";
import {
  ConnectBody,
  DisconnectQuery,
  FileCreateBody,
  FileUpdateBody,
  IdParams,
  ImportBody,
  ListQuery,
  PlanBody,
  UploadQuery,
} from "./schemas.ts";

const read = { config: { scope: "files:read" as const } };
const write = { config: { scope: "files:write" as const } };
const writeIfMatch = { config: { scope: "files:write" as const, ifMatch: true as const } };

function cacheHeaders(reply: FastifyReply, etag: string) {
  reply.header("ETag", etag).header("Cache-Control", "private, no-cache").header("Vary", "Authorization");
}

/** `text/plain` unless the client accepts `text/markdown` (and not text/plain first) for an md note. */
export function rawType(type: string, accept: string | undefined): "text/plain" | "text/markdown" {
  if (type !== "md" || !accept) return "text/plain";
  const wanted = accept.split(",").map((part) => part.split(";")[0]!.trim().toLowerCase());
  const md = wanted.indexOf("text/markdown");
  const plain = wanted.indexOf("text/plain");
  return md !== -1 && (plain === -1 || md < plain) ? "text/markdown" : "text/plain";
}

const fileBody = (file: FileRow, role: Role, seq?: number) => ({
  file: toTxtFileDetail(file, role),
  ...(seq !== undefined ? { seq } : {}),
});

export function fileRoutes({ store }: RouteDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get("/api/me", read, async (req) => store.read((tx) => overview(tx, actorOf(req))));
    app.get("/api/me/files", read, async (req) => store.read((tx) => flatIndex(tx, actorOf(req))));

    app.get("/api/v1/files", { ...read, schema: { querystring: ListQuery } }, async (req) =>
      store.read((tx) => listFilesPage(tx, actorOf(req), req.query)),
    );

    // Single-file read (both families): the ETag check happens before the body is loaded.
    for (const [path, raw] of [
      ["/api/me/files/:id", false],
      ["/api/v1/files/:id", false],
      ["/api/me/files/:id/raw", true],
      ["/api/v1/files/:id/raw", true],
    ] as const) {
      app.get(path, { ...read, schema: { params: IdParams } }, async (req, reply) => {
        // The common revalidation (the owner's If-None-Match still current) is answered from the
        // store's read cache, without loading anything.
        const inm = req.headers["if-none-match"];
        if (inm) {
          const meta = await store.memoized(`etag:${req.params.id}`, async (tx) => {
            const row = await tx.files.metaById(req.params.id);
            return row ? { owner: row.owner_id, etag: row.etag } : null;
          });
          if (meta && meta.owner === req.actor?.userId && notModified(inm, meta.etag)) {
            cacheHeaders(reply, meta.etag);
            return reply.code(304).send();
          }
        }
        const result = await store.read(async (tx) => {
          const { file, role } = await requireFile(tx, actorOf(req), req.params.id, "reader");
          if (notModified(req.headers["if-none-match"], file.etag)) return { etag: file.etag };
          return { etag: file.etag, file, role };
        });
        cacheHeaders(reply, result.etag);
        if (!result.file) return reply.code(304).send();
        if (raw) {
          // The spec's raw body is text/plain; a client that asks for Markdown gets it for md notes.
          return reply
            .type(`${rawType(result.file.type, req.headers.accept)}; charset=utf-8`)
            .header("Vary", "Authorization, Accept")
            .send(result.file.content);
        }
        return toTxtFileDetail(result.file, result.role);
      });
    }

    // create: /api/me answers 200 (the spec's table), /api/v1 201 with Location.
    for (const [path, status] of [
      ["/api/me/files", 200],
      ["/api/v1/files", 201],
    ] as const) {
      app.post(path, { ...write, schema: { body: FileCreateBody } }, (req, reply) =>
        mutate(store, req, reply, async (tx, actor) => {
          const { file, role, seq } = await createFile(tx, actor, req.body);
          return {
            status,
            body: fileBody(file, role, seq),
            headers: { ETag: file.etag, Location: fileEndpoint(file.id) },
          };
        }),
      );
    }

    app.post("/api/v1/files/upload", { ...write, schema: { querystring: UploadQuery } }, (req, reply) => {
      if (typeof req.body !== "string") {
        throw new ServiceError(
          415,
          "unsupported_media_type",
          "upload takes the file's text as the body.",
          "Send the content with Content-Type: text/plain or text/markdown and the name in ?name=.",
        );
      }
      const body = req.body;
      const tags = req.query.tags
        ?.split(",")
        .map((t) => t.trim())
        .filter(Boolean);
      return mutate(store, req, reply, async (tx, actor) => {
        const { file, role, seq } = await createFile(tx, actor, {
          name: req.query.name,
          content: body,
          folderId: req.query.folderId ?? null,
          context: req.query.context,
          tags,
          // The name's extension decides; for a name without .md/.txt, a text/markdown body means md.
          fileType:
            !/\.(md|txt)$/i.test(req.query.name) && req.headers["content-type"]?.startsWith("text/markdown")
              ? "md"
              : undefined,
        });
        return {
          status: 201,
          body: fileBody(file, role, seq),
          headers: { ETag: file.etag, Location: fileEndpoint(file.id) },
        };
      });
    });

    app.post(
      "/api/v1/files/import",
      { ...write, bodyLimit: 64 * 1024 * 1024, schema: { body: ImportBody } },
      (req, reply) =>
        mutate(store, req, reply, async (tx, actor) => ({
          status: 200,
          body: await importFiles(
            tx,
            { ...actor, source: actor.source === "api" ? "import" : actor.source },
            req.body,
          ),
        })),
    );

    for (const path of ["/api/me/files/:id", "/api/v1/files/:id"]) {
      app.put(path, { ...writeIfMatch, schema: { params: IdParams, body: FileUpdateBody } }, (req, reply) =>
        mutate(store, req, reply, async (tx, actor) => {
          const ifMatch = parseIfMatch(req.headers["if-match"]);
          const { file, role, seq } = await updateFile(tx, actor, req.params.id, req.body, ifMatch);
          return { status: 200, body: fileBody(file, role, seq), headers: { ETag: file.etag } };
        }),
      );
    }

    app.delete("/api/v1/files/:id", { ...writeIfMatch, schema: { params: IdParams } }, (req, reply) =>
      mutate(store, req, reply, async (tx, actor) => ({
        status: 200,
        body: await deleteFile(tx, actor, req.params.id, parseIfMatch(req.headers["if-match"])),
      })),
    );

    for (const base of ["/api/me/files/:id/plan", "/api/v1/files/:id/plan"]) {
      app.get(base, { ...read, schema: { params: IdParams } }, async (req) =>
        store.read(async (tx) => ({
          plan: toPlan((await requireFile(tx, actorOf(req), req.params.id)).file),
        })),
      );
      app.put(base, { ...write, schema: { params: IdParams, body: PlanBody } }, (req, reply) =>
        mutate(store, req, reply, async (tx, actor) => {
          const { file } = await updatePlan(tx, actor, req.params.id, req.body);
          return { status: 200, body: { fileId: file.id, plan: toPlan(file) } };
        }),
      );
    }

    for (const base of ["/api/me/files/:id/connections", "/api/v1/files/:id/connections"]) {
      app.get(base, { ...read, schema: { params: IdParams } }, async (req) =>
        store.read((tx) => relatedFiles(tx, actorOf(req), req.params.id)),
      );
      app.post(base, { ...write, schema: { params: IdParams, body: ConnectBody } }, (req, reply) =>
        mutate(store, req, reply, async (tx, actor) => {
          // 200 for both creating and updating (the spec's table); `created` tells which.
          return { status: 200, body: await connectFiles(tx, actor, req.params.id, req.body) };
        }),
      );
      app.delete(
        base,
        { ...write, schema: { params: IdParams, querystring: DisconnectQuery } },
        (req, reply) =>
          mutate(store, req, reply, async (tx, actor) => ({
            status: 200,
            body: await disconnectFiles(tx, actor, req.params.id, req.query.targetFileId),
          })),
      );
    }
  };
}

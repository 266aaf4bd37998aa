// Files in both path families: the spec's /api/me/files... operations and the /api/v1 verbs.
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyReply } from "fastify";
import { type TSchema, Type } from "typebox";
import { LISTING_LINES_HEADER } from "../../lib/apiTypes.ts";
import type { FileRow, Role } from "../../store/repos/rows.ts";
import { requireFile } from "../domain/access.ts";
import { connectFiles, disconnectFiles } from "../domain/connections.ts";
import { ServiceError } from "../domain/errors.ts";
import { createFile, deleteFile, updateFile, updatePlan } from "../domain/files.ts";
import { importFiles } from "../domain/importer.ts";
import { unresolvedFrom } from "../domain/links/linkListing.ts";
import { listFilesPage, overview, writeFlatIndex } from "../domain/listing.ts";
import { fileEndpoint, toPlan, toTxtFileDetail } from "../domain/records.ts";
import { relatedFiles } from "../domain/related.ts";
import { notModified, parseIfMatch } from "../http/conditional.ts";
import { actorOf, mutate } from "../http/mutation.ts";
import { streamWhileReading } from "../http/streamWhileReading.ts";
import { Empty, op, Text } from "../openapi/describe.ts";
import {
  FileEnvelope,
  PlanEnvelope,
  PlanSaved,
  TxtFile,
  TxtFileDetail,
  TxtFolder,
  TxtIdentity,
  User,
} from "../openapi/records.ts";
import { TxtAttachment } from "./attachmentSchemas.ts";
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

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const Scopes = Type.Array(Type.String(), {
  description: "The caller's key scopes (an OAuth token's, as the key scopes they grant): what it may do.",
});
const Overview = Type.Object({
  user: User,
  scopes: Type.Optional(Scopes),
  identity: Nullable(TxtIdentity),
  folders: Type.Array(TxtFolder),
  rootFiles: Type.Array(TxtFile),
  rootAttachments: Type.Optional(
    Type.Array(TxtAttachment, {
      description:
        "Additive: your top-level files that are not notes (attachments); rootFiles stays notes only.",
    }),
  ),
  attachmentLimits: Type.Optional(
    Type.Object(
      {
        maxBytes: Type.Integer({
          description: "The largest attachment this service takes (bytes); larger is 413.",
        }),
        quotaBytes: Type.Integer({
          description: "What all your attachments may take together (bytes); more is 507.",
        }),
        usedBytes: Type.Integer({ description: "What your attachments take now (bytes)." }),
      },
      {
        description:
          "Additive: the attachments' limits, so a client refuses a file at once instead of after it was accepted.",
      },
    ),
  ),
});
const FlatIndex = Type.Object({
  files: Type.Array(TxtFile),
  folders: Type.Array(TxtFolder),
  owners: Type.Optional(Type.Unknown()),
  scopes: Type.Optional(Scopes),
  cursor: Type.Integer({ description: "Change-feed cursor this index is current at." }),
});
const FilesPage = Type.Object({
  files: Type.Array(TxtFile),
  nextCursor: Nullable(Type.String()),
  hasMore: Type.Boolean(),
});
const ImportResult = Type.Object({
  files: Type.Array(
    Type.Object({ path: Type.String(), id: Type.String(), name: Type.String(), status: Type.String() }),
  ),
  folders: Type.Array(Type.Object({ path: Type.String(), id: Type.String() })),
  summary: Type.Object({
    created: Type.Integer(),
    updated: Type.Integer(),
    unchanged: Type.Integer(),
    skipped: Type.Integer(),
    copied: Type.Integer(),
    foldersCreated: Type.Integer(),
  }),
});
const UnresolvedLink = Type.Object({
  text: Type.String({ description: "The link as written, e.g. `[[Note#Heading]]`." }),
  path: Type.String({ description: "The path it names, decoded, without `#heading` or `|alias`." }),
  embed: Type.Boolean({ description: "`![[…]]`: an embed rather than a link." }),
});
const Related = Type.Object({
  fileId: Type.String(),
  unresolved: Type.Optional(
    Type.Array(UnresolvedLink, { description: "The note's links that name no note (yet)." }),
  ),
  connections: Type.Array(
    Type.Object({
      file: TxtFile,
      score: Type.Optional(Type.Number()),
      reasons: Type.Array(Type.Object({ type: Type.String() })),
    }),
  ),
});
const Connection = Type.Object({
  connection: Type.Object({
    fileId: Type.String(),
    targetFileId: Type.String(),
    reason: Type.String({ maxLength: 500 }),
    createdAt: Type.String({ format: "date-time" }),
    updatedAt: Type.String({ format: "date-time" }),
  }),
  created: Type.Boolean(),
});
const Disconnected = Type.Object({
  fileId: Type.String(),
  targetFileId: Type.String(),
  removed: Type.Boolean(),
});
const NotModified = Empty("Not modified: If-None-Match matches the current ETag. No body.");

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

export function fileRoutes({ store, attachments }: RouteDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    const overviewDoc = op({
      id: "listFiles",
      area: "files",
      summary: "The signed-in user, their identity, every folder and the root files (metadata only).",
      ok: { 200: Overview },
    });
    app.get("/api/me", { ...read, schema: overviewDoc }, async (req) =>
      store.read(async (tx) => {
        const actor = actorOf(req);
        const usedBytes = await tx.attachments.bytesOwned(actor.userId);
        const { maxBytes, quotaBytes } = attachments;
        return { ...(await overview(tx, actor)), attachmentLimits: { maxBytes, quotaBytes, usedBytes } };
      }),
    );
    const flatDoc = op({
      id: "listFlatFiles",
      area: "files",
      summary: "Flat metadata index of every file and folder you can read; no bodies.",
      ok: { 200: FlatIndex },
    });
    app.get("/api/me/files", { ...read, schema: flatDoc }, async (req, reply) => {
      // Streamed as it is read (writeFlatIndex): a mount lists 100,000 notes without waiting for the
      // whole text.
      const body = await streamWhileReading((write) =>
        store.read((tx) => writeFlatIndex(tx, actorOf(req), write)),
      );
      return reply.type("application/json; charset=utf-8").header(LISTING_LINES_HEADER, "lines").send(body);
    });

    const listDoc = op({
      id: "list",
      verb: "list",
      area: "files",
      summary: "List files (metadata only), paged with `limit` and `cursor`; optional `folderId`.",
      ok: { 200: FilesPage },
      errors: { 404: "`folderId` names no folder you can see." },
    });
    app.get("/api/v1/files", { ...read, schema: { querystring: ListQuery, ...listDoc } }, async (req) =>
      store.read((tx) => listFilesPage(tx, actorOf(req), req.query)),
    );

    // Single-file read (both families): the ETag check happens before the body is loaded.
    for (const [path, raw, id, verb] of [
      ["/api/me/files/:id", false, "getFile", undefined],
      ["/api/v1/files/:id", false, "read", "read"],
      ["/api/me/files/:id/raw", true, "getFileRaw", undefined],
      ["/api/v1/files/:id/raw", true, "raw", "raw"],
    ] as const) {
      const doc = op({
        id,
        verb,
        area: "files",
        summary: raw
          ? "The file's text as text/plain or text/markdown (not JSON)."
          : "One file with its content. ETag; If-None-Match answers 304 when unchanged.",
        ok: {
          200: raw ? Text("The file's text.", ["text/plain", "text/markdown"]) : TxtFileDetail,
          304: NotModified,
        },
        headers: ["If-None-Match"],
        etag: true,
      });
      app.get(path, { ...read, schema: { params: IdParams, ...doc } }, async (req, reply) => {
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
    for (const [path, status, id] of [
      ["/api/me/files", 200, "createFile"],
      ["/api/v1/files", 201, "create"],
    ] as const) {
      const doc = op({
        id,
        verb: id === "create" ? "create" : undefined,
        area: "files",
        summary: "Create a file from JSON (`name` required; type from the extension unless `fileType`).",
        ok: { [status]: FileEnvelope },
        errors: { 404: "folderId names no folder you can write.", 409: undefined },
        headers: ["Idempotency-Key"],
        etag: true,
      });
      app.post(path, { ...write, schema: { body: FileCreateBody, ...doc } }, (req, reply) =>
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

    const uploadDoc = op({
      id: "upload",
      verb: "upload",
      area: "files",
      summary: "Create a file from a text/plain or text/markdown body; the name in `?name=`.",
      ok: { 201: FileEnvelope },
      errors: { 404: "folderId names no folder you can write.", 413: undefined, 415: undefined },
      headers: ["Idempotency-Key"],
      etag: true,
    });
    const uploadSchema = {
      querystring: UploadQuery,
      ...uploadDoc,
      // Documentation of the text body (the route parses it itself; JSON is refused with 415).
      consumes: ["text/plain", "text/markdown"],
    };
    app.post("/api/v1/files/upload", { ...write, schema: uploadSchema }, (req, reply) => {
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
      {
        ...write,
        bodyLimit: 64 * 1024 * 1024,
        schema: {
          body: ImportBody,
          ...op({
            id: "import",
            verb: "import",
            area: "files",
            summary: "Create (or update/skip/copy) many files with folder paths in one transaction.",
            ok: { 200: ImportResult },
            errors: {
              404: "folderId names no folder you can write.",
              409: "onExisting=fail and a path exists.",
            },
            headers: ["Idempotency-Key"],
          }),
        },
      },
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

    for (const [path, id] of [
      ["/api/me/files/:id", "updateFile"],
      ["/api/v1/files/:id", "write"],
    ] as const) {
      const doc = op({
        id,
        verb: id === "write" ? "write" : undefined,
        area: "files",
        summary:
          "Update content and/or metadata (all fields optional). If-Match guards against lost updates.",
        ok: { 200: FileEnvelope },
        errors: { 409: "The new name is taken in the target folder." },
        headers: ["If-Match", "Idempotency-Key"],
        etag: true,
      });
      app.put(
        path,
        { ...writeIfMatch, schema: { params: IdParams, body: FileUpdateBody, ...doc } },
        (req, reply) =>
          mutate(store, req, reply, async (tx, actor) => {
            const ifMatch = parseIfMatch(req.headers["if-match"]);
            const { file, role, seq } = await updateFile(tx, actor, req.params.id, req.body, ifMatch);
            return { status: 200, body: fileBody(file, role, seq), headers: { ETag: file.etag } };
          }),
      );
    }

    const unlinkDoc = op({
      id: "unlink",
      verb: "unlink",
      area: "files",
      summary: "Delete a file (owner only). If-Match guards against deleting a newer version.",
      ok: { 200: Type.Object({ id: Type.String(), deleted: Type.Literal(true), seq: Type.Integer() }) },
      headers: ["If-Match", "Idempotency-Key"],
    });
    app.delete(
      "/api/v1/files/:id",
      { ...writeIfMatch, schema: { params: IdParams, ...unlinkDoc } },
      (req, reply) =>
        mutate(store, req, reply, async (tx, actor) => ({
          status: 200,
          body: await deleteFile(tx, actor, req.params.id, parseIfMatch(req.headers["if-match"])),
        })),
    );

    for (const base of ["/api/me/files/:id/plan", "/api/v1/files/:id/plan"]) {
      const me = base.startsWith("/api/me");
      const getDoc = op({
        id: me ? "getFilePlanMetadata" : "plan",
        verb: me ? undefined : "plan",
        area: "metadata",
        summary: "The file's plan metadata.",
        ok: { 200: PlanEnvelope },
      });
      const putDoc = op({
        id: me ? "updateFilePlanMetadata" : "planSave",
        verb: me ? undefined : "plan-save",
        area: "metadata",
        summary: "Save plan metadata (`enabled`, `scope`, `trust` required). Owner only: others get 403.",
        ok: { 200: PlanSaved },
        headers: ["Idempotency-Key"],
      });
      app.get(base, { ...read, schema: { params: IdParams, ...getDoc } }, async (req) =>
        store.read(async (tx) => ({
          plan: toPlan((await requireFile(tx, actorOf(req), req.params.id)).file),
        })),
      );
      app.put(base, { ...write, schema: { params: IdParams, body: PlanBody, ...putDoc } }, (req, reply) =>
        mutate(store, req, reply, async (tx, actor) => {
          const { file } = await updatePlan(tx, actor, req.params.id, req.body);
          return { status: 200, body: { fileId: file.id, plan: toPlan(file) } };
        }),
      );
    }

    for (const base of ["/api/me/files/:id/connections", "/api/v1/files/:id/connections"]) {
      const me = base.startsWith("/api/me");
      const listDoc = op({
        id: me ? "getFileConnections" : "connections",
        verb: me ? undefined : "connections",
        area: "metadata",
        summary:
          "Ranked related files, each with its reasons (explicit connection, link, backlink, shared tags, same folder, similar text), and the note's unresolved links.",
        ok: { 200: Related },
      });
      const connectDoc = op({
        id: me ? "connectFiles" : "connect",
        verb: me ? undefined : "connect",
        area: "metadata",
        summary: "Create or update an explicit connection to `targetFileId` with an optional `reason`.",
        ok: { 200: Connection },
        headers: ["Idempotency-Key"],
      });
      const disconnectDoc = op({
        id: me ? "disconnectFiles" : "disconnect",
        verb: me ? undefined : "disconnect",
        area: "metadata",
        summary: "Remove the explicit connection to `?targetFileId=`.",
        ok: { 200: Disconnected },
        headers: ["Idempotency-Key"],
      });
      app.get(base, { ...read, schema: { params: IdParams, ...listDoc } }, async (req) =>
        store.read(async (tx) => ({
          ...(await relatedFiles(tx, actorOf(req), req.params.id)),
          unresolved: await unresolvedFrom(tx, actorOf(req), req.params.id),
        })),
      );
      app.post(
        base,
        { ...write, schema: { params: IdParams, body: ConnectBody, ...connectDoc } },
        (req, reply) =>
          mutate(store, req, reply, async (tx, actor) => {
            // 200 for both creating and updating (the spec's table); `created` tells which.
            return { status: 200, body: await connectFiles(tx, actor, req.params.id, req.body) };
          }),
      );
      app.delete(
        base,
        { ...write, schema: { params: IdParams, querystring: DisconnectQuery, ...disconnectDoc } },
        (req, reply) =>
          mutate(store, req, reply, async (tx, actor) => ({
            status: 200,
            body: await disconnectFiles(tx, actor, req.params.id, req.query.targetFileId),
          })),
      );
    }
  };
}

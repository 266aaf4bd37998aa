// The bytes of attachments: create from a raw body, replace, read (whole or a Range), read a version.
// Encapsulated: here every body is bytes, whatever its Content-Type (a .json file is sent as JSON,
// a .txt that is not UTF-8 as text/plain), never parsed or decoded.
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyReply } from "fastify";
import type { AttachmentRow } from "../../store/repos/attachments.ts";
import { attachmentBytes, attachmentVersionBytes, getAttachment } from "../domain/attachments/reads.ts";
import { attachmentEndpoint, toTxtAttachment } from "../domain/attachments/records.ts";
import { attachmentTooLarge } from "../domain/attachments/rules.ts";
import { createAttachment, replaceAttachment } from "../domain/attachments/writes.ts";
import { ServiceError } from "../domain/errors.ts";
import { parseVersionNumber } from "../domain/versions.ts";
import { notModified, parseIfMatch } from "../http/conditional.ts";
import { handleError } from "../http/errors.ts";
import { actorOf, mutate } from "../http/mutation.ts";
import { parseRange } from "../http/ranges.ts";
import { Empty, op } from "../openapi/describe.ts";
import { AttachmentCreateQuery, AttachmentEnvelope, Bytes } from "./attachmentSchemas.ts";
import type { RouteDeps } from "./deps.ts";
import { IdParams, VersionParams } from "./schemas.ts";

const read = { config: { scope: "files:read" as const } };
const write = { config: { scope: "files:write" as const } };
const writeIfMatch = { config: { scope: "files:write" as const, ifMatch: true as const } };

/** Served bytes are never run by a browser on the API's origin (an .svg or .html is someone's file). */
function byteHeaders(reply: FastifyReply, row: Pick<AttachmentRow, "content_type">, etag: string) {
  reply
    .header("ETag", etag)
    .header("Cache-Control", "private, no-cache")
    .header("Vary", "Authorization")
    .header("Accept-Ranges", "bytes")
    .header("X-Content-Type-Options", "nosniff")
    .header("Content-Security-Policy", "default-src 'none'; sandbox")
    .type(row.content_type);
}

const bodyBytes = (body: unknown): Buffer => (Buffer.isBuffer(body) ? body : Buffer.alloc(0));

const envelope = (r: { row: AttachmentRow; role: Parameters<typeof toTxtAttachment>[1]; seq?: number }) => ({
  attachment: toTxtAttachment(r.row, r.role),
  ...(r.seq !== undefined ? { seq: r.seq } : {}),
});

const binaryBody = { "x-binary-body": true } as const;

export function attachmentByteRoutes({ store, attachments: limits }: RouteDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser("*", { parseAs: "buffer", bodyLimit: limits.maxBytes }, (_req, body, done) =>
      done(null, body),
    );
    // A body over the limit is refused before it is read, naming the attachment limit.
    app.setErrorHandler((err: Error & { code?: string }, req, reply) =>
      handleError(err.code === "FST_ERR_CTP_BODY_TOO_LARGE" ? attachmentTooLarge(limits) : err, req, reply),
    );

    for (const [base, status, id] of [
      ["/api/me/attachments", 200, "createAttachment"],
      ["/api/v1/attachments", 201, "attach"],
    ] as const) {
      const doc = op({
        id,
        verb: id === "attach" ? "attach" : undefined,
        area: "files",
        summary:
          "Create an attachment from the raw body (any bytes, any Content-Type), named by `?name=` in `?folderId=`.",
        ok: { [status]: AttachmentEnvelope, ...(status === 201 ? { 200: AttachmentEnvelope } : {}) },
        errors: {
          404: "folderId names no folder you can write.",
          409: "The name is taken in that folder (by an attachment: use onExisting=replace; or by a note).",
          413: "The body is larger than the per-file limit.",
          507: "The owner's attachments would exceed its quota.",
        },
        headers: ["Idempotency-Key"],
        etag: true,
      });
      app.post(
        base,
        {
          ...write,
          bodyLimit: limits.maxBytes,
          schema: { querystring: AttachmentCreateQuery, ...doc, ...binaryBody },
        },
        (req, reply) =>
          mutate(store, req, reply, async (tx, actor) => {
            const r = await createAttachment(tx, actor, limits, {
              name: req.query.name,
              folderId: req.query.folderId === "root" ? null : (req.query.folderId ?? null),
              bytes: bodyBytes(req.body),
              onExisting: req.query.onExisting,
            });
            const created = r.status === 201;
            return {
              status: created ? status : 200,
              body: envelope(r),
              headers: { ETag: r.row.etag, ...(created ? { Location: attachmentEndpoint(r.row.id) } : {}) },
            };
          }),
      );
    }

    for (const [base, getId, putId] of [
      ["/api/me/attachments/:id/raw", "getAttachmentRaw", "replaceAttachment"],
      ["/api/v1/attachments/:id/raw", "attachmentRaw", "attachmentWrite"],
    ] as const) {
      const v1 = base.startsWith("/api/v1");
      const getDoc = op({
        id: getId,
        verb: v1 ? "attachment-raw" : undefined,
        area: "files",
        summary:
          "The attachment's bytes, typed by its name. ETag, 304; Range → 206 (the first range), 416 past the end.",
        ok: {
          200: Bytes("The whole content."),
          206: Bytes("The requested range (Content-Range says which)."),
          304: Empty("Not modified: If-None-Match matches the current ETag."),
        },
        errors: { 416: "The range starts past the end (Content-Range: bytes */SIZE)." },
        headers: ["If-None-Match"],
        etag: true,
      });
      app.get(base, { ...read, schema: { params: IdParams, ...getDoc } }, async (req, reply) => {
        const actor = actorOf(req);
        const result = await store.read(async (tx) => {
          const { row } = await getAttachment(tx, actor, req.params.id);
          if (notModified(req.headers["if-none-match"], row.etag)) return { row };
          const ifRange = req.headers["if-range"];
          const range = parseRange(
            req.headers.range,
            row.size,
            typeof ifRange === "string" ? ifRange : undefined,
            row.etag,
          );
          if (range.kind === "unsatisfiable") return { row, range };
          const part = range.kind === "part" ? ([range.start, range.end] as [number, number]) : undefined;
          return { row, range, bytes: await attachmentBytes(tx, row, part) };
        });
        const { row, range, bytes } = result;
        byteHeaders(reply, row, row.etag);
        if (!range) return reply.code(304).send();
        if (range.kind === "unsatisfiable") {
          throw new ServiceError(
            416,
            "range_not_satisfiable",
            `Range ${req.headers.range} starts past the end of the attachment (${row.size} bytes).`,
            "Ask for bytes within 0..size-1 (size is in the attachment's record), or drop Range for the whole content.",
            { size: row.size },
            { "Content-Range": `bytes */${row.size}` },
          );
        }
        if (range.kind === "part") {
          reply.header("Content-Range", `bytes ${range.start}-${range.end}/${row.size}`);
          return reply.code(206).send(bytes);
        }
        return reply.send(bytes);
      });

      const putDoc = op({
        id: putId,
        verb: v1 ? "attachment-write" : undefined,
        area: "files",
        summary:
          "Replace the attachment's bytes with the raw body (a new version). If-Match guards lost updates.",
        ok: { 200: AttachmentEnvelope },
        errors: {
          413: "The body is larger than the per-file limit.",
          507: "The owner's attachments would exceed its quota.",
        },
        headers: ["If-Match", "Idempotency-Key"],
        etag: true,
      });
      app.put(
        base,
        {
          ...writeIfMatch,
          bodyLimit: limits.maxBytes,
          schema: { params: IdParams, ...putDoc, ...binaryBody },
        },
        (req, reply) =>
          mutate(store, req, reply, async (tx, actor) => {
            const r = await replaceAttachment(
              tx,
              actor,
              limits,
              req.params.id,
              bodyBytes(req.body),
              parseIfMatch(req.headers["if-match"]),
            );
            return { status: 200, body: envelope(r), headers: { ETag: r.row.etag } };
          }),
      );
    }

    app.get(
      "/api/v1/attachments/:id/versions/:version/raw",
      {
        ...read,
        schema: {
          params: VersionParams,
          ...op({
            id: "attachmentVersionRaw",
            verb: "attachment-version",
            area: "collaboration",
            summary: "The bytes of one kept version of an attachment.",
            ok: { 200: Bytes("That version's content.") },
            errors: { 404: "No such attachment visible to you, or no such version (version_not_found)." },
          }),
        },
      },
      async (req, reply) => {
        const n = parseVersionNumber(req.params.version);
        const { row, version, bytes } = await store.read((tx) =>
          attachmentVersionBytes(tx, actorOf(req), req.params.id, n),
        );
        byteHeaders(reply, row, `"v${version.version_number}-${version.content_hash.slice(0, 16)}"`);
        return reply.send(bytes);
      },
    );
  };
}

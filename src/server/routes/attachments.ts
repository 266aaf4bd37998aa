// Attachments in both path families (an extension of the spec): every file that is not a note,
// bytes exact. Records are JSON; content goes in and out as raw bytes (routes in attachmentBytes.ts).
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { getAttachment, listAttachments, listAttachmentVersions } from "../domain/attachments/reads.ts";
import { toTxtAttachment } from "../domain/attachments/records.ts";
import { deleteAttachment, updateAttachment } from "../domain/attachments/writes.ts";
import { notModified, parseIfMatch } from "../http/conditional.ts";
import { actorOf, mutate } from "../http/mutation.ts";
import { Empty, op } from "../openapi/describe.ts";
import { attachmentByteRoutes } from "./attachmentBytes.ts";
import {
  AttachmentDeleted,
  AttachmentEnvelope,
  AttachmentListQuery,
  AttachmentPage,
  AttachmentPatchBody,
  AttachmentVersions,
  TxtAttachment,
} from "./attachmentSchemas.ts";
import type { RouteDeps } from "./deps.ts";
import { IdParams } from "./schemas.ts";

const read = { config: { scope: "files:read" as const } };
const writeIfMatch = { config: { scope: "files:write" as const, ifMatch: true as const } };

/** Operation names: the /api/me family's, then the /api/v1 verb's. */
const NAMES = {
  list: ["listAttachments", "attachments"],
  get: ["getAttachment", "attachment"],
  update: ["updateAttachment", "attachmentUpdate"],
  delete: ["deleteAttachment", "attachmentDelete"],
} as const;

const FAMILIES = [
  ["/api/me/attachments", 0],
  ["/api/v1/attachments", 1],
] as const;

export function attachmentRoutes(deps: RouteDeps): FastifyPluginAsyncTypebox {
  const { store } = deps;
  return async (app) => {
    for (const [base, family] of FAMILIES) {
      const v1 = family === 1;
      const name = (n: keyof typeof NAMES) => ({ id: NAMES[n][family], verb: v1 ? NAMES[n][1] : undefined });
      app.get(
        base,
        {
          ...read,
          schema: {
            querystring: AttachmentListQuery,
            ...op({
              ...name("list"),
              area: "files",
              summary: "List attachments (metadata only), paged; `folderId` (or `root`) for one folder's.",
              ok: { 200: AttachmentPage },
              errors: { 404: "`folderId` names no folder you can see." },
            }),
          },
        },
        async (req) => store.read((tx) => listAttachments(tx, actorOf(req), req.query)),
      );

      app.get(
        `${base}/:id`,
        {
          ...read,
          schema: {
            params: IdParams,
            ...op({
              ...name("get"),
              area: "files",
              summary: "One attachment's record (no bytes). ETag; If-None-Match answers 304.",
              ok: { 200: TxtAttachment, 304: Empty("Not modified: If-None-Match matches the current ETag.") },
              headers: ["If-None-Match"],
              etag: true,
            }),
          },
        },
        async (req, reply) => {
          const { row, role } = await store.read((tx) => getAttachment(tx, actorOf(req), req.params.id));
          reply
            .header("ETag", row.etag)
            .header("Cache-Control", "private, no-cache")
            .header("Vary", "Authorization");
          if (notModified(req.headers["if-none-match"], row.etag)) return reply.code(304).send();
          return toTxtAttachment(row, role);
        },
      );

      app.put(
        `${base}/:id`,
        {
          ...writeIfMatch,
          schema: {
            params: IdParams,
            body: AttachmentPatchBody,
            ...op({
              ...name("update"),
              area: "files",
              summary: "Rename and/or move an attachment (`name`, `folderId`); no bytes are copied.",
              ok: { 200: AttachmentEnvelope },
              errors: { 409: "The name is taken in the target folder (by an attachment or a note)." },
              headers: ["If-Match", "Idempotency-Key"],
              etag: true,
            }),
          },
        },
        (req, reply) =>
          mutate(store, req, reply, async (tx, actor) => {
            const r = await updateAttachment(
              tx,
              actor,
              req.params.id,
              req.body,
              parseIfMatch(req.headers["if-match"]),
            );
            return {
              status: 200,
              body: {
                attachment: toTxtAttachment(r.row, r.role),
                ...(r.seq !== undefined ? { seq: r.seq } : {}),
              },
              headers: { ETag: r.row.etag },
            };
          }),
      );

      app.delete(
        `${base}/:id`,
        {
          ...writeIfMatch,
          schema: {
            params: IdParams,
            ...op({
              ...name("delete"),
              area: "files",
              summary: "Delete an attachment and its versions (owner only). If-Match guards a newer version.",
              ok: { 200: AttachmentDeleted },
              headers: ["If-Match", "Idempotency-Key"],
            }),
          },
        },
        (req, reply) =>
          mutate(store, req, reply, async (tx, actor) => ({
            status: 200,
            body: await deleteAttachment(tx, actor, req.params.id, parseIfMatch(req.headers["if-match"])),
          })),
      );
    }

    app.get(
      "/api/v1/attachments/:id/versions",
      {
        ...read,
        schema: {
          params: IdParams,
          ...op({
            id: "attachmentVersions",
            verb: "attachment-versions",
            area: "collaboration",
            summary: "An attachment's kept versions, newest first (the newest 100; bytes under each `raw`).",
            ok: { 200: AttachmentVersions },
          }),
        },
      },
      async (req) => store.read((tx) => listAttachmentVersions(tx, actorOf(req), req.params.id)),
    );

    await app.register(attachmentByteRoutes(deps));
  };
}

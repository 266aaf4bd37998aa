// temp-url: POST /api/v1/files/:id/share mints a link; GET /t/:token serves the text without credentials.
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import { createTempUrl, listTempUrls, openTempUrl, revokeTempUrl } from "../domain/tempUrls.ts";
import { notModified } from "../http/conditional.ts";
import { actorOf, mutate } from "../http/mutation.ts";
import { Empty, named, op, Text } from "../openapi/describe.ts";
import { TempUrlEnvelope, TxtTempUrl } from "../openapi/records.ts";
import type { RouteDeps } from "./deps.ts";
import { IdParams, ItemParams, TempUrlBody, TokenParams } from "./schemas.ts";

export function tempUrlRoutes({ store }: RouteDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    for (const base of ["/api/me/files/:id/share", "/api/v1/files/:id/share"]) {
      app.post(
        base,
        {
          config: { scope: "shares:write" },
          schema: {
            params: IdParams,
            body: TempUrlBody,
            ...op({
              ...named(base, "createTempUrl", "tempUrl", "temp-url"),
              area: "collaboration",
              summary:
                "Mint an expiring read-only link (GET /t/:token); `expiresIn` seconds. The body may be omitted.",
              ok: { 201: TempUrlEnvelope },
              headers: ["Idempotency-Key"],
            }),
          },
          // Every field is optional, so a POST without a body means "the defaults".
          preValidation: async (req) => {
            req.body ??= {};
          },
        },
        (req, reply) =>
          mutate(store, req, reply, async (tx, actor) => {
            const out = await createTempUrl(tx, actor, req.params.id, req.body ?? {});
            // An absolute URL, as the client reached us (Host as sent).
            const url = `${req.protocol}://${req.host}${out.path}`;
            return { status: 201, body: { tempUrl: { ...out, url } }, headers: { Location: out.path } };
          }),
      );
      const listDoc = op({
        ...named(base, "listTempUrls", "tempUrls", "temp-urls"),
        area: "collaboration",
        summary: "A file's temporary links (without their tokens).",
        ok: { 200: Type.Object({ fileId: Type.String(), tempUrls: Type.Array(TxtTempUrl) }) },
      });
      app.get(
        base,
        { config: { scope: "shares:read" }, schema: { params: IdParams, ...listDoc } },
        async (req) => store.read((tx) => listTempUrls(tx, actorOf(req), req.params.id)),
      );
      app.delete(
        `${base}/:itemId`,
        {
          config: { scope: "shares:write" },
          schema: {
            params: ItemParams,
            ...op({
              ...named(base, "revokeTempUrl", "tempUrlRevoke", "temp-url-revoke"),
              area: "collaboration",
              summary: "Revoke a temporary link.",
              ok: { 200: TempUrlEnvelope },
              headers: ["Idempotency-Key"],
            }),
          },
        },
        (req, reply) =>
          mutate(store, req, reply, async (tx, actor) => ({
            status: 200,
            body: await revokeTempUrl(tx, actor, req.params.id, req.params.itemId),
          })),
      );
    }

    app.get(
      "/t/:token",
      {
        config: { scope: "public" },
        schema: {
          params: TokenParams,
          ...op({
            id: "readTempUrl",
            area: "collaboration",
            summary: "The shared file's text through a temporary link, no credentials needed.",
            ok: {
              200: Text("The file's text.", ["text/plain", "text/markdown"]),
              304: Empty("Not modified (If-None-Match)."),
            },
            errors: { 410: "The link expired or was revoked." },
            headers: ["If-None-Match"],
            etag: true,
          }),
        },
      },
      async (req, reply) => {
        const file = await store.read((tx) => openTempUrl(tx, req.params.token));
        reply
          .header("ETag", file.etag)
          .header("Cache-Control", "private, no-store")
          .header("Referrer-Policy", "no-referrer")
          .header("X-Content-Type-Options", "nosniff")
          .header("X-Robots-Tag", "noindex");
        if (notModified(req.headers["if-none-match"], file.etag)) return reply.code(304).send();
        const type = file.type === "md" ? "text/markdown" : "text/plain";
        return reply.type(`${type}; charset=utf-8`).send(file.content);
      },
    );
  };
}

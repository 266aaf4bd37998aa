// temp-url: POST /api/v1/files/:id/share mints a link; GET /t/:token serves the text without credentials.
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { createTempUrl, listTempUrls, openTempUrl, revokeTempUrl } from "../domain/tempUrls.ts";
import { notModified } from "../http/conditional.ts";
import { actorOf, mutate } from "../http/mutation.ts";
import type { RouteDeps } from "./deps.ts";
import { IdParams, ItemParams, TempUrlBody, TokenParams } from "./schemas.ts";

export function tempUrlRoutes({ store }: RouteDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    for (const base of ["/api/me/files/:id/share", "/api/v1/files/:id/share"]) {
      app.post(
        base,
        {
          config: { scope: "shares:write" },
          schema: { params: IdParams, body: TempUrlBody },
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
      app.get(base, { config: { scope: "shares:read" }, schema: { params: IdParams } }, async (req) =>
        store.read((tx) => listTempUrls(tx, actorOf(req), req.params.id)),
      );
      app.delete(
        `${base}/:itemId`,
        { config: { scope: "shares:write" }, schema: { params: ItemParams } },
        (req, reply) =>
          mutate(store, req, reply, async (tx, actor) => ({
            status: 200,
            body: await revokeTempUrl(tx, actor, req.params.id, req.params.itemId),
          })),
      );
    }

    app.get(
      "/t/:token",
      { config: { scope: "public" }, schema: { params: TokenParams } },
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

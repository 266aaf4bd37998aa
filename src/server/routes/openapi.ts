// GET /openapi.json: the OpenAPI 3.1 document of this server, generated from its routes.
import type { FastifyPluginAsync } from "fastify";
import { Type } from "typebox";
import type { IdentityHub } from "../identity/hub.ts";
import { op } from "../openapi/describe.ts";
import { OPENAPI_PATH, withProviderUrls } from "../openapi/document.ts";

export function openApiRoutes(hub: IdentityHub): FastifyPluginAsync {
  return async (app) => {
    const doc = op({
      id: "getOpenApiDocument",
      area: "service",
      summary: "This OpenAPI 3.1 document, generated from the routes' schemas.",
      ok: { 200: Type.Object({ openapi: Type.String(), paths: Type.Object({}) }) },
    });
    app.get(OPENAPI_PATH, { config: { scope: "public" }, schema: doc }, async (_req, reply) => {
      reply.header("Cache-Control", "public, max-age=60");
      return withProviderUrls(structuredClone(app.swagger() as Record<string, unknown>) as never, hub);
    });
  };
}

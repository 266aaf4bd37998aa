// Pages for people: the front page (/) and the playground (/docs, Swagger UI served from the npm
// package swagger-ui-dist: no CDN, works offline).
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import { ServiceError } from "../domain/errors.ts";
import type { IdentityHub } from "../identity/hub.ts";
import { countApi } from "../openapi/counts.ts";
import { op, Text } from "../openapi/describe.ts";
import { FAVICON_SVG, faviconIco, ICON_LINKS } from "../pages/favicon.ts";
import { renderFrontPage } from "../pages/frontPage.ts";

const require = createRequire(import.meta.url);
const SWAGGER_DIR = dirname(require.resolve("swagger-ui-dist/package.json"));

/** The files the playground page loads, and their types. */
const ASSETS: Record<string, { path: string; type: string }> = {
  "swagger-ui.css": { path: join(SWAGGER_DIR, "swagger-ui.css"), type: "text/css" },
  "swagger-ui-bundle.js": { path: join(SWAGGER_DIR, "swagger-ui-bundle.js"), type: "text/javascript" },
  "init.js": {
    path: new URL("../pages/playgroundInit.js", import.meta.url).pathname,
    type: "text/javascript",
  },
};

const PLAYGROUND = `<!doctype html>
<html lang="en"><head><meta charset="utf-8">${ICON_LINKS}<title>txtfs playground</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
<style>#bar{font:14px system-ui,sans-serif;padding:.6rem 1rem;background:#1b1b1b;color:#eee}
#bar a{color:#9cf}#bar button{margin-left:1rem}</style>
</head><body>
<div id="bar"><a href="/">txtfs</a> playground · <span id="session-status">Loading…</span>
<button id="use-session" hidden>Use my account</button></div>
<div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/init.js"></script>
</body></html>
`;

const AssetParams = Type.Object({ file: Type.String({ maxLength: 64 }) });

export function pageRoutes(hub: IdentityHub, version: string): FastifyPluginAsyncTypebox {
  return async (app) => {
    const pub = { config: { scope: "public" as const } };
    const html = Text("HTML page.", ["text/html"]);
    const assets = new Map<string, Buffer>();
    const page = (reply: import("fastify").FastifyReply, body: string) =>
      reply
        .type("text/html; charset=utf-8")
        .header("x-frame-options", "DENY")
        .header("referrer-policy", "no-referrer")
        .header(
          "content-security-policy",
          "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'",
        )
        .send(body);

    const frontDoc = op({
      id: "frontPage",
      area: "service",
      summary: "The front page: what this server is, links to everything.",
      ok: { 200: html },
    });
    app.get("/", { ...pub, schema: frontDoc }, async (_req, reply) => {
      const counts = countApi(app.swagger() as unknown as { paths: Record<string, object> });
      return page(reply, renderFrontPage({ version, counts, signIn: Boolean(hub.provider) }));
    });

    // The icon every page links (and every browser asks /favicon.ico for, linked or not).
    const ico = faviconIco();
    const iconDoc = (id: string, type: string) =>
      op({ id, area: "service", summary: "The pages' icon.", ok: { 200: Text("The icon.", [type]) } });
    app.get("/favicon.ico", { ...pub, schema: iconDoc("faviconIco", "image/x-icon") }, async (_req, reply) =>
      reply.type("image/x-icon").header("Cache-Control", "public, max-age=86400").send(ico),
    );
    app.get("/favicon.svg", { ...pub, schema: iconDoc("faviconSvg", "image/svg+xml") }, async (_req, reply) =>
      reply.type("image/svg+xml").header("Cache-Control", "public, max-age=86400").send(FAVICON_SVG),
    );

    const docsDoc = op({
      id: "playground",
      area: "service",
      summary: "The interactive playground (Swagger UI over /openapi.json).",
      ok: { 200: html },
    });
    app.get("/docs", { ...pub, schema: docsDoc }, async (_req, reply) => page(reply, PLAYGROUND));

    const assetDoc = op({
      id: "playgroundAsset",
      area: "service",
      summary: "The playground's scripts and styles (served locally).",
      ok: { 200: Text("Asset.", ["text/javascript", "text/css"]) },
      errors: { 404: "No such asset." },
    });
    app.get(
      "/docs/assets/:file",
      { ...pub, schema: { params: AssetParams, ...assetDoc } },
      async (req, reply) => {
        const asset = ASSETS[req.params.file];
        if (!asset) throw new ServiceError(404, "not_found", `No asset ${req.params.file}.`, "Open /docs.");
        let body = assets.get(req.params.file);
        if (!body) {
          body = readFileSync(asset.path);
          assets.set(req.params.file, body);
        }
        return reply
          .type(`${asset.type}; charset=utf-8`)
          .header("Cache-Control", "public, max-age=3600")
          .send(body);
      },
    );
  };
}

// The plain-text reference for agents: /llms.txt, /llms-full.txt and /reference/<page>.txt,
// generated from this server's OpenAPI document once, on first request.
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyReply } from "fastify";
import { Type } from "typebox";
import { ServiceError } from "../domain/errors.ts";
import { op, Text } from "../openapi/describe.ts";
import { llmsFull, llmsIndex, type ReferencePage, referencePages } from "../reference/pages.ts";
import { PAGES } from "../reference/prose.ts";

const PageParams = Type.Object({ page: Type.String({ maxLength: 64 }) });

export function referenceRoutes(): FastifyPluginAsyncTypebox {
  return async (app) => {
    let cache: { index: string; full: string; pages: Map<string, ReferencePage> } | undefined;
    const built = () => {
      if (!cache) {
        const doc = app.swagger() as unknown as Record<string, unknown>;
        const pages = referencePages(doc);
        cache = {
          index: llmsIndex(doc, pages),
          full: llmsFull(doc, pages),
          pages: new Map(pages.map((p) => [p.slug, p])),
        };
      }
      return cache;
    };
    const text = (reply: FastifyReply, body: string) =>
      reply.type("text/plain; charset=utf-8").header("Cache-Control", "public, max-age=300").send(body);
    const pub = { config: { scope: "public" as const } };
    const plain = Text("Plain text (UTF-8).");

    const indexDoc = op({
      id: "getLlmsIndex",
      area: "service",
      summary: "/llms.txt: what this service is and the index of the plain-text reference pages.",
      ok: { 200: plain },
    });
    app.get("/llms.txt", { ...pub, schema: indexDoc }, async (_req, reply) => text(reply, built().index));
    const fullDoc = op({
      id: "getLlmsFull",
      area: "service",
      summary: "/llms-full.txt: every reference page in one file.",
      ok: { 200: plain },
    });
    app.get("/llms-full.txt", { ...pub, schema: fullDoc }, async (_req, reply) => text(reply, built().full));
    const pageDoc = op({
      id: "getReferencePage",
      area: "service",
      summary: `One reference page: ${Object.keys(PAGES)
        .map((p) => `${p}.txt`)
        .join(", ")}.`,
      ok: { 200: plain },
      errors: { 404: "No such page." },
    });
    app.get(
      "/reference/:page",
      { ...pub, schema: { params: PageParams, ...pageDoc } },
      async (req, reply) => {
        const slug = req.params.page.replace(/\.txt$/, "");
        const page = built().pages.get(slug);
        if (!page) {
          throw new ServiceError(
            404,
            "not_found",
            `No reference page ${req.params.page}.`,
            "See /llms.txt for the list of pages.",
          );
        }
        return text(reply, page.text);
      },
    );
  };
}

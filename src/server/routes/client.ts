// The TypeScript client, served by the service itself: /client/txtfs.js (one ESM file, no
// dependencies, importable from a browser) and its typed source /client/txtfs.ts.
import { readFileSync } from "node:fs";
import type { FastifyPluginAsync } from "fastify";
import { op, Text } from "../openapi/describe.ts";

const DIR = new URL("../../../clients/typescript/", import.meta.url);

export function clientRoutes(): FastifyPluginAsync {
  return async (app) => {
    // Read once: the files ship with the server and do not change while it runs.
    const js = readFileSync(new URL("dist/txtfs.js", DIR), "utf8");
    const ts = readFileSync(new URL("src/index.ts", DIR), "utf8");
    const pub = { config: { scope: "public" as const } };
    const jsDoc = op({
      id: "getClientModule",
      area: "service",
      summary: "The dependency-free client as one ES module (import it from Node, Deno, Bun or a browser).",
      ok: { 200: Text("JavaScript module.", ["text/javascript"]) },
    });
    app.get("/client/txtfs.js", { ...pub, schema: jsDoc }, async (_req, reply) =>
      reply.type("text/javascript; charset=utf-8").header("Cache-Control", "public, max-age=300").send(js),
    );
    const tsDoc = op({
      id: "getClientSource",
      area: "service",
      summary: "The client's TypeScript source (types from the OpenAPI document: see /openapi.json).",
      ok: { 200: Text("TypeScript source.", ["text/plain"]) },
    });
    app.get("/client/txtfs.ts", { ...pub, schema: tsDoc }, async (_req, reply) =>
      reply.type("text/plain; charset=utf-8").header("Cache-Control", "public, max-age=300").send(ts),
    );
  };
}

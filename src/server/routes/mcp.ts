// /mcp: the MCP server over Streamable HTTP (stateless: one server and transport per request,
// as the SDK recommends when no session state is needed). Authorized like the API: an API key, or
// an OAuth access token that carries `mcp:use`; each tool then needs its own key scope.
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { FastifyPluginAsync } from "fastify";
import { Type } from "typebox";
import type { Store } from "../../store/store.ts";
import { ServiceError } from "../domain/errors.ts";
import { actorOf } from "../http/mutation.ts";
import type { IdentityHub } from "../identity/hub.ts";
import { buildMcpServer } from "../mcp/server.ts";
import { checkMcpRequest } from "../mcp/transportCheck.ts";
import { op } from "../openapi/describe.ts";
import { PROTECTED_RESOURCE_PATH } from "./protectedResource.ts";

export interface McpRouteDeps {
  store: Store;
  identity: IdentityHub;
  version: string;
  reference: () => Map<string, string>;
}

export function mcpRoutes({ store, identity, version, reference }: McpRouteDeps): FastifyPluginAsync {
  return async (app) => {
    // An MCP client that gets a 401 looks here for the authorization server (RFC 9728, MCP auth);
    // with API keys only there is none to point at.
    app.addHook("onSend", async (req, reply, payload) => {
      if (reply.statusCode === 401 && req.routeOptions.url === "/mcp" && identity.provider) {
        const base = `${req.protocol}://${req.host}`;
        const sent = String(reply.getHeader("WWW-Authenticate") ?? 'Bearer realm="txtfs"');
        reply.header(
          "WWW-Authenticate",
          `${sent}, resource_metadata="${base}${PROTECTED_RESOURCE_PATH}/mcp"`,
        );
      }
      return payload;
    });

    const doc = op({
      id: "mcp",
      area: "service",
      summary:
        "MCP server (Streamable HTTP, JSON-RPC 2.0): notes as tools and resources for agents. API key, or OAuth token with mcp:use.",
      ok: {
        200: {
          description: "A JSON-RPC response (application/json).",
          content: { "application/json": { schema: Type.Object({ jsonrpc: Type.Literal("2.0") }) } },
        },
        202: { type: "null", description: "Accepted (a notification or response from the client)." },
      },
      errors: {
        400: "The body is not JSON, nests too deeply, or is not a JSON-RPC message; or MCP-Protocol-Version is not supported.",
        403: "An OAuth token without mcp:use, or a tool's scope missing.",
        406: "Accept must allow application/json and text/event-stream.",
        413: "The body is larger than the endpoint accepts.",
        415: "Content-Type must be application/json.",
      },
    });
    app.post(
      "/mcp",
      { config: { scope: "any" }, schema: { ...doc, "x-streaming": true } as typeof doc },
      async (req, reply) => {
        const actor = actorOf(req);
        if (actor.oauthScopes && !actor.oauthScopes.has("mcp:use")) {
          throw new ServiceError(
            403,
            "insufficient_scope",
            "This access token lacks the mcp:use scope the MCP endpoint needs.",
            "Sign in again requesting the mcp:use scope, or use an API key.",
            { requiredScopes: ["mcp:use"] },
            { "WWW-Authenticate": 'Bearer realm="txtfs", error="insufficient_scope", scope="mcp:use"' },
          );
        }
        const refused = checkMcpRequest(req.headers, req.body);
        if (refused) throw refused;
        const server = buildMcpServer({
          store,
          actor: { ...actor, source: "mcp" },
          baseUrl: `${req.protocol}://${req.host}`,
          version,
          reference,
        });
        const transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: undefined,
          enableJsonResponse: true,
        });
        reply.hijack();
        // Headers set so far (API-Version, X-Request-ID, CORS) and the rate-limit state go out with
        // the SDK's response (onSend never sees a hijacked one). What is left for the SDK to refuse
        // was checked above, so it answers 200 or 202: a write's cost either way.
        reply.headers(app.meter(req, 200));
        for (const [k, v] of Object.entries(reply.getHeaders()))
          if (v !== undefined) reply.raw.setHeader(k, v as string);
        reply.raw.on("close", () => {
          void transport.close();
          void server.close();
        });
        await server.connect(transport);
        await transport.handleRequest(req.raw, reply.raw, req.body);
      },
    );
    // Stateless: no server-initiated stream (GET) and no session to end (DELETE).
    for (const method of ["GET", "DELETE"] as const) {
      const notAllowed = op({
        id: method === "GET" ? "mcpStream" : "mcpEndSession",
        area: "service",
        summary:
          "Not offered: this MCP server is stateless (no server-initiated stream, no sessions to end).",
        ok: {},
        errors: { 405: "Method not allowed: POST JSON-RPC messages to /mcp." },
      });
      app.route({
        method,
        url: "/mcp",
        config: { scope: "public", notOffered: true },
        schema: notAllowed,
        handler: async () => {
          throw new ServiceError(
            405,
            "method_not_allowed",
            "This MCP endpoint is stateless.",
            "POST JSON-RPC messages to /mcp.",
            undefined,
            { Allow: "POST" },
          );
        },
      });
    }
  };
}

// OAuth 2.0 Protected Resource Metadata (RFC 9728) of the MCP endpoint, at the well-known path for
// the resource `<base>/mcp`: how an MCP client that got a 401 from /mcp finds the authorization
// server, the scopes (`mcp:use`) and the `resource` to ask a token for (MCP authorization). The
// API's own document (resource = its audience) is at the bare well-known path (routes/identity.ts).
// 404 when this server has no identity provider (API keys only).
import type { FastifyPluginAsync, FastifyRequest } from "fastify";
import { Type } from "typebox";
import { ServiceError } from "../domain/errors.ts";
import { OAUTH_SCOPES } from "../domain/scopes.ts";
import type { IdentityHub } from "../identity/hub.ts";
import { op } from "../openapi/describe.ts";

export const PROTECTED_RESOURCE_PATH = "/.well-known/oauth-protected-resource";

/** The MCP endpoint's resource identifier: the one the provider accepts, else this server's /mcp. */
export function mcpResourceOf(hub: IdentityHub, request: FastifyRequest): string {
  const configured = hub.provider?.config.resources?.find((r) => /^https?:\/\/[^/]+\/mcp$/.test(r));
  return configured ?? `${request.protocol}://${request.host}/mcp`;
}

export function protectedResourceRoutes(hub: IdentityHub): FastifyPluginAsync {
  return async (app) => {
    const doc = op({
      id: "oauthProtectedResource",
      area: "auth",
      summary:
        "OAuth protected-resource metadata (RFC 9728) of /mcp: the authorization server, scopes and resource an MCP client signs in with.",
      ok: {
        200: Type.Object({
          resource: Type.String(),
          authorization_servers: Type.Array(Type.String()),
          scopes_supported: Type.Array(Type.String()),
          bearer_methods_supported: Type.Array(Type.String()),
          resource_name: Type.String(),
          resource_documentation: Type.String(),
        }),
      },
      errors: { 404: "This server has no identity provider: it accepts API keys only." },
    });
    app.get(
      `${PROTECTED_RESOURCE_PATH}/mcp`,
      { config: { scope: "public" }, schema: doc },
      async (req, reply) => {
        const provider = hub.provider;
        if (!provider) {
          throw new ServiceError(
            404,
            "oauth_not_configured",
            "This server has no identity provider, so no OAuth sign-in: it accepts API keys only.",
            "Send Authorization: Bearer <API key> to /mcp (mint one on the key page or with txtfs admin key add).",
          );
        }
        reply.header("Cache-Control", "public, max-age=300");
        const base = `${req.protocol}://${req.host}`;
        return {
          resource: mcpResourceOf(hub, req),
          authorization_servers: [provider.config.issuer],
          scopes_supported: [...OAUTH_SCOPES],
          bearer_methods_supported: ["header"],
          resource_name: "txtfs",
          resource_documentation: `${base}/llms.txt`,
        };
      },
    );
  };
}

// GET /api/v1 (discover): the verbs this server serves, machine-readable, no credentials needed.
import type { FastifyPluginAsync } from "fastify";
import { Type } from "typebox";
import { LIMITS } from "../domain/limits.ts";
import { KEY_SCOPES, OAUTH_SCOPE_GRANTS, OAUTH_SCOPES } from "../domain/scopes.ts";
import type { IdentityHub } from "../identity/hub.ts";
import { op } from "../openapi/describe.ts";
import { OPENAPI_PATH } from "../openapi/document.ts";

/** Where the other surfaces live (the front page links them too). */
export const LINKS = {
  openapi: OPENAPI_PATH,
  playground: "/docs",
  reference: "/llms.txt",
  referenceFull: "/llms-full.txt",
  client: "/client/txtfs.js",
  keys: "/keys",
  dashboard: "/dashboard",
  mcp: "/mcp",
} as const;

/** One route as discover lists it; collected as routes register (app.ts), never listed by hand. */
export interface CatalogEntry {
  verb: string;
  method: string;
  path: string;
  scope: string | null;
  description: string;
}

/** `catalog()`: every /api/v1 route registered, in order, with its verb name, scope and summary. */
export function discoverRoutes(
  catalog: () => readonly CatalogEntry[],
  hub?: IdentityHub,
): FastifyPluginAsync {
  return async (app) => {
    const discoverDoc = op({
      id: "discover",
      verb: "discover",
      area: "service",
      summary: "Machine-readable list of verbs, limits, authentication and links to the reference.",
      ok: {
        200: Type.Object({
          name: Type.String(),
          apiVersion: Type.String(),
          verbs: Type.Array(Type.Object({})),
        }),
      },
    });
    app.get("/api/v1", { config: { scope: "public" }, schema: discoverDoc }, async () => ({
      name: "txtfs",
      description: "Remote Text Filesystem Service",
      apiVersion: "v1",
      version: "1.0.0",
      status: "beta",
      links: LINKS,
      authentication: {
        header: "Authorization: Bearer <API key or OAuth access token>",
        keyPrefix: "txt_",
        scopes: KEY_SCOPES,
        // Sign-in (null when this server accepts API keys only): what `txtfs login` needs.
        oauth: hub?.provider
          ? {
              provider: hub.provider.config.name,
              issuer: hub.provider.config.issuer,
              clientId: hub.provider.config.clientId,
              audience: hub.provider.config.audience,
              scopes: OAUTH_SCOPES,
              scopeGrants: OAUTH_SCOPE_GRANTS,
              keyPage: "/keys",
            }
          : null,
      },
      limits: {
        contextChars: LIMITS.contextChars,
        tags: LIMITS.tags,
        reasonChars: LIMITS.reasonChars,
        planSourceChars: LIMITS.planSourceChars,
        nameBytes: LIMITS.nameBytes,
        fileBytes: LIMITS.contentBytes,
        pageSizeDefault: LIMITS.pageDefault,
        pageSizeMax: LIMITS.pageMax,
        importFiles: LIMITS.importFiles,
        batchOperations: LIMITS.batchOps,
        batchBytes: LIMITS.batchBytes,
        syncPush: LIMITS.syncPush,
        syncBytes: LIMITS.syncBytes,
        deviceStateItems: LIMITS.deviceStateItems,
      },
      verbs: catalog(),
    }));
  };
}

// Identities (users / use), the realtime-sync capability of the identity provider, and the
// protected-resource metadata (RFC 9728) that tells OAuth clients where to sign in.
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import { ServiceError } from "../domain/errors.ts";
import { listIdentities, useIdentity } from "../domain/identities.ts";
import { OAUTH_SCOPE_GRANTS, OAUTH_SCOPES } from "../domain/scopes.ts";
import { actorOf } from "../http/mutation.ts";
import { discoverRealtime } from "../identity/realtime.ts";
import type { RouteDeps } from "./deps.ts";

const UseBody = Type.Object(
  { id: Type.String({ minLength: 1, maxLength: 64 }) },
  { additionalProperties: false },
);

export function identityRoutes({ store, identity: hub }: RouteDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    const any = { config: { scope: "any" as const } };

    const listing = async (userId: string) => {
      const identities = await store.read((tx) => listIdentities(tx, userId));
      return { identities, activeId: identities.find((i) => i.active)?.id ?? null };
    };

    app.get("/api/v1/identities", any, async (req) => listing(actorOf(req).userId));

    app.patch("/api/v1/identities", { ...any, schema: { body: UseBody } }, async (req) => {
      const userId = actorOf(req).userId;
      await store.transaction((tx) => useIdentity(tx, userId, req.body.id));
      return listing(userId);
    });

    app.get("/api/identity/realtime", any, async (req) => discoverRealtime(store, hub, actorOf(req).userId));

    // RFC 9728: which authorization server issues tokens for this API, and with which scopes.
    app.get("/.well-known/oauth-protected-resource", { config: { scope: "public" } }, async () => {
      const provider = hub.provider;
      if (!provider) {
        throw new ServiceError(
          404,
          "not_found",
          "This server has no identity provider: it accepts API keys only.",
          "Use an API key (Authorization: Bearer txt_...).",
        );
      }
      return {
        resource: provider.config.audience,
        authorization_servers: [provider.config.issuer],
        scopes_supported: OAUTH_SCOPES,
        bearer_methods_supported: ["header"],
        resource_name: "txtfs",
        // Additive: what a native client needs to sign in (txtfs login reads these).
        txtfs_provider: provider.config.name,
        txtfs_client_id: provider.config.clientId,
        txtfs_scope_grants: OAUTH_SCOPE_GRANTS,
      };
    });
  };
}

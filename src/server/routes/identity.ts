// Identities (users / use), the realtime-sync capability of the identity provider, and the
// protected-resource metadata (RFC 9728) that tells OAuth clients where to sign in.
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import { ServiceError } from "../domain/errors.ts";
import { listIdentities, useIdentity } from "../domain/identities.ts";
import { OAUTH_SCOPE_GRANTS, OAUTH_SCOPES } from "../domain/scopes.ts";
import { actorOf } from "../http/mutation.ts";
import { discoverRealtime } from "../identity/realtime.ts";
import { op } from "../openapi/describe.ts";
import { IdentityListing } from "../openapi/records.ts";
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

    const usersDoc = op({
      id: "users",
      verb: "users",
      area: "auth",
      summary: "Identities linked to the account, and the active one.",
      ok: { 200: IdentityListing },
    });
    const useDoc = op({
      id: "use",
      verb: "use",
      area: "auth",
      summary: "Select the active identity (`{id}`).",
      ok: { 200: IdentityListing },
      errors: { 404: "No such identity on this account." },
    });
    app.get("/api/v1/identities", { ...any, schema: usersDoc }, async (req) => listing(actorOf(req).userId));

    app.patch("/api/v1/identities", { ...any, schema: { body: UseBody, ...useDoc } }, async (req) => {
      const userId = actorOf(req).userId;
      await store.transaction((tx) => useIdentity(tx, userId, req.body.id));
      return listing(userId);
    });

    const realtimeDoc = op({
      id: "discoverIdentityRealtime",
      area: "auth",
      summary: "The identity provider's realtime-sync capability for the signed-in user, normalized.",
      ok: {
        200: Type.Object({
          provider: Type.String(),
          configured: Type.Boolean(),
          syncMode: Type.String(),
          syncServer: Type.Union([Type.String(), Type.Null()]),
          connectable: Type.Boolean(),
          fallback: Type.Union([Type.Object({}), Type.Null()]),
        }),
      },
      errors: {
        401: "Unauthorized, or IDENTITY_REAUTH_REQUIRED: the identity token expired.",
        409: "No identity linked.",
        502: "Capability discovery failed.",
      },
    });
    app.get("/api/identity/realtime", { ...any, schema: realtimeDoc }, async (req) =>
      discoverRealtime(store, hub, actorOf(req).userId),
    );

    // RFC 9728: which authorization server issues tokens for this API, and with which scopes.
    const prmDoc = op({
      id: "getProtectedResourceMetadata",
      area: "auth",
      summary: "OAuth protected-resource metadata (RFC 9728): the authorization server and scopes.",
      ok: {
        200: Type.Object({
          resource: Type.String(),
          authorization_servers: Type.Array(Type.String()),
          scopes_supported: Type.Array(Type.String()),
        }),
      },
      errors: { 404: "No identity provider configured: API keys only." },
    });
    app.get(
      "/.well-known/oauth-protected-resource",
      { config: { scope: "public" }, schema: prmDoc },
      async () => {
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
      },
    );
  };
}

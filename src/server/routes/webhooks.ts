// Webhooks (`events`): register, list, update, delete, and the delivery log (see domain/webhooks.ts).
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import {
  createWebhook,
  type DestinationPolicy,
  deleteWebhook,
  listDeliveries,
  pingWebhook,
  redeliver,
  requireWebhook,
  toWebhook,
  updateWebhook,
} from "../domain/webhooks.ts";
import { actorOf, mutate } from "../http/mutation.ts";
import type { RouteDeps } from "./deps.ts";
import { IdParams } from "./schemas.ts";

const Events = Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 32 });
const CreateBody = Type.Object(
  { url: Type.String({ minLength: 1 }), events: Events, description: Type.Optional(Type.String()) },
  { additionalProperties: false },
);
const PatchBody = Type.Object(
  {
    url: Type.Optional(Type.String({ minLength: 1 })),
    events: Type.Optional(Events),
    description: Type.Optional(Type.String()),
    status: Type.Optional(Type.Union([Type.Literal("enabled"), Type.Literal("disabled")])),
  },
  { additionalProperties: false },
);
const DeliveryParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64 }),
  deliveryId: Type.String({ minLength: 1, maxLength: 64 }),
});
const DeliveriesQuery = Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })) });

// Events only report items the account can read: files:read (api-decisions §14).
const scope = "files:read" as const;

export function webhookRoutes({ store }: RouteDeps, policy: DestinationPolicy): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post("/api/v1/webhooks", { config: { scope }, schema: { body: CreateBody } }, (req, reply) =>
      mutate(store, req, reply, async (tx, actor) => {
        const body = await createWebhook(tx, actor, req.body, policy);
        return { status: 201, body, headers: { Location: `/api/v1/webhooks/${body.webhook.id}` } };
      }),
    );
    app.get("/api/v1/webhooks", { config: { scope } }, async (req) =>
      store.read(async (tx) => ({
        webhooks: (await tx.webhooks.listFor(actorOf(req).userId)).map(toWebhook),
      })),
    );
    app.get("/api/v1/webhooks/:id", { config: { scope }, schema: { params: IdParams } }, async (req) =>
      store.read(async (tx) => ({
        webhook: toWebhook(await requireWebhook(tx, actorOf(req), req.params.id)),
      })),
    );
    app.patch(
      "/api/v1/webhooks/:id",
      { config: { scope }, schema: { params: IdParams, body: PatchBody } },
      (req, reply) =>
        mutate(store, req, reply, async (tx, actor) => ({
          status: 200,
          body: await updateWebhook(tx, actor, req.params.id, req.body, policy),
        })),
    );
    app.delete("/api/v1/webhooks/:id", { config: { scope }, schema: { params: IdParams } }, (req, reply) =>
      mutate(store, req, reply, async (tx, actor) => ({
        status: 200,
        body: await deleteWebhook(tx, actor, req.params.id),
      })),
    );
    app.post("/api/v1/webhooks/:id/ping", { config: { scope }, schema: { params: IdParams } }, (req, reply) =>
      mutate(store, req, reply, async (tx, actor) => ({
        status: 202,
        body: await pingWebhook(tx, actor, req.params.id),
      })),
    );
    app.get(
      "/api/v1/webhooks/:id/deliveries",
      { config: { scope }, schema: { params: IdParams, querystring: DeliveriesQuery } },
      async (req) =>
        store.read((tx) => listDeliveries(tx, actorOf(req), req.params.id, req.query.limit ?? 100)),
    );
    app.post(
      "/api/v1/webhooks/:id/deliveries/:deliveryId/redeliver",
      { config: { scope }, schema: { params: DeliveryParams } },
      (req, reply) =>
        mutate(store, req, reply, async (tx, actor) => ({
          status: 200,
          body: await redeliver(tx, actor, req.params.id, req.params.deliveryId),
        })),
    );
  };
}

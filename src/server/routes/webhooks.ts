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
import { op } from "../openapi/describe.ts";
import { Deleted, DeliveryEnvelope, TxtDelivery, TxtWebhook, WebhookEnvelope } from "../openapi/records.ts";
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
    const d = (id: string, verb: string, summary: string, ok: Record<number, unknown>, write = false) =>
      op({
        id,
        verb,
        area: "sync",
        summary,
        ok,
        ...(write ? { headers: ["Idempotency-Key"] as const } : {}),
      });
    const createDoc = d(
      "events",
      "events",
      "Register a webhook (Standard Webhooks signing); the secret is shown once.",
      { 201: WebhookEnvelope },
      true,
    );
    app.post(
      "/api/v1/webhooks",
      { config: { scope }, schema: { body: CreateBody, ...createDoc } },
      (req, reply) =>
        mutate(store, req, reply, async (tx, actor) => {
          const body = await createWebhook(tx, actor, req.body, policy);
          return { status: 201, body, headers: { Location: `/api/v1/webhooks/${body.webhook.id}` } };
        }),
    );
    const listDoc = d("webhooks", "webhooks", "List webhooks with their status and disabled reason.", {
      200: Type.Object({ webhooks: Type.Array(TxtWebhook) }),
    });
    app.get("/api/v1/webhooks", { config: { scope }, schema: listDoc }, async (req) =>
      store.read(async (tx) => ({
        webhooks: (await tx.webhooks.listFor(actorOf(req).userId)).map(toWebhook),
      })),
    );
    const getDoc = d("webhook", "webhook", "One webhook.", { 200: WebhookEnvelope });
    app.get(
      "/api/v1/webhooks/:id",
      { config: { scope }, schema: { params: IdParams, ...getDoc } },
      async (req) =>
        store.read(async (tx) => ({
          webhook: toWebhook(await requireWebhook(tx, actorOf(req), req.params.id)),
        })),
    );
    app.patch(
      "/api/v1/webhooks/:id",
      {
        config: { scope },
        schema: {
          params: IdParams,
          body: PatchBody,
          ...d(
            "webhookUpdate",
            "webhook-update",
            "Change url, events, description; `status` enables/disables.",
            { 200: WebhookEnvelope },
            true,
          ),
        },
      },
      (req, reply) =>
        mutate(store, req, reply, async (tx, actor) => ({
          status: 200,
          body: await updateWebhook(tx, actor, req.params.id, req.body, policy),
        })),
    );
    const deleteDoc = d(
      "webhookDelete",
      "webhook-delete",
      "Remove a webhook and its queued deliveries.",
      { 200: Deleted },
      true,
    );
    app.delete(
      "/api/v1/webhooks/:id",
      { config: { scope }, schema: { params: IdParams, ...deleteDoc } },
      (req, reply) =>
        mutate(store, req, reply, async (tx, actor) => ({
          status: 200,
          body: await deleteWebhook(tx, actor, req.params.id),
        })),
    );
    const pingDoc = d(
      "webhookPing",
      "webhook-ping",
      "Queue a signed webhook.ping to test the endpoint.",
      { 202: DeliveryEnvelope },
      true,
    );
    app.post(
      "/api/v1/webhooks/:id/ping",
      { config: { scope }, schema: { params: IdParams, ...pingDoc } },
      (req, reply) =>
        mutate(store, req, reply, async (tx, actor) => ({
          status: 202,
          body: await pingWebhook(tx, actor, req.params.id),
        })),
    );
    app.get(
      "/api/v1/webhooks/:id/deliveries",
      {
        config: { scope },
        schema: {
          params: IdParams,
          querystring: DeliveriesQuery,
          ...d("deliveries", "deliveries", "Delivery log: attempts, status codes, errors.", {
            200: Type.Object({ deliveries: Type.Array(TxtDelivery) }),
          }),
        },
      },
      async (req) =>
        store.read((tx) => listDeliveries(tx, actorOf(req), req.params.id, req.query.limit ?? 100)),
    );
    app.post(
      "/api/v1/webhooks/:id/deliveries/:deliveryId/redeliver",
      {
        config: { scope },
        schema: {
          params: DeliveryParams,
          ...d(
            "redeliver",
            "redeliver",
            "Send a delivery again under the same webhook-id.",
            { 200: DeliveryEnvelope },
            true,
          ),
        },
      },
      (req, reply) =>
        mutate(store, req, reply, async (tx, actor) => ({
          status: 200,
          body: await redeliver(tx, actor, req.params.id, req.params.deliveryId),
        })),
    );
  };
}

// POST /api/v1/sync: push local changes, pull remote ones (see domain/sync.ts).
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import { checkBatchSize } from "../domain/batch.ts";
import { LIMITS } from "../domain/limits.ts";
import { type SyncPush, sync } from "../domain/sync.ts";
import { mutate } from "../http/mutation.ts";
import { op } from "../openapi/describe.ts";
import { ChangeRecord } from "../openapi/records.ts";
import { checkOperationBodies, SyncBody } from "./batchSchemas.ts";
import type { RouteDeps } from "./deps.ts";

const syncDoc = op({
  id: "sync",
  verb: "sync",
  area: "sync",
  summary:
    "Push local changes with their base ETags, pull remote changes since `cursor` (conflicts reported).",
  ok: {
    200: Type.Object({
      pushResults: Type.Array(Type.Object({})),
      conflicts: Type.Integer(),
      changes: Type.Array(ChangeRecord),
      cursor: Type.Integer(),
      hasMore: Type.Boolean(),
    }),
  },
  errors: {
    404: "A pushed change names an unknown item.",
    410: "The cursor is older than the feed's retention.",
  },
  headers: ["Idempotency-Key"],
});

export function syncRoutes({ store, attachments }: RouteDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    // files:read pulls; each pushed change needs its own write scope (checked per change).
    app.post(
      "/api/v1/sync",
      {
        config: { scope: "files:read" },
        bodyLimit: LIMITS.syncBytes,
        schema: { body: SyncBody, ...syncDoc },
      },
      (req, reply) => {
        const push = (req.body.push ?? []) as SyncPush[];
        checkBatchSize(push.length, LIMITS.syncPush, "The sync push");
        checkOperationBodies("push", push);
        return mutate(store, req, reply, async (tx, actor) => ({
          status: 200,
          body: await sync(tx, actor, { ...req.body, push }, attachments),
        }));
      },
    );
  };
}

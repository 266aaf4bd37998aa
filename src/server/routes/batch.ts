// POST /api/v1/batch: ordered writes in one transaction (see domain/batch.ts).
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import { type BatchOperation, checkBatchSize, runBatch } from "../domain/batch.ts";
import { LIMITS } from "../domain/limits.ts";
import { mutate } from "../http/mutation.ts";
import { op } from "../openapi/describe.ts";
import { BatchBody, checkOperationBodies } from "./batchSchemas.ts";
import type { RouteDeps } from "./deps.ts";

const batchDoc = op({
  id: "batch",
  verb: "batch",
  area: "sync",
  summary:
    "Ordered writes in one transaction (atomic by default); `{ref}` names an earlier operation's item.",
  ok: {
    200: Type.Object({
      results: Type.Array(
        Type.Object({
          index: Type.Integer(),
          op: Type.String(),
          status: Type.Integer(),
          body: Type.Optional(Type.Unknown()),
        }),
      ),
      seq: Type.Union([Type.Object({ from: Type.Integer(), to: Type.Integer() }), Type.Null()], {
        description: "Feed positions of the batch's writes (null when nothing was written).",
      }),
    }),
  },
  errors: { 403: undefined, 404: undefined, 409: undefined, 412: "An operation's ifMatch did not match." },
  headers: ["Idempotency-Key"],
});

export function batchRoutes({ store, attachments }: RouteDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      "/api/v1/batch",
      {
        config: { scope: "files:write" },
        bodyLimit: LIMITS.batchBytes,
        schema: { body: BatchBody, ...batchDoc },
      },
      (req, reply) => {
        const ops = req.body.operations as BatchOperation[];
        checkBatchSize(ops.length, LIMITS.batchOps, "The batch");
        checkOperationBodies("operations", ops);
        return mutate(store, req, reply, async (tx, actor) => ({
          status: 200,
          body: await runBatch(tx, actor, ops, req.body.atomic ?? true, attachments),
        }));
      },
    );
  };
}

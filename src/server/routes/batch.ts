// POST /api/v1/batch: ordered writes in one transaction (see domain/batch.ts).
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { type BatchOperation, checkBatchSize, runBatch } from "../domain/batch.ts";
import { LIMITS } from "../domain/limits.ts";
import { mutate } from "../http/mutation.ts";
import { BatchBody, checkOperationBodies } from "./batchSchemas.ts";
import type { RouteDeps } from "./deps.ts";

export function batchRoutes({ store }: RouteDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      "/api/v1/batch",
      { config: { scope: "files:write" }, bodyLimit: LIMITS.batchBytes, schema: { body: BatchBody } },
      (req, reply) => {
        const ops = req.body.operations as BatchOperation[];
        checkBatchSize(ops.length, LIMITS.batchOps, "The batch");
        checkOperationBodies("operations", ops);
        return mutate(store, req, reply, async (tx, actor) => ({
          status: 200,
          body: await runBatch(tx, actor, ops, req.body.atomic ?? true),
        }));
      },
    );
  };
}

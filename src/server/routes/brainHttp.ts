// HTTP pieces shared by the brain's routes: its dependencies from the route deps, the extra scope an
// AI operation that writes files needs, and the AI quota carried to the RateLimit headers.
import type { FastifyReply, FastifyRequest } from "fastify";
import type { Store, Tx } from "../../store/store.ts";
import type { Actor } from "../domain/actor.ts";
import type { BrainDeps } from "../domain/brain/deps.ts";
import { QuotaExceeded, type QuotaState } from "../domain/brain/quota.ts";
import { requireScope } from "../http/auth.ts";
import { actorOf, idempotencyKey, mutate, type Outcome } from "../http/mutation.ts";
import type { RouteDeps } from "./deps.ts";

declare module "fastify" {
  interface FastifyRequest {
    /** The account's AI quota after this request (RateLimit-Policy / RateLimit headers). */
    aiQuota?: QuotaState;
  }
}

export function brainDeps(deps: RouteDeps, request: FastifyRequest): BrainDeps {
  return { store: deps.store, pool: deps.brain, sealer: deps.identity.cipher, logger: request.log };
}

/** An AI operation that creates or changes notes needs files:write beside ai:use. */
export function requireWrite(request: FastifyRequest) {
  requireScope(actorOf(request), "files:write");
}

/**
 * An AI operation in two steps: `plan` reads and calls the model outside any transaction (a slow
 * provider holds no lock), then `apply` writes the result in one transaction with its
 * Idempotency-Key record. The quota after it (or the one that refused it) goes to the headers.
 */
export async function aiMutation<P>(
  store: Store,
  request: FastifyRequest,
  reply: FastifyReply,
  plan: () => Promise<P>,
  apply: (tx: Tx, actor: Actor, planned: P) => Promise<Outcome & { body: { quota?: QuotaState | null } }>,
): Promise<FastifyReply> {
  try {
    // A retry of an AI operation that already succeeded replays its saved answer without asking
    // the model again (mutate answers from the record before running any work).
    const key = idempotencyKey(request);
    if (key) {
      const actor = actorOf(request);
      const saved = await store.read((tx) =>
        tx.idempotency.get(actor.principal, key, new Date().toISOString()),
      );
      if (saved) {
        return await mutate(store, request, reply, async () => {
          throw new Error("a saved Idempotency-Key record was replayed, not re-run");
        });
      }
    }
    const planned = await plan();
    return await mutate(store, request, reply, async (tx, actor) => {
      const outcome = await apply(tx, actor, planned);
      if (outcome.body.quota) request.aiQuota = outcome.body.quota;
      return outcome;
    });
  } catch (err) {
    if (err instanceof QuotaExceeded) request.aiQuota = err.quota;
    throw err;
  }
}

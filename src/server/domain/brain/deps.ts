// What the brain's operations need: the store (they read, call the model outside any transaction,
// then write), the providers, the vault's sealer and a logger.

import type { TSchema } from "typebox";
import type { Store, Tx } from "../../../store/store.ts";
import type { Actor } from "../actor.ts";
import type { Sealer } from "../identities.ts";
import type { Capability, ProviderPool } from "./capability.ts";
import { aiKeyRequired, fromProviderError } from "./errors.ts";
import { checkOutput, outputSchema } from "./outputs.ts";
import type { AiProvider, ChatRequest } from "./provider.ts";
import { ProviderError } from "./provider.ts";
import { type QuotaState, requireQuota } from "./quota.ts";

export interface BrainDeps {
  store: Store;
  pool: ProviderPool;
  sealer: Sealer;
  /** Warnings only (dropped ids, failed provider calls); never a key. */
  logger: { warn(obj: object, msg: string): void };
}

/** Who answered: reported with every AI answer. */
export interface ProviderReport {
  host: string;
  source: "user" | "operator";
  model: string;
}

export interface Served {
  cap: Capability & { provider: AiProvider; source: "user" | "operator" };
  quota: QuotaState;
}

/** The provider serving this caller (402 without one) with quota left (429 without). */
export async function requireProvider(tx: Tx, deps: BrainDeps, actor: Actor): Promise<Served> {
  const cap = await deps.pool.capability(tx, actor.userId, deps.sealer);
  if (!cap.provider || !cap.source) throw aiKeyRequired(cap.reason ?? "no provider");
  const quota = await requireQuota(tx, actor.userId, deps.pool.config);
  return { cap: cap as Served["cap"], quota };
}

/** Runs a provider call; its failures become the spec's 429/502 (nothing has been written yet). */
export async function callProvider<T>(
  deps: BrainDeps,
  actor: Actor,
  what: string,
  fn: () => Promise<T>,
): Promise<T> {
  const started = performance.now();
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ProviderError) {
      deps.logger.warn(
        {
          user: actor.userId,
          host: err.host,
          status: err.status,
          kind: err.kind,
          ms: Math.round(performance.now() - started),
        },
        `AI provider call failed: ${what}`,
      );
      throw fromProviderError(err);
    }
    throw err;
  }
}

/** A chat call whose answer is checked against its schema (an answer outside it is a 502 too). */
export async function chatChecked<T>(
  deps: BrainDeps,
  actor: Actor,
  what: string,
  provider: AiProvider,
  req: Omit<ChatRequest, "output">,
  name: string,
  schema: TSchema,
): Promise<{ value: T; model: string; tokens: number }> {
  return callProvider(deps, actor, what, async () => {
    const answer = await provider.chat({ ...req, output: outputSchema(name, schema) });
    return {
      value: checkOutput<T>(schema, answer.value, provider.host),
      model: answer.model,
      tokens: answer.usage.tokens,
    };
  });
}

// Can the brain explore for this caller, and why not: provider, plan, key, quota left. Needs no model.
import type { Tx } from "../../../store/store.ts";
import type { Actor } from "../actor.ts";
import { toTxtFile } from "../records.ts";
import type { BrainDeps } from "./deps.ts";
import { toIdeationRecord } from "./ideation.ts";
import { quotaState } from "./quota.ts";

export async function brainStatus(tx: Tx, deps: BrainDeps, actor: Actor) {
  const cap = await deps.pool.capability(tx, actor.userId, deps.sealer);
  const quota = await quotaState(tx, actor.userId, deps.pool.config);
  const overQuota = quota.requestsLeft <= 0 || quota.tokensLeft <= 0;
  const canExplore = Boolean(cap.provider) && !overQuota;
  return {
    canExplore,
    reason: !cap.provider ? cap.reason : overQuota ? "the daily AI quota is used up" : null,
    // Workspace analysis runs only on the user's own key (the spec's 409 otherwise).
    canAnalyze: cap.source === "user" && !overQuota,
    plan: cap.plan,
    hasUserKey: cap.hasUserKey,
    operatorProvider: cap.operatorConfigured,
    provider: cap.provider
      ? {
          source: cap.source,
          host: cap.provider.host,
          chatModel: cap.provider.chatModel,
          embeddingModel: cap.provider.embeddingModel,
          transcriptionModel: cap.provider.transcriptionModel,
        }
      : null,
    quota,
    relatedNotes: cap.provider?.embeddingModel ? ("lexical+semantic" as const) : ("lexical" as const),
  };
}

export async function listIdeation(tx: Tx, deps: BrainDeps, actor: Actor, limit = 20) {
  const status = await brainStatus(tx, deps, actor);
  const rows = await tx.ideation.recent(actor.userId, limit);
  const files = new Map((await tx.files.metaByIds(rows.map((r) => r.file_id))).map((f) => [f.id, f]));
  const notes = rows.flatMap((r) => {
    const f = files.get(r.file_id);
    return f ? [{ file: toTxtFile(f, "owner"), ideation: toIdeationRecord(r) }] : [];
  });
  return { ...status, notes };
}

// Per-account AI quota: requests and tokens per UTC day, counted in the store (servers sharing a
// database share it). Checked before a provider call; charged with the call's result, in the same
// transaction, so a failed call costs nothing and changes nothing.
import type { Tx } from "../../../store/store.ts";
import { ServiceError } from "../errors.ts";
import type { BrainConfig } from "./config.ts";

export interface QuotaState {
  requestsLimit: number;
  requestsLeft: number;
  tokensLimit: number;
  tokensLeft: number;
  /** Seconds until the quota resets (the next UTC midnight). */
  resetSeconds: number;
}

export const utcDay = (now = new Date()) => now.toISOString().slice(0, 10);

function secondsToMidnight(now = new Date()): number {
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  return Math.max(1, Math.ceil((next - now.getTime()) / 1000));
}

export async function quotaState(tx: Tx, accountId: string, cfg: BrainConfig): Promise<QuotaState> {
  const used = await tx.aiUsage.get(accountId, utcDay());
  return {
    requestsLimit: cfg.requestsPerDay,
    requestsLeft: Math.max(0, cfg.requestsPerDay - used.requests),
    tokensLimit: cfg.tokensPerDay,
    tokensLeft: Math.max(0, cfg.tokensPerDay - used.tokens),
    resetSeconds: secondsToMidnight(),
  };
}

export class QuotaExceeded extends ServiceError {
  readonly quota: QuotaState;
  constructor(q: QuotaState) {
    const what = q.requestsLeft <= 0 ? `${q.requestsLimit} AI requests` : `${q.tokensLimit} AI tokens`;
    super(
      429,
      "ai_rate_limited",
      `This account used its ${what} for today.`,
      `Wait ${q.resetSeconds} s (Retry-After) until the daily AI quota resets at 00:00 UTC.`,
      { quota: q },
      { "Retry-After": String(q.resetSeconds) },
    );
    this.quota = q;
  }
}

/** Throws 429 when the account has no AI request or token left today. */
export async function requireQuota(tx: Tx, accountId: string, cfg: BrainConfig): Promise<QuotaState> {
  const q = await quotaState(tx, accountId, cfg);
  if (q.requestsLeft <= 0 || q.tokensLeft <= 0) throw new QuotaExceeded(q);
  return q;
}

export async function chargeQuota(
  tx: Tx,
  accountId: string,
  tokens: number,
  cfg: BrainConfig,
): Promise<QuotaState> {
  const used = await tx.aiUsage.add(accountId, utcDay(), 1, Math.max(0, Math.round(tokens)));
  return {
    requestsLimit: cfg.requestsPerDay,
    requestsLeft: Math.max(0, cfg.requestsPerDay - used.requests),
    tokensLimit: cfg.tokensPerDay,
    tokensLeft: Math.max(0, cfg.tokensPerDay - used.tokens),
    resetSeconds: secondsToMidnight(),
  };
}

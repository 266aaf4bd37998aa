// Delivers the webhook outbox: claims due deliveries with a lease (a conditional UPDATE, so several
// servers on one database never send one delivery twice at once), POSTs each one signed as
// Standard Webhooks describes, and records the outcome: delivered, or retried later with
// exponential backoff and jitter; an endpoint that keeps failing (or answers 410) is disabled with
// the reason stored. Deliveries of one item go out in feed order (see WebhookRepo.due).
import { createHmac } from "node:crypto";
import type { Logger } from "../lib/logger.ts";
import type { DeliveryRow, WebhookRow } from "../store/repos/webhooks.ts";
import type { Store } from "../store/store.ts";
import { type DestinationPolicy, destinationAllowed } from "./domain/webhooks.ts";

export interface WebhookOptions extends DestinationPolicy {
  /** How often the outbox is polled. */
  pollMs: number;
  /** Per-attempt deadline (Standard Webhooks suggests 15-30 s). */
  timeoutMs: number;
  /** First retry delay; each next one is 4x longer (5 s, 20 s, 80 s, 5 min, ... capped), +-20% jitter. */
  retryBaseMs: number;
  retryMaxMs: number;
  /** Attempts per delivery before it is marked failed. */
  maxAttempts: number;
  /** Consecutive failed attempts after which the endpoint is disabled. */
  disableAfter: number;
  /** How long a claim holds (longer than timeoutMs). */
  leaseMs: number;
  /** Told the outcome of every attempt (the service's metrics count them). */
  onAttempt?: (ok: boolean) => void;
}

export const DEFAULT_WEBHOOK_OPTIONS: WebhookOptions = {
  allowHosts: [],
  pollMs: 500,
  timeoutMs: 15_000,
  retryBaseMs: 5_000,
  retryMaxMs: 10 * 3600_000,
  maxAttempts: 12,
  disableAfter: 20,
  leaseMs: 60_000,
};

/** `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` with the secret's bytes (after `whsec_`). */
export function signWebhook(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  return `v1,${createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64")}`;
}

export function retryDelay(
  attempts: number,
  opts: Pick<WebhookOptions, "retryBaseMs" | "retryMaxMs">,
): number {
  const base = Math.min(opts.retryBaseMs * 4 ** Math.max(0, attempts - 1), opts.retryMaxMs);
  return Math.round(base * (0.8 + Math.random() * 0.4));
}

interface Outcome {
  ok: boolean;
  status: number | null;
  error: string | null;
}

export class WebhookWorker {
  private readonly store: Store;
  private readonly log: Logger;
  private readonly opts: WebhookOptions;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private readonly abort = new AbortController();

  constructor(store: Store, log: Logger, opts: Partial<WebhookOptions> = {}) {
    this.store = store;
    this.log = log;
    this.opts = { ...DEFAULT_WEBHOOK_OPTIONS, ...opts };
  }

  start(): void {
    const tick = () => {
      if (this.stopped) return;
      let busy = false;
      this.running = this.runOnce()
        .then((n) => {
          busy = n > 0;
        })
        .catch((err) => this.log.warn({ err }, "webhook delivery round failed"))
        .finally(() => {
          // After a busy round go again at once: the next delivery of an item may now be due.
          if (!this.stopped) this.timer = setTimeout(tick, busy ? 0 : this.opts.pollMs);
        });
    };
    this.timer = setTimeout(tick, 0);
  }

  /** Stops polling; in-flight deliveries are aborted (their lease runs out, they are retried later). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.abort.abort();
    await this.running;
  }

  /** One round: claim what is due, deliver it (in parallel: each item's first delivery only). */
  async runOnce(): Promise<number> {
    const now = new Date();
    // Look first in a read snapshot: an idle poll opens no write transaction (and so never clears
    // the store's read cache nor takes the write lock).
    const due = await this.store.read((tx) => tx.webhooks.due(now.toISOString(), 20));
    if (due.length === 0) return 0;
    const claimed = await this.store.transaction(async (tx) => {
      const until = new Date(now.getTime() + this.opts.leaseMs).toISOString();
      const mine: { delivery: DeliveryRow; hook: WebhookRow }[] = [];
      for (const d of due) {
        if (!(await tx.webhooks.claim(d.id, now.toISOString(), until))) continue;
        // Re-read under the claim: another server may have attempted it since the snapshot.
        const delivery = await tx.webhooks.deliveryById(d.id);
        const hook = await tx.webhooks.byId(d.webhook_id);
        if (delivery && hook) mine.push({ delivery, hook });
      }
      return mine;
    });
    await Promise.all(claimed.map(({ delivery, hook }) => this.deliver(delivery, hook)));
    return claimed.length;
  }

  private async send(delivery: DeliveryRow, hook: WebhookRow): Promise<Outcome> {
    const url = new URL(hook.url);
    if (!destinationAllowed(url, this.opts)) {
      return { ok: false, status: null, error: `destination ${url.hostname} is not allowed by this server` };
    }
    const timestamp = Math.floor(Date.now() / 1000);
    const signal = AbortSignal.any([this.abort.signal, AbortSignal.timeout(this.opts.timeoutMs)]);
    try {
      const res = await fetch(url, {
        method: "POST",
        redirect: "manual", // Standard Webhooks: a redirect is a failure, never followed
        signal,
        headers: {
          "content-type": "application/json",
          "user-agent": "txtfs-webhooks/1",
          "webhook-id": delivery.id,
          "webhook-timestamp": String(timestamp),
          "webhook-signature": signWebhook(hook.secret, delivery.id, timestamp, delivery.payload),
        },
        body: delivery.payload,
      });
      await res.body?.cancel().catch(() => {});
      const ok = res.status >= 200 && res.status < 300;
      return { ok, status: res.status, error: ok ? null : `HTTP ${res.status}` };
    } catch (err) {
      const e = err as Error & { cause?: { code?: string } };
      const reason =
        e.name === "TimeoutError"
          ? `no answer within ${this.opts.timeoutMs} ms`
          : (e.cause?.code ?? e.message);
      return { ok: false, status: null, error: reason };
    }
  }

  private async deliver(delivery: DeliveryRow, hook: WebhookRow): Promise<void> {
    const outcome = await this.send(delivery, hook);
    if (this.stopped && !outcome.ok) return; // aborted by shutdown: the lease expires, it is retried
    this.opts.onAttempt?.(outcome.ok);
    const at = new Date();
    const attempts = delivery.attempts + 1;
    await this.store.transaction(async (tx) => {
      const current = await tx.webhooks.byId(hook.id);
      if (!current) return; // deleted meanwhile
      const next = { ...current, last_delivery_at: at.toISOString(), updated_at: current.updated_at };
      next.last_delivery_status = outcome.ok ? String(outcome.status) : (outcome.error ?? "failed");
      if (outcome.ok) {
        next.failure_count = 0;
        await tx.webhooks.finish(delivery.id, {
          status: "delivered",
          attempts,
          next_attempt_at: delivery.next_attempt_at,
          last_status_code: outcome.status,
          last_error: null,
          delivered_at: at.toISOString(),
        });
      } else {
        next.failure_count = current.failure_count + 1;
        const exhausted = attempts >= this.opts.maxAttempts;
        await tx.webhooks.finish(delivery.id, {
          status: exhausted ? "failed" : "pending",
          attempts,
          next_attempt_at: new Date(at.getTime() + retryDelay(attempts, this.opts)).toISOString(),
          last_status_code: outcome.status,
          last_error: outcome.error,
          delivered_at: null,
        });
        if (next.status === "enabled") {
          if (outcome.status === 410) {
            next.status = "disabled";
            next.disabled_reason = "the endpoint answered 410 Gone";
          } else if (next.failure_count >= this.opts.disableAfter) {
            next.status = "disabled";
            next.disabled_reason = `${next.failure_count} consecutive failed deliveries; last: ${outcome.error}`;
          }
          if (next.status === "disabled") {
            this.log.warn({ webhook: hook.id, reason: next.disabled_reason }, "webhook disabled");
          }
        }
      }
      await tx.webhooks.update(next);
    });
  }
}

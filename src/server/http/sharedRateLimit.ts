// Rate limits shared by every server on one database. A request must not wait for a database write,
// so each server counts locally and, every 200 ms, adds what it spent to the key's row in
// `rate_limits` and reads back the total of all servers. Before admitting a request it reads that
// total when its copy is over a second old. So a key's budget is shared across servers, exceeded at
// most by what the other servers admitted in their last second (documented in docs/api.md).
import type { Logger } from "../../lib/logger.ts";
import type { Store } from "../../store/store.ts";
import type { Limiter, RateCheck, RateLimitConfig, RateState } from "./rateLimit.ts";

interface Window {
  start: number;
  /** The database's total for this window when last read (includes our flushed points). */
  synced: number;
  /** Spent here, not yet sent. */
  pending: number;
  /** Being sent right now. */
  sending: number;
  refreshedAt: number;
}

const FLUSH_MS = 200;
const STALE_MS = 1000;

export class SharedRateLimiter implements Limiter {
  readonly config: RateLimitConfig;
  private readonly store: Store;
  private readonly log: Logger;
  private readonly windows = new Map<string, Window>();
  private readonly refreshing = new Map<string, Promise<void>>();
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> | undefined;
  private lastPurge = 0;

  constructor(config: RateLimitConfig, store: Store, log: Logger) {
    this.config = config;
    this.store = store;
    this.log = log;
    this.timer = setInterval(() => void this.flush(), FLUSH_MS);
    this.timer.unref();
  }

  private get windowMs() {
    return this.config.windowSeconds * 1000;
  }

  private window(key: string, now: number): Window {
    let w = this.windows.get(key);
    if (!w || now - w.start >= this.windowMs) {
      // The old window's unsent points are dropped with it: they count for a window that is over.
      w = { start: now, synced: 0, pending: 0, sending: 0, refreshedAt: w?.refreshedAt ?? 0 };
      this.windows.set(key, w);
    }
    return w;
  }

  private state(limit: number, w: Window, now: number): RateState {
    const used = w.synced + w.pending + w.sending;
    const resetSeconds = Math.max(1, Math.ceil((w.start + this.windowMs - now) / 1000));
    return { limit, remaining: Math.max(0, limit - used), resetSeconds };
  }

  /** Reads the key's total of all servers (once at a time per key). */
  private refresh(key: string): Promise<void> {
    let p = this.refreshing.get(key);
    if (!p) {
      p = (async () => {
        try {
          const row = await this.store.read((tx) => tx.rateLimits.get(key));
          const now = Date.now();
          const w = this.window(key, now);
          w.refreshedAt = now;
          if (row && now - row.window_start < this.windowMs && w.sending === 0) {
            w.start = row.window_start;
            w.synced = row.used;
          }
        } catch (err) {
          this.log.warn({ err }, "could not read shared rate limits; using this server's count");
        } finally {
          this.refreshing.delete(key);
        }
      })();
      this.refreshing.set(key, p);
    }
    return p;
  }

  async check(key: string, anonymous: boolean, cost: number): Promise<RateCheck> {
    const limit = anonymous ? this.config.anonymousLimit : this.config.limit;
    if (Date.now() - (this.windows.get(key)?.refreshedAt ?? 0) > STALE_MS) await this.refresh(key);
    const now = Date.now();
    const w = this.window(key, now);
    return { allowed: w.synced + w.pending + w.sending + cost <= limit, ...this.state(limit, w, now) };
  }

  spend(key: string, anonymous: boolean, cost: number): RateState {
    const now = Date.now();
    const limit = anonymous ? this.config.anonymousLimit : this.config.limit;
    const w = this.window(key, now);
    w.pending += cost;
    return this.state(limit, w, now);
  }

  /** Sends every key's unsent points and takes back the totals of all servers. */
  flush(): Promise<void> {
    this.flushing ??= this.doFlush().finally(() => {
      this.flushing = undefined;
    });
    return this.flushing;
  }

  private async doFlush(): Promise<void> {
    const now = Date.now();
    for (const [key, w] of this.windows) {
      if (now - w.start >= this.windowMs && w.pending === 0 && w.sending === 0) this.windows.delete(key);
    }
    const batch = [...this.windows]
      .filter(([, w]) => w.pending > 0)
      .map(([key, w]) => ({ key, w, points: w.pending }));
    const purge = now - this.lastPurge > this.windowMs;
    if (batch.length === 0 && !purge) return;
    for (const b of batch) {
      b.w.sending += b.points;
      b.w.pending -= b.points;
    }
    try {
      const rows = await this.store.transaction(async (tx) => {
        const out = [];
        for (const b of batch)
          out.push(await tx.rateLimits.add(b.key, b.w.start, b.points, now - this.windowMs));
        if (purge) await tx.rateLimits.purgeBefore(now - 2 * this.windowMs);
        return out;
      });
      if (purge) this.lastPurge = now;
      rows.forEach((row, i) => {
        const { w, points } = batch[i]!;
        w.sending -= points;
        w.start = row.window_start;
        w.synced = row.used;
        w.refreshedAt = Date.now();
      });
    } catch (err) {
      for (const b of batch) {
        b.w.sending -= b.points;
        b.w.pending += b.points;
      }
      this.log.warn({ err }, "could not share rate-limit counts; retrying");
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}

// Fixed-window rate limits per principal, in points. On the embedded store they are kept in process
// memory (one server process owns it); servers sharing PostgreSQL use SharedRateLimiter
// (sharedRateLimit.ts), which keeps the windows in the database. The spec's RateLimit-* headers go on
// every response.

export interface RateLimitConfig {
  /** Points per window for an authenticated principal. */
  limit: number;
  /** Points per window for unauthenticated callers, per IP. */
  anonymousLimit: number;
  windowSeconds: number;
}

export const DEFAULT_RATE_LIMIT: RateLimitConfig = { limit: 6000, anonymousLimit: 600, windowSeconds: 60 };

export interface RateState {
  limit: number;
  remaining: number;
  resetSeconds: number;
}

export type RateCheck = { allowed: boolean } & RateState;

/** What the HTTP layer needs of a limiter (in memory, or shared through the database). */
export interface Limiter {
  readonly config: RateLimitConfig;
  /** Whether `cost` more points fit; does not spend them. */
  check(key: string, anonymous: boolean, cost: number): RateCheck | Promise<RateCheck>;
  /** Spends `cost` points (once the response's status, and so its cost, is known). */
  spend(key: string, anonymous: boolean, cost: number): RateState;
  close(): Promise<void>;
}

export class RateLimiter implements Limiter {
  private windows = new Map<string, { start: number; used: number }>();
  private lastSweep = Date.now();

  readonly config: RateLimitConfig;

  constructor(config: RateLimitConfig) {
    this.config = config;
  }

  private window(key: string, now: number) {
    const ms = this.config.windowSeconds * 1000;
    if (now - this.lastSweep > ms) {
      for (const [k, w] of this.windows) if (now - w.start >= ms) this.windows.delete(k);
      this.lastSweep = now;
    }
    let w = this.windows.get(key);
    if (!w || now - w.start >= ms) {
      w = { start: now, used: 0 };
      this.windows.set(key, w);
    }
    return w;
  }

  private state(limit: number, w: { start: number; used: number }, now: number): RateState {
    const resetSeconds = Math.max(1, Math.ceil((w.start + this.config.windowSeconds * 1000 - now) / 1000));
    return { limit, remaining: Math.max(0, limit - w.used), resetSeconds };
  }

  /** Whether `cost` more points fit; does not spend them. */
  check(key: string, anonymous: boolean, cost: number): RateCheck {
    const now = Date.now();
    const limit = anonymous ? this.config.anonymousLimit : this.config.limit;
    const w = this.window(key, now);
    return { allowed: w.used + cost <= limit, ...this.state(limit, w, now) };
  }

  /** Spends `cost` points (once the response's status, and so its cost, is known). */
  spend(key: string, anonymous: boolean, cost: number): RateState {
    const now = Date.now();
    const limit = anonymous ? this.config.anonymousLimit : this.config.limit;
    const w = this.window(key, now);
    w.used += cost;
    return this.state(limit, w, now);
  }

  async close(): Promise<void> {}
}

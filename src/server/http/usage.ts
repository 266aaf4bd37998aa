import type { Logger } from "../../lib/logger.ts";
import { utcDay } from "../../lib/time.ts";
import type { Store } from "../../store/store.ts";

/**
 * Per-key `requests_today` and `last_used_at`, counted in memory and written in one transaction
 * every few seconds: a write per request would cost more than the request.
 */
export class KeyUsage {
  private counts = new Map<string, { n: number; day: string; at: number }>();
  private timer: NodeJS.Timeout;
  private day = "";
  private dayEnds = 0;

  private readonly store: Store;
  private readonly log: Logger;

  constructor(store: Store, log: Logger, intervalMs = 5000) {
    this.store = store;
    this.log = log;
    this.timer = setInterval(() => void this.flush(), intervalMs);
    this.timer.unref();
  }

  record(keyId: string): void {
    const now = Date.now();
    const entry = this.counts.get(keyId);
    if (entry && now < this.dayEnds) {
      entry.n++;
      entry.at = now;
      return;
    }
    // First use in this batch, or a new UTC day (then yesterday's count is flushed under its day).
    if (now >= this.dayEnds) {
      if (this.counts.size) void this.flush();
      this.day = utcDay(new Date(now));
      this.dayEnds = Date.parse(`${this.day}T00:00:00Z`) + 86_400_000;
    }
    this.counts.set(keyId, { n: 1, day: this.day, at: now });
  }

  async flush(): Promise<void> {
    if (this.counts.size === 0) return;
    const batch = this.counts;
    this.counts = new Map();
    try {
      await this.store.transaction(async (tx) => {
        for (const [id, u] of batch) await tx.keys.recordUsage(id, u.day, u.n, new Date(u.at).toISOString());
      });
    } catch (err) {
      this.log.warn({ err }, "could not record key usage");
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}

import type { Logger } from "../../lib/logger.ts";
import { nowIso, utcDay } from "../../lib/time.ts";
import type { Store } from "../../store/store.ts";

/**
 * Per-key `requests_today` and `last_used_at`, counted in memory and written in one transaction
 * every few seconds: a write per request would cost more than the request.
 */
export class KeyUsage {
  private counts = new Map<string, { n: number; day: string; at: string }>();
  private timer: NodeJS.Timeout;

  private readonly store: Store;
  private readonly log: Logger;

  constructor(store: Store, log: Logger, intervalMs = 5000) {
    this.store = store;
    this.log = log;
    this.timer = setInterval(() => void this.flush(), intervalMs);
    this.timer.unref();
  }

  record(keyId: string): void {
    const day = utcDay();
    const entry = this.counts.get(keyId);
    if (entry && entry.day === day) {
      entry.n++;
      entry.at = nowIso();
    } else {
      // A new UTC day: flush yesterday's count under its own day first.
      if (entry) void this.flush();
      this.counts.set(keyId, { n: 1, day, at: nowIso() });
    }
  }

  async flush(): Promise<void> {
    if (this.counts.size === 0) return;
    const batch = this.counts;
    this.counts = new Map();
    try {
      await this.store.transaction(async (tx) => {
        for (const [id, u] of batch) await tx.keys.recordUsage(id, u.day, u.n, u.at);
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

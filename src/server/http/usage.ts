import type { Logger } from "../../lib/logger.ts";
import { utcDay } from "../../lib/time.ts";
import type { Store } from "../../store/store.ts";
import { LATENCY_BUCKETS_MS } from "../domain/usageReport.ts";

/** What one key did on one day since the last flush (the dashboard's numbers). */
interface DayStats {
  requests: number;
  rateLimited: number;
  statuses: Record<string, number>;
  latency: number[];
}

const emptyStats = (): DayStats => ({
  requests: 0,
  rateLimited: 0,
  statuses: {},
  latency: new Array(LATENCY_BUCKETS_MS.length + 1).fill(0),
});

/**
 * Per-key `requests_today` and `last_used_at`, and the dashboard's per-day statistics (status
 * codes, rate-limit hits, latency histogram), counted in memory and written in one transaction
 * every few seconds: a write per request would cost more than the request.
 */
export class KeyUsage {
  private counts = new Map<string, { n: number; day: string; at: number }>();
  private stats = new Map<string, DayStats>();
  private timer: NodeJS.Timeout;
  private day = "";
  private dayEnds = 0;

  private readonly store: Store;
  private readonly log: Logger;

  /** A finished request of a key: its status and time in the server. */
  observe(keyId: string, status: number, ms: number): void {
    const key = `${keyId}\n${utcDay(new Date())}`;
    let s = this.stats.get(key);
    if (!s) {
      s = emptyStats();
      this.stats.set(key, s);
    }
    s.requests++;
    if (status === 429) s.rateLimited++;
    s.statuses[status] = (s.statuses[status] ?? 0) + 1;
    let bucket = LATENCY_BUCKETS_MS.findIndex((b) => ms <= b);
    if (bucket === -1) bucket = LATENCY_BUCKETS_MS.length;
    s.latency[bucket]!++;
  }

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
    if (this.counts.size === 0 && this.stats.size === 0) return;
    const batch = this.counts;
    const stats = this.stats;
    this.counts = new Map();
    this.stats = new Map();
    try {
      await this.store.transaction(async (tx) => {
        for (const [id, u] of batch) await tx.keys.recordUsage(id, u.day, u.n, new Date(u.at).toISOString());
        for (const [key, s] of stats) {
          const [keyId, day] = key.split("\n") as [string, string];
          // A key deleted meanwhile has no row to attach the statistics to.
          if (!(await tx.keys.byId(keyId))) continue;
          const row = await tx.usage.get(keyId, day);
          const statuses: Record<string, number> = row ? JSON.parse(row.statuses) : {};
          for (const [code, n] of Object.entries(s.statuses)) statuses[code] = (statuses[code] ?? 0) + n;
          const latency: number[] = row ? JSON.parse(row.latency) : [];
          await tx.usage.upsert({
            key_id: keyId,
            day,
            requests: Number(row?.requests ?? 0) + s.requests,
            rate_limited: Number(row?.rate_limited ?? 0) + s.rateLimited,
            statuses: JSON.stringify(statuses),
            latency: JSON.stringify(s.latency.map((n, i) => n + (latency[i] ?? 0))),
          });
        }
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

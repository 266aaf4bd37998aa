import type { Logger } from "../lib/logger.ts";
import type { Store } from "../store/store.ts";
import { purgeTombstones } from "./domain/feed.ts";

export const DEFAULT_TOMBSTONE_RETENTION_DAYS = 90;

/**
 * Hourly housekeeping: purge old tombstones (raising feed floors), expired idempotency keys and
 * webhook deliveries finished more than 30 days ago.
 */
export function startMaintenance(store: Store, log: Logger, retentionDays: number): () => void {
  const run = async () => {
    try {
      const accounts = await store.transaction(async (tx) => {
        await tx.idempotency.purgeExpired(new Date().toISOString());
        // /dav/'s tombstones hold deleted notes' bodies: none outlives its window by much.
        await tx.davTombstones.deleteExpired(new Date().toISOString());
        // The webhook delivery log keeps 30 days of finished deliveries.
        await tx.webhooks.purgeFinished(new Date(Date.now() - 30 * 86400_000).toISOString());
        // AI quota counters matter for the current UTC day only; a week is kept for inspection.
        await tx.aiUsage.purgeBefore(new Date(Date.now() - 7 * 86400_000).toISOString().slice(0, 10));
        return purgeTombstones(tx, retentionDays);
      });
      if (accounts) log.info({ accounts, retentionDays }, "purged old tombstones");
    } catch (err) {
      log.warn({ err }, "maintenance failed");
    }
  };
  void run();
  const timer = setInterval(run, 3600_000);
  timer.unref();
  return () => clearInterval(timer);
}

// The service's Prometheus metrics (prom-client): process and Node.js defaults, HTTP requests by
// route and status with latency, store time, long-polls, rate-limit refusals, webhook deliveries,
// and whole-store counts read at scrape time (so every server on one database reports the same).
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { StoreObserver } from "../store/observedStore.ts";
import type { Store } from "../store/store.ts";

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export class ServiceMetrics {
  /** One registry per server (tests run several in one process; the global one would clash). */
  readonly registry = new Registry();
  readonly httpRequests = new Counter({
    name: "txtfs_http_requests_total",
    help: "HTTP requests answered, by method, route pattern and status code",
    labelNames: ["method", "route", "status_code"] as const,
    registers: [this.registry],
  });
  readonly httpDuration = new Histogram({
    name: "txtfs_http_request_duration_seconds",
    help: "Time from request to response, by method, route pattern and status code",
    labelNames: ["method", "route", "status_code"] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly storeDuration = new Histogram({
    name: "txtfs_store_unit_duration_seconds",
    help: "Time of store units of work (a transaction, or a consistent read), waiting for the store included",
    labelNames: ["kind", "outcome"] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly longPolls = new Gauge({
    name: "txtfs_feed_long_polls",
    help: "Change-feed long-polls waiting for a change now",
    registers: [this.registry],
  });
  readonly rateLimited = new Counter({
    name: "txtfs_rate_limited_total",
    help: "Requests refused with 429, by caller kind (key: an authenticated key or token; ip: anonymous)",
    labelNames: ["caller"] as const,
    registers: [this.registry],
  });
  readonly webhookAttempts = new Counter({
    name: "txtfs_webhook_attempts_total",
    help: "Webhook delivery attempts made by this server, by outcome",
    labelNames: ["outcome"] as const,
    registers: [this.registry],
  });
  private readonly storeUp = this.gauge("txtfs_store_up", "1 when the last scrape could read the store");
  private readonly users = this.gauge("txtfs_users", "Accounts in the store");
  private readonly keys = this.gauge("txtfs_api_keys_active", "API keys neither revoked nor expired");
  private readonly folders = this.gauge("txtfs_folders", "Folders in the store");
  private readonly files = this.gauge("txtfs_files", "Notes in the store");
  private readonly fileBytes = this.gauge("txtfs_file_bytes", "Total size of every note's current content");
  private readonly feedChanges = this.gauge(
    "txtfs_feed_changes",
    "Changes ever appended to the change feeds (the sum of every account's feed head)",
  );
  private readonly keyRequests = this.gauge(
    "txtfs_api_key_requests_today",
    "Requests made with API keys today (UTC), over every key: the sum of the keys' requests_today",
  );
  private readonly webhookQueue = new Gauge({
    name: "txtfs_webhook_deliveries",
    help: "Webhook deliveries by status (pending = the queue, failed = gave up after every retry)",
    labelNames: ["status"] as const,
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  private gauge(name: string, help: string): Gauge {
    return new Gauge({ name, help, registers: [this.registry] });
  }

  /** What the store wrapper reports (see store/observedStore.ts). */
  readonly storeObserver: StoreObserver = {
    unit: (kind, seconds, ok) => this.storeDuration.observe({ kind, outcome: ok ? "ok" : "error" }, seconds),
    subscribers: (delta) => this.longPolls.inc(delta),
  };

  /** Reads the whole-store counts, then renders everything in the Prometheus text format. */
  async render(store: Store, timeoutMs = 5000): Promise<string> {
    try {
      const stats = await withTimeout(
        store.read((tx) => tx.stats.snapshot(new Date().toISOString())),
        timeoutMs,
      );
      this.users.set(stats.users);
      this.keys.set(stats.activeKeys);
      this.folders.set(stats.folders);
      this.files.set(stats.files);
      this.fileBytes.set(stats.fileBytes);
      this.feedChanges.set(stats.feedChanges);
      this.keyRequests.set(stats.keyRequestsToday);
      this.webhookQueue.reset();
      for (const status of ["pending", "delivered", "failed"]) this.webhookQueue.set({ status }, 0);
      for (const [status, n] of Object.entries(stats.webhookDeliveries)) this.webhookQueue.set({ status }, n);
      this.storeUp.set(1);
    } catch {
      // The process metrics still matter most when the store is down: report that, not a 500.
      this.storeUp.set(0);
    }
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

/** Rejects if `promise` has not settled within `ms` (a store that hangs must not hang a probe). */
export function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

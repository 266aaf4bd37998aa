// Running the service: open the store, build the app, listen, and shut down gracefully.
import type { Logger } from "../lib/logger.ts";
import { openStore } from "../store/open.ts";
import { PostgresStore } from "../store/postgres/postgresStore.ts";
import type { Store } from "../store/store.ts";
import { buildApp } from "./app.ts";
import type { RateLimitConfig } from "./http/rateLimit.ts";
import { startMaintenance } from "./maintenance.ts";

export interface ServeOptions {
  host: string;
  port: number;
  dataDir: string;
  db?: string;
  rateLimit?: Partial<RateLimitConfig>;
  retentionDays: number;
  logger: Logger;
}

export interface RunningServer {
  url: string;
  store: Store;
  /** Stops accepting connections, lets in-flight requests finish, then closes the store. */
  close(): Promise<void>;
}

export async function startServer(opts: ServeOptions): Promise<RunningServer> {
  const store = await openStore({ dataDir: opts.dataDir, db: opts.db, logger: opts.logger });
  // Follow other servers' commits from the start (cache invalidation, long-poll wake-ups).
  if (store instanceof PostgresStore) await store.listen();
  const app = await buildApp({ store, logger: opts.logger, rateLimit: opts.rateLimit });
  const stopMaintenance = startMaintenance(store, opts.logger, opts.retentionDays);
  try {
    await app.listen({ host: opts.host, port: opts.port });
  } catch (err) {
    stopMaintenance();
    await store.close();
    throw err;
  }
  const address = app.server.address();
  const port = typeof address === "object" && address ? address.port : opts.port;
  const host = opts.host.includes(":") ? `[${opts.host}]` : opts.host;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${port}`,
    store,
    close() {
      closing ??= (async () => {
        stopMaintenance();
        await app.close();
        await store.close();
      })();
      return closing;
    },
  };
}

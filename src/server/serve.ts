// Running the service: open the store, build the app, listen, and shut down gracefully.

import { join } from "node:path";
import type { Logger } from "../lib/logger.ts";
import { embeddedStorePath, openStore } from "../store/open.ts";
import { PostgresStore } from "../store/postgres/postgresStore.ts";
import { acquireServeLock } from "../store/sqlite/serveLock.ts";
import type { Store } from "../store/store.ts";
import { buildApp, type RouteEntry } from "./app.ts";
import { importOldDavProps } from "./davPropsImport.ts";
import type { AttachmentLimits } from "./domain/attachments/rules.ts";
import type { BrainConfig } from "./domain/brain/config.ts";
import { indexOldNotes } from "./domain/links/indexOldNotes.ts";
import type { RateLimitConfig } from "./http/rateLimit.ts";
import { createDevIdp, DEV_AUDIENCE, DEV_CLIENT_ID } from "./identity/devIdp.ts";
import type { IdentityHub } from "./identity/hub.ts";
import { type IdentityConfig, IdentityProvider } from "./identity/provider.ts";
import { createVaultCipher, loadVaultKey } from "./identity/vaultCipher.ts";
import { startMaintenance } from "./maintenance.ts";
import { ServiceMetrics } from "./metrics.ts";
import { type WebhookOptions, WebhookWorker } from "./webhookWorker.ts";

export interface ServeOptions {
  host: string;
  port: number;
  dataDir: string;
  db?: string;
  rateLimit?: Partial<RateLimitConfig>;
  retentionDays: number;
  logger: Logger;
  /** Webhook delivery: allowed hosts besides loopback, retry schedule (tests shorten it). */
  webhooks?: Partial<WebhookOptions>;
  /** An external identity provider (OpenID Connect discovery from its issuer). */
  identity?: IdentityConfig;
  /** How often per-key usage is written (ms; default 5 s; tests shorten it). */
  usageFlushMs?: number;
  /** Run the dev identity provider in-process under /dev-idp (and use it). */
  /** The context brain: operator provider, quotas, outbound rules (see domain/brain/config.ts). */
  brain?: Partial<BrainConfig>;
  devIdp?: { accessTokenTtl?: number; clockToleranceSeconds?: number; realtimeFails?: () => boolean };
  /** One log line per request (default: TXTFS_LOG_REQUESTS=1). */
  logRequests?: boolean;
  /** Behind a reverse proxy: whose X-Forwarded-* headers to believe (see AppOptions). */
  trustProxy?: boolean | number | string[];
  /** GET /metrics, optionally behind a bearer token; false: not served. Default: served, open. */
  metrics?: { token?: string } | false;
  /** Attachments: bytes per file and per account (see AppOptions). */
  attachments?: Partial<AttachmentLimits>;
}

export interface RunningServer {
  url: string;
  store: Store;
  /** Sign-in state: the identity provider and, with --dev-idp, the dev provider. */
  identity: IdentityHub;
  /** The OpenAPI document of this server (as GET /openapi.json serves it, before provider URLs). */
  openapi(): Record<string, unknown>;
  /** Every `METHOD /path` the server answers, as registered. */
  routes(): string[];
  /** Every route with its schemas (for the bad-input suite and tools). */
  routeTable: readonly RouteEntry[];
  /** Stops accepting connections, lets in-flight requests finish, then closes the store. */
  close(): Promise<void>;
}

function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\./.test(host);
}

export async function startServer(opts: ServeOptions): Promise<RunningServer> {
  // One server per embedded store: refused before the store is even opened (or migrated).
  const embedded = embeddedStorePath({ dataDir: opts.dataDir, db: opts.db });
  const releaseLock = embedded && embedded !== ":memory:" ? acquireServeLock(embedded) : () => {};
  let store: Store;
  try {
    store = await openStore({ dataDir: opts.dataDir, db: opts.db, logger: opts.logger });
  } catch (err) {
    releaseLock();
    throw err;
  }
  // Follow other servers' commits from the start (cache invalidation, long-poll wake-ups).
  if (store instanceof PostgresStore) await store.listen();
  if (store.kind === "postgres" && !process.env.TXTFS_VAULT_KEY)
    opts.logger.warn(
      "TXTFS_VAULT_KEY is not set: vaulted credentials use this server's DATA/vault.key, which other servers on the database cannot read; give every server the same TXTFS_VAULT_KEY",
    );
  await importOldDavProps(store, opts.dataDir, opts.logger).catch((err) =>
    opts.logger.warn(
      { err },
      "importing the WebDAV properties kept before the store had them failed; tried again at the next start",
    ),
  );
  const hub: IdentityHub = { cipher: createVaultCipher(loadVaultKey(opts.dataDir)) };
  if (opts.identity) hub.provider = new IdentityProvider(opts.identity);
  const metrics = opts.metrics === false ? undefined : new ServiceMetrics();
  const app = await buildApp({
    store,
    logger: opts.logger,
    rateLimit: opts.rateLimit,
    webhookAllowHosts: opts.webhooks?.allowHosts,
    identity: hub,
    brain: {
      // Users' own servers may be on private addresses only when this server is not reachable from
      // elsewhere (bound to loopback), unless the operator decides otherwise.
      allowPrivateUserUrls: isLoopback(opts.host),
      ...opts.brain,
    },
    logRequests: opts.logRequests,
    trustProxy: opts.trustProxy,
    metrics,
    metricsToken: opts.metrics ? opts.metrics.token : undefined,
    usageFlushMs: opts.usageFlushMs,
    attachments: opts.attachments,
  });
  const stopMaintenance = startMaintenance(store, opts.logger, opts.retentionDays);
  const webhooks = new WebhookWorker(store, opts.logger, {
    ...opts.webhooks,
    onAttempt: metrics
      ? (ok) => metrics.webhookAttempts.inc({ outcome: ok ? "delivered" : "failed" })
      : undefined,
  });
  try {
    await app.listen({ host: opts.host, port: opts.port });
    webhooks.start();
    // Once, after an upgrade: notes saved before links were read get their links, in the
    // background (a store of any size starts at once; until then a link to such a note shows as
    // unresolved). A failure leaves them for the next start.
    void indexOldNotes(store).then(
      (indexed) => {
        if (indexed)
          opts.logger.info({ notes: indexed }, "indexed the links of notes saved before links were read");
      },
      (err) => opts.logger.warn({ err }, "indexing the links of notes saved before links were read failed"),
    );
  } catch (err) {
    stopMaintenance();
    await store.close();
    releaseLock();
    throw err;
  }
  const address = app.server.address();
  const port = typeof address === "object" && address ? address.port : opts.port;
  const host = opts.host.includes(":") ? `[${opts.host}]` : opts.host;
  const url = `http://${host}:${port}`;
  if (opts.devIdp) {
    // Its issuer is this server's URL + /dev-idp, known only now that the port is.
    const devIdp = await createDevIdp({
      issuer: `${url}/dev-idp`,
      accessTokenTtl: opts.devIdp.accessTokenTtl,
      keyFile: join(opts.dataDir, "dev-idp-key.json"),
      realtimeFails: opts.devIdp.realtimeFails,
      mcpResource: `${url}/mcp`,
    });
    hub.devIdp = devIdp;
    hub.provider = new IdentityProvider({
      name: "dev",
      issuer: devIdp.issuer,
      clientId: DEV_CLIENT_ID,
      audience: DEV_AUDIENCE,
      resources: [`${url}/mcp`],
      clockToleranceSeconds: opts.devIdp.clockToleranceSeconds,
    });
  }
  let closing: Promise<void> | undefined;
  return {
    url,
    store,
    identity: hub,
    openapi: () => structuredClone(app.swagger() as unknown as Record<string, unknown>),
    routes: () => [...app.servedRoutes],
    routeTable: app.routeTable,
    close() {
      closing ??= (async () => {
        stopMaintenance();
        await webhooks.stop();
        await app.close();
        await store.close();
        releaseLock();
      })();
      return closing;
    },
  };
}

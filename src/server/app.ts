// Builds the service: request id and API-Version on every response, authentication and scope,
// rate limits, schema validation, the routes, and one error body for every failure.
import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import cors from "@fastify/cors";
import { type TypeBoxTypeProvider, TypeBoxValidatorCompiler } from "@fastify/type-provider-typebox";
import Fastify, { type FastifyRequest, LogController } from "fastify";
import { VERSION } from "../cli/version.ts";
import { randomBase62 } from "../lib/ids.ts";
import type { Logger } from "../lib/logger.ts";
import { observeStore } from "../store/observedStore.ts";
import type { Store } from "../store/store.ts";
import { DavService, isDavPath } from "./davService.ts";
import { type AttachmentLimits, DEFAULT_ATTACHMENT_LIMITS } from "./domain/attachments/rules.ts";
import { ProviderPool } from "./domain/brain/capability.ts";
import { type BrainConfig, DEFAULT_BRAIN_CONFIG } from "./domain/brain/config.ts";
import { ServiceError } from "./domain/errors.ts";
import { LIMITS } from "./domain/limits.ts";
import { AllowedMethods } from "./http/allowedMethods.ts";
import { authenticate, requireScope } from "./http/auth.ts";
import { handleError, handleNotFound, routeNotFound } from "./http/errors.ts";
import { clientErrorHandler, frameworkErrors, installInputGuard } from "./http/inputGuard.ts";
import { DEFAULT_RATE_LIMIT, type Limiter, type RateLimitConfig, RateLimiter } from "./http/rateLimit.ts";
import { SharedRateLimiter } from "./http/sharedRateLimit.ts";
import { costOf } from "./http/types.ts";
import { KeyUsage } from "./http/usage.ts";
import type { IdentityHub } from "./identity/hub.ts";
import { createVaultCipher } from "./identity/vaultCipher.ts";
import type { ServiceMetrics } from "./metrics.ts";
import { completeRoute } from "./openapi/completeRoute.ts";
import { registerOpenApi } from "./openapi/document.ts";
import { referencePages } from "./reference/pages.ts";
import { attachmentRoutes } from "./routes/attachments.ts";
import { batchRoutes } from "./routes/batch.ts";
import { brainRoutes } from "./routes/brain.ts";
import { brainMediaRoutes } from "./routes/brainMedia.ts";
import { changeRoutes } from "./routes/changes.ts";
import { clientRoutes } from "./routes/client.ts";
import { collaborationRoutes } from "./routes/collaboration.ts";
import { dashboardRoutes } from "./routes/dashboard.ts";
import { deviceRoutes } from "./routes/devices.ts";
import { type CatalogEntry, discoverRoutes } from "./routes/discover.ts";
import { fileRoutes } from "./routes/files.ts";
import { folderRoutes } from "./routes/folders.ts";
import { identityRoutes } from "./routes/identity.ts";
import { keyPageRoutes } from "./routes/keyPage.ts";
import { linkRoutes } from "./routes/links.ts";
import { mcpRoutes } from "./routes/mcp.ts";
import { openApiRoutes } from "./routes/openapi.ts";
import { opsRoutes } from "./routes/ops.ts";
import { pageRoutes } from "./routes/pages.ts";
import { protectedResourceRoutes } from "./routes/protectedResource.ts";
import { referenceRoutes } from "./routes/reference.ts";
import { shareRoutes } from "./routes/shares.ts";
import { skillRoutes } from "./routes/skills.ts";
import { syncRoutes } from "./routes/sync.ts";
import { tempUrlRoutes } from "./routes/tempUrls.ts";
import { themeRoutes } from "./routes/themes.ts";
import { versionRoutes } from "./routes/versions.ts";
import { webhookRoutes } from "./routes/webhooks.ts";

export const API_VERSION = "v1";

export interface AppOptions {
  store: Store;
  logger: Logger;
  rateLimit?: Partial<RateLimitConfig>;
  /** Hosts webhooks may be delivered to besides loopback. */
  webhookAllowHosts?: readonly string[];
  /** How often per-key usage is written (ms; default 5 s). */
  usageFlushMs?: number;
  /** Sign-in: the identity provider, the dev provider and the vault cipher (a throwaway key if absent). */
  identity?: IdentityHub;
  /** The context brain: the operator's AI provider, quotas, outbound rules. */
  brain?: Partial<BrainConfig>;
  /** One log line per request (default: TXTFS_LOG_REQUESTS=1). */
  logRequests?: boolean;
  /**
   * Behind a reverse proxy: which senders' X-Forwarded-For/-Proto/-Host to believe (Fastify's
   * `trustProxy`). They then decide the client address (logs, anonymous rate limits) and the
   * scheme (the session cookie's `Secure`, absolute URLs).
   */
  trustProxy?: boolean | number | string[];
  /** Prometheus metrics, served on GET /metrics (absent: no /metrics). */
  metrics?: ServiceMetrics;
  /** Require `Authorization: Bearer <token>` on GET /metrics. */
  metricsToken?: string;
  /** Attachments: bytes per file and per account (defaults: 100 MiB, 10 GiB). */
  attachments?: Partial<AttachmentLimits>;
}

/** Is this request for the in-process dev identity provider (served beside the API, not by Fastify)? */
function devIdpPath(hub: IdentityHub, url: string | undefined): boolean {
  if (!hub.devIdp || !url) return false;
  const prefix = new URL(hub.devIdp.issuer).pathname.replace(/\/$/, "");
  return url === prefix || url.startsWith(`${prefix}/`) || url.startsWith(`${prefix}?`);
}

/** How long an idle keep-alive connection stays open: Fastify's own default, longer than clients keep theirs. */
const KEEP_ALIVE_MS = 72_000;

const EXPOSED_HEADERS = [
  "ETag",
  "Location",
  "Retry-After",
  "RateLimit-Limit",
  "RateLimit-Remaining",
  "RateLimit-Reset",
  "RateLimit-Policy",
  "RateLimit",
  "X-Request-ID",
  "API-Version",
  "Idempotent-Replayed",
  "Allow",
];

declare module "fastify" {
  interface FastifyRequest {
    rateKey?: string;
  }
  interface FastifyInstance {
    /** Every `METHOD /path` this app answers (HEAD and CORS preflights aside), as registered. */
    servedRoutes: string[];
    routeTable: readonly RouteEntry[];
    /** Spends a request's rate-limit points; returns its RateLimit-* headers (see buildApp). */
    meter(request: FastifyRequest, status: number): Record<string, string>;
  }
}

/**
 * TypeBox converts query strings to the schema's types, and would read `limit=1.5`, `true` or `0x10`
 * as integers. Integer query parameters must be written as plain decimal integers.
 */
const strictQueryIntegers: typeof TypeBoxValidatorCompiler = (route) => {
  const validate = TypeBoxValidatorCompiler(route);
  if (route.httpPart !== "querystring") return validate;
  const props = (route.schema as { properties?: Record<string, { type?: string }> }).properties ?? {};
  const integers = Object.keys(props).filter((k) => props[k]?.type === "integer");
  return (value: unknown) => {
    const query = value as Record<string, unknown>;
    for (const key of integers) {
      const raw = query[key];
      if (raw !== undefined && !(typeof raw === "string" && /^-?\d+$/.test(raw))) {
        const error = {
          instancePath: `/${key}`,
          schemaPath: "",
          keyword: "type",
          message: "must be an integer",
          params: {},
        };
        return { error: [error] };
      }
    }
    return validate(value);
  };
};

export type App = Awaited<ReturnType<typeof buildApp>>;

/** A route as registered: what the bad-input suite generates requests for, schema by schema. */
export interface RouteEntry {
  method: string;
  url: string;
  scope?: string;
  schema?: { body?: unknown; querystring?: unknown; params?: unknown };
}

export async function buildApp(opts: AppOptions) {
  // Request ids: a random per-process prefix plus a counter (unique, and no entropy per request).
  const idPrefix = randomBase62(12);
  let requests = 0;
  const nextId = () => `req_${idPrefix}${(++requests).toString(36)}`;
  const { metrics } = opts;
  const store = metrics ? observeStore(opts.store, metrics.storeObserver) : opts.store;
  const hub: IdentityHub = opts.identity ?? { cipher: createVaultCipher(randomBytes(32)) };
  // `/dav/` is answered before Fastify's routes (davService.ts); made once the key usage exists.
  let dav: DavService | undefined;
  const app = Fastify({
    // The dev identity provider (oidc-provider, a Koa app) answers its own paths on the same port.
    // Fastify sets its keep-alive timeout only on servers it makes itself: Node's 5 s closed idle
    // connections that clients were about to reuse (ECONNRESET on a loaded machine).
    serverFactory: (handler) => {
      const server = createServer((req, res) =>
        devIdpPath(hub, req.url)
          ? hub.devIdp!.handle(req, res)
          : dav && isDavPath(req.url)
            ? void dav.handle(req, res)
            : handler(req, res),
      );
      server.keepAliveTimeout = KEEP_ALIVE_MS;
      return server;
    },
    loggerInstance: opts.logger,
    // Per-request log lines only on demand: at thousands of requests/s they would dominate.
    logController: new LogController({
      disableRequestLogging: !(opts.logRequests ?? process.env.TXTFS_LOG_REQUESTS === "1"),
    }),
    // A hop count is accepted at run time (proxy-addr) but missing from Fastify's types.
    trustProxy: (opts.trustProxy ?? false) as boolean | string[],
    bodyLimit: LIMITS.contentBytes + 1024 * 1024, // a 5 MiB body plus its JSON envelope
    // Clients may bring their own correlation id; otherwise we mint one.
    genReqId: (req) => {
      const given = req.headers["x-request-id"];
      return typeof given === "string" && /^[\w.:-]{1,128}$/.test(given) ? given : nextId();
    },
    return503OnClosing: true,
    // Failures below the routes answer the spec's error body too.
    frameworkErrors,
    clientErrorHandler: clientErrorHandler(nextId, API_VERSION),
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.setValidatorCompiler(strictQueryIntegers);
  // Response schemas document the API (OpenAPI) and are checked by the contract test; they do not
  // shape what is sent: fields beyond a schema are additive and must reach the client.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  app.addHook("onRoute", completeRoute);
  // Set before any plugin registers a route: a route takes the error handler in force when it is added.
  app.setErrorHandler(handleError);
  app.setNotFoundHandler(handleNotFound);
  await registerOpenApi(app, hub, VERSION);
  // text/plain and text/markdown bodies are parsed (and checked for valid UTF-8) by the input guard.
  installInputGuard(app);

  const rateConfig = { ...DEFAULT_RATE_LIMIT, ...opts.rateLimit };
  // Servers sharing a PostgreSQL database share their rate-limit windows through it.
  const limiter: Limiter =
    store.kind === "postgres"
      ? new SharedRateLimiter(rateConfig, store, opts.logger)
      : new RateLimiter(rateConfig);
  const usage = new KeyUsage(store, opts.logger, opts.usageFlushMs);
  let signalClosing!: () => void;
  let shuttingDown = false;
  const closing = new Promise<void>((resolve) => {
    signalClosing = () => {
      shuttingDown = true;
      resolve();
    };
  });
  // discover lists every /api/v1 route as it registers (after completeRoute named its operation);
  // the route table (with schemas) is what the bad-input suite derives its requests from.
  const catalog: CatalogEntry[] = [];
  const served: string[] = [];
  const routeTable: RouteEntry[] = [];
  const allowedMethods = new AllowedMethods();
  app.decorate("servedRoutes", served);
  app.addHook("onRoute", (route) => {
    for (const method of [route.method].flat()) {
      if (method !== "HEAD" && method !== "OPTIONS") {
        if (!route.config?.notOffered) allowedMethods.add(method, route.url);
        served.push(`${method} ${route.url}`);
        routeTable.push({ method, url: route.url, scope: route.config?.scope, schema: route.schema });
      }
    }
    if (!route.url.startsWith("/api/v1") || route.method === "HEAD") return;
    const scope = route.config?.scope;
    const schema = (route.schema ?? {}) as { operationId?: string; summary?: string; "x-verb"?: string };
    for (const method of [route.method].flat()) {
      catalog.push({
        verb: schema["x-verb"] ?? schema.operationId ?? `${method} ${route.url}`,
        method,
        path: route.url,
        scope: scope && scope !== "public" ? scope : null,
        description: schema.summary ?? "",
      });
    }
  });

  // Before CORS, whose preflight answer ends the request: every response carries these. A method
  // the path does not take is 405 here, before authentication and before a body is read.
  app.addHook("onRequest", async (request, reply) => {
    reply.header("API-Version", API_VERSION).header("X-Request-ID", request.id);
    const path = request.url.split("?")[0]!;
    if (request.method === "OPTIONS") {
      const allowed = allowedMethods.of(path);
      if (allowed.length === 0) throw routeNotFound(request);
      reply.header("Allow", allowed.join(", "));
      return;
    }
    const refused = allowedMethods.refusal(
      request.method,
      path,
      request.is404 ? undefined : request.routeOptions.url,
    );
    if (refused) throw refused;
  });

  // Browsers may call the API (the versioned verbs are for them). Bearer tokens only: with
  // `Access-Control-Allow-Origin: *` a browser never sends cookies along, so the session cookie of
  // key management cannot be ridden cross-site. Registered first so even a 401 carries the headers.
  await app.register(cors, {
    hook: "onRequest",
    origin: "*",
    methods: ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"],
    allowedHeaders: [
      "Authorization",
      "Content-Type",
      "If-Match",
      "If-None-Match",
      "Idempotency-Key",
      "X-Request-ID",
    ],
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: 600,
    // OPTIONS without Origin is a plain OPTIONS request (RFC 9110): 204 with Allow, not a 400.
    strictPreflight: false,
  });

  app.addHook("onRequest", async (request) => {
    if (request.routeOptions.config?.unmetered) return;
    const scope = request.routeOptions.config?.scope;
    const needsAuth = scope !== undefined && scope !== "public" && request.method !== "OPTIONS";
    request.rateKey = `ip:${request.ip}`;
    try {
      if (needsAuth) {
        request.actor = await authenticate(request, store, usage, hub);
        request.rateKey = request.actor.principal;
        requireScope(request.actor, scope);
      }
    } finally {
      // Failed authentications count against the caller's IP (and still get the headers).
      // Admitted only if the request's full cost still fits (a 304 is refunded: it is charged in onSend).
      const check = await limiter.check(request.rateKey, !request.actor, costOf(request.method, 200));
      if (!check.allowed) {
        metrics?.rateLimited.inc({ caller: request.actor ? "key" : "ip" });
        // biome-ignore lint/correctness/noUnsafeFinally: a 429 replaces whatever else happened
        throw new ServiceError(
          429,
          "rate_limited",
          `Rate limit of ${check.limit} points per ${limiter.config.windowSeconds} s reached.`,
          `Wait ${check.resetSeconds} s (Retry-After) before retrying; reads cost 1 point, writes 5, 304s nothing.`,
          undefined,
          { "Retry-After": String(check.resetSeconds) },
        );
      }
    }
  });

  // If-Match on a mutation of a record without an ETag is refused, never silently ignored.
  app.addHook("preValidation", async (request) => {
    if (
      request.headers["if-match"] !== undefined &&
      !["GET", "HEAD", "OPTIONS"].includes(request.method) &&
      !request.routeOptions.config?.ifMatch &&
      request.routeOptions.url !== undefined
    ) {
      throw new ServiceError(
        400,
        "if_match_not_supported",
        `${request.method} ${request.routeOptions.url} changes a record that has no ETag, so If-Match cannot be checked.`,
        "Send the request without If-Match. File writes and deletes, version restores, suggestion reviews and theme saves honour it.",
      );
    }
  });

  /**
   * Spends the request's points and returns the spec's RateLimit-* headers for its answer. Probes
   * (unmetered) spend nothing but still report the caller's window; a streamed (hijacked) response
   * calls this itself before it writes its head, since onSend never sees it.
   */
  const meter = (request: FastifyRequest, status: number): Record<string, string> => {
    const cost = request.routeOptions.config?.unmetered ? 0 : costOf(request.method, status);
    const state = limiter.spend(request.rateKey ?? `ip:${request.ip}`, !request.actor, cost);
    let policy = `"default";q=${state.limit};w=${limiter.config.windowSeconds}`;
    let trio = { limit: state.limit, remaining: state.remaining, reset: state.resetSeconds };
    const headers: Record<string, string> = {};
    const ai = request.aiQuota;
    if (ai) {
      // AI operations also report the account's daily AI quota (IETF RateLimit fields); when that
      // quota refused the request, the spec's trio describes it.
      policy += `, "ai-requests";q=${ai.requestsLimit};w=86400, "ai-tokens";q=${ai.tokensLimit};w=86400`;
      headers.RateLimit = `"ai-requests";r=${ai.requestsLeft};t=${ai.resetSeconds}, "ai-tokens";r=${ai.tokensLeft};t=${ai.resetSeconds}`;
      if (status === 429 && (ai.requestsLeft <= 0 || ai.tokensLeft <= 0)) {
        trio = { limit: ai.requestsLimit, remaining: 0, reset: ai.resetSeconds };
      }
    }
    headers["RateLimit-Limit"] = String(trio.limit);
    headers["RateLimit-Remaining"] = String(trio.remaining);
    headers["RateLimit-Reset"] = String(trio.reset);
    headers["RateLimit-Policy"] = policy;
    return headers;
  };
  app.decorate("meter", meter);

  app.addHook("onSend", async (request, reply, payload) => {
    reply.headers(meter(request, reply.statusCode));
    // Time spent in the server (RFC Server-Timing), so clients and benchmarks can tell it from the network.
    reply.header("Server-Timing", `app;dur=${reply.elapsedTime.toFixed(2)}`);
    // A response finished during shutdown (a released long-poll) closes its connection: once the
    // server stops, nothing else would close an idle keep-alive one, and shutdown would wait for it.
    if (shuttingDown) reply.header("Connection", "close");
    return payload;
  });

  if (metrics) {
    app.addHook("onResponse", async (request, reply) => {
      // The route pattern, never the raw URL: ids in paths would make a series per note.
      const labels = {
        method: request.method,
        route: request.routeOptions.url ?? "unmatched",
        status_code: String(reply.statusCode),
      };
      metrics.httpRequests.inc(labels);
      metrics.httpDuration.observe(labels, reply.elapsedTime / 1000);
    });
  }
  // The dashboard's per-key statistics: counted in memory, written with the usage flush.
  app.addHook("onResponse", async (request, reply) => {
    const principal = request.actor?.principal;
    if (principal?.startsWith("key_")) usage.observe(principal, reply.statusCode, reply.elapsedTime);
  });

  const brain = new ProviderPool({ ...DEFAULT_BRAIN_CONFIG, ...opts.brain });
  const attachments = { ...DEFAULT_ATTACHMENT_LIMITS, ...opts.attachments };
  dav = new DavService({
    store,
    usage,
    hub,
    attachments,
    limiter,
    log: opts.logger,
  });
  const deps = { store, closing, identity: hub, brain, attachments };
  await app.register(discoverRoutes(() => catalog, hub));
  await app.register(fileRoutes(deps));
  await app.register(attachmentRoutes(deps));
  await app.register(folderRoutes(deps));
  await app.register(linkRoutes(deps));
  await app.register(changeRoutes(deps));
  await app.register(shareRoutes(deps));
  await app.register(versionRoutes(deps));
  await app.register(collaborationRoutes(deps));
  await app.register(tempUrlRoutes(deps));
  await app.register(skillRoutes(deps));
  await app.register(themeRoutes(deps));
  await app.register(batchRoutes(deps));
  await app.register(deviceRoutes(deps));
  await app.register(syncRoutes(deps));
  await app.register(webhookRoutes(deps, { allowHosts: opts.webhookAllowHosts ?? [] }));
  await app.register(identityRoutes(deps));
  await app.register(keyPageRoutes(deps));
  await app.register(brainRoutes(deps));
  await app.register(brainMediaRoutes(deps));
  await app.register(opsRoutes(deps, { metrics, metricsToken: opts.metricsToken }));
  await app.register(openApiRoutes(hub));
  await app.register(referenceRoutes());
  await app.register(clientRoutes());
  await app.register(pageRoutes(hub, VERSION));
  await app.register(dashboardRoutes(deps));
  let referenceCache: Map<string, string> | undefined;
  const reference = () =>
    (referenceCache ??= new Map(
      referencePages(app.swagger() as unknown as Record<string, unknown>).map((p) => [p.slug, p.text]),
    ));
  await app.register(mcpRoutes({ store, identity: hub, version: VERSION, reference }));
  await app.register(protectedResourceRoutes(hub));

  app.decorate("routeTable", routeTable as readonly RouteEntry[]);

  app.addHook("preClose", async () => {
    signalClosing(); // release long-polls so in-flight requests can finish
  });
  app.addHook("onClose", async () => {
    await usage.close();
    await limiter.close();
    await brain.close();
  });
  return app;
}

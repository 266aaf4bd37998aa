// Endpoints for operators and their tools, none of them needing an account: GET /healthz (the
// process answers), GET /readyz (the store answers and its schema is the one this txtfs expects:
// 503 otherwise, so a load balancer sends traffic elsewhere) and GET /metrics (Prometheus).
import { timingSafeEqual } from "node:crypto";
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { ServiceError } from "../domain/errors.ts";
import { type ServiceMetrics, withTimeout } from "../metrics.ts";
import type { RouteDeps } from "./deps.ts";

/** A store slower than this to answer a probe counts as unreachable. */
export const READINESS_TIMEOUT_MS = 2000;

export interface OpsOptions {
  /** Serve GET /metrics from these metrics (absent: no /metrics route). */
  metrics?: ServiceMetrics;
  /** Require `Authorization: Bearer <token>` on /metrics. */
  metricsToken?: string;
}

const notReady = (why: string) =>
  new ServiceError(
    503,
    "not_ready",
    `Not ready: ${why}.`,
    "Check that the store is running and reachable (see the server's log); GET /readyz again.",
  );

function sameToken(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

export function opsRoutes({ store }: RouteDeps, opts: OpsOptions): FastifyPluginAsyncTypebox {
  return async (app) => {
    const config = { scope: "public" as const, unmetered: true };
    app.get("/healthz", { config }, async (_req, reply) => {
      reply.header("Cache-Control", "no-store");
      return { status: "ok" };
    });

    app.get("/readyz", { config }, async (_req, reply) => {
      reply.header("Cache-Control", "no-store");
      let schema: { current: number; expected: number };
      try {
        schema = await withTimeout(store.schema(), READINESS_TIMEOUT_MS);
      } catch (err) {
        throw notReady(`the ${store.kind} store does not answer (${(err as Error).message})`);
      }
      if (schema.current !== schema.expected)
        throw notReady(
          `the ${store.kind} store's schema is at version ${schema.current}, this txtfs needs ${schema.expected}` +
            (schema.current > schema.expected ? " (a newer txtfs migrated it: upgrade this one)" : ""),
        );
      return { status: "ready", store: store.kind, schemaVersion: schema.current };
    });

    const { metrics, metricsToken } = opts;
    if (!metrics) return;
    app.get("/metrics", { config }, async (req, reply) => {
      if (metricsToken) {
        const given = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? "")?.[1] ?? "";
        if (!sameToken(given, metricsToken))
          throw new ServiceError(
            401,
            "invalid_metrics_token",
            "GET /metrics needs this server's metrics token.",
            "Send `Authorization: Bearer <token>` with the token given to serve --metrics-token.",
            undefined,
            { "WWW-Authenticate": 'Bearer realm="metrics"' },
          );
      }
      reply.header("Cache-Control", "no-store").type(metrics.contentType);
      return metrics.render(store);
    });
  };
}

// The usage dashboard (/dashboard) and its data (/api/me/usage): the browser session, like the key page.
import fastifyCookie from "@fastify/cookie";
import type { FastifyPluginAsync } from "fastify";
import { Type } from "typebox";
import { usageReport } from "../domain/usageReport.ts";
import { sessionBeforeInput, sessionGuard } from "../http/session.ts";
import { op, Text } from "../openapi/describe.ts";
import { renderDashboard } from "../pages/dashboard.ts";
import type { RouteDeps } from "./deps.ts";

const Day = Type.Object({
  day: Type.String(),
  requests: Type.Integer(),
  errors: Type.Record(Type.String(), Type.Integer()),
  errorCount: Type.Integer(),
  rateLimited: Type.Integer(),
  p50: Type.Union([Type.Integer(), Type.Null()]),
  p95: Type.Union([Type.Integer(), Type.Null()]),
  p99: Type.Union([Type.Integer(), Type.Null()]),
});
const Report = Type.Object({
  days: Type.Array(Type.String()),
  keys: Type.Array(
    Type.Object({
      id: Type.String(),
      label: Type.String(),
      tokenPrefix: Type.String(),
      days: Type.Array(Day),
    }),
  ),
});

export function dashboardRoutes({ store }: RouteDeps): FastifyPluginAsync {
  return async (app) => {
    // The browser session's cookie, parsed in this plugin's scope as on the key page.
    await app.register(fastifyCookie);
    const guard = sessionGuard(store);
    const { loadSession, requireSession } = guard;
    sessionBeforeInput(app, guard);
    const pub = { config: { scope: "public" as const } };
    const pageDoc = op({
      id: "usageDashboard",
      area: "auth",
      surface: "signIn",
      summary:
        "Usage dashboard for the signed-in user: per key and day, requests, errors, rate limits, latency.",
      ok: { 200: Text("HTML page.", ["text/html"]) },
    });
    app.get("/dashboard", { ...pub, schema: pageDoc }, async (req, reply) => {
      const ctx = await loadSession(req);
      const report = ctx ? await store.read((tx) => usageReport(tx, ctx.user.id)) : { days: [], keys: [] };
      return reply
        .type("text/html; charset=utf-8")
        .header("cache-control", "no-store")
        .header("x-frame-options", "DENY")
        .header(
          "content-security-policy",
          "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; frame-ancestors 'none'",
        )
        .send(renderDashboard({ email: ctx?.user.email ?? null, ...report }));
    });
    const dataDoc = op({
      id: "getUsage",
      area: "auth",
      surface: "session",
      summary: "The dashboard's data as JSON (last 14 UTC days, per key).",
      ok: { 200: Report },
    });
    app.get("/api/me/usage", { ...pub, schema: dataDoc }, async (req) => {
      const ctx = await requireSession(req);
      return store.read((tx) => usageReport(tx, ctx.user.id));
    });
  };
}

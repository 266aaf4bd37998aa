// The key-management session: the `session` cookie (HttpOnly, SameSite=Lax, Secure over HTTPS; only
// its SHA-256 is stored) and the CSRF token every change must carry. Used by the sign-in and key
// page routes only, which register @fastify/cookie (parsing and Set-Cookie) and @fastify/formbody
// (HTML forms): file operations never accept the cookie (see auth.ts).
import { createHash, timingSafeEqual } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { randomBase62 } from "../../lib/ids.ts";
import { nowIso } from "../../lib/time.ts";
import type { UserRow } from "../../store/repos/rows.ts";
import type { SessionRow } from "../../store/repos/sessions.ts";
import type { Store, Tx } from "../../store/store.ts";
import { ServiceError } from "../domain/errors.ts";

export const SESSION_COOKIE = "session";
export const SESSION_TTL_MS = 8 * 3600 * 1000;

export interface SessionContext {
  session: SessionRow;
  user: UserRow;
  idHash: string;
}

export type FormBody = Record<string, string | string[]>;

export const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

/** A cookie the browser sent (decoded), if any. */
export function readCookie(request: FastifyRequest, name: string): string | undefined {
  return request.cookies[name];
}

/**
 * Sets (or, with max age 0, clears) a cookie: HttpOnly, SameSite=Lax, Secure when the request came
 * over HTTPS (directly, or through a proxy trusted with --trust-proxy).
 */
export function setCookie(
  request: FastifyRequest,
  reply: FastifyReply,
  name: string,
  value: string,
  maxAgeSeconds: number,
  path = "/",
): void {
  reply.setCookie(name, value, {
    path,
    httpOnly: true,
    sameSite: "lax",
    maxAge: maxAgeSeconds,
    secure: request.protocol === "https",
  });
}

export const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
export const many = (v: string | string[] | undefined) => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

const sessionRequired = (message: string) =>
  new ServiceError(
    401,
    "session_required",
    message,
    "Sign in on the key page (/keys) first (with the service's all-scopes key: txtfs open keys); API keys and access tokens cannot manage keys.",
  );

const csrfFailed = (why: string) =>
  new ServiceError(
    403,
    "csrf_failed",
    `The request was refused as a possible cross-site request forgery: ${why}.`,
    "Reload the key page and submit the form again (JSON clients: send the session's X-CSRF-Token).",
  );

/** Opens a session for the user; returns the cookie value (shown to the browser only). */
export async function createSession(tx: Tx, userId: string, identityId: string | null): Promise<string> {
  const raw = randomBase62(43);
  await tx.sessions.purgeExpired(nowIso());
  await tx.sessions.insert({
    id_hash: sha256(raw),
    user_id: userId,
    identity_id: identityId,
    csrf_token: randomBase62(32),
    created_at: nowIso(),
    expires_at: new Date(Date.now() + SESSION_TTL_MS).toISOString(),
  });
  return raw;
}

export function sessionGuard(store: Store) {
  async function loadSession(request: FastifyRequest): Promise<SessionContext | null> {
    const raw = readCookie(request, SESSION_COOKIE);
    if (!raw || !/^[0-9A-Za-z]{20,64}$/.test(raw)) return null;
    const idHash = sha256(raw);
    const found = await store.read(async (tx) => {
      const session = await tx.sessions.byHash(idHash);
      const user = session ? await tx.users.byId(session.user_id) : undefined;
      return session && user ? { session, user } : null;
    });
    if (!found || found.session.expires_at <= nowIso()) return null;
    return { ...found, idHash };
  }

  /** The session; bearer credentials are refused here (key management is for the browser session). */
  async function requireSession(request: FastifyRequest): Promise<SessionContext> {
    if (request.headers.authorization) {
      throw sessionRequired("Key management accepts only the browser session, never a bearer credential.");
    }
    const ctx = await loadSession(request);
    if (!ctx) throw sessionRequired("Key management needs a signed-in browser session.");
    return ctx;
  }

  /** A change: the session, plus its CSRF token (form field `_csrf` or header X-CSRF-Token) and origin. */
  async function requireChange(request: FastifyRequest): Promise<SessionContext> {
    const ctx = await requireSession(request);
    const origin = request.headers.origin;
    if (origin && origin !== "null") {
      let host: string;
      try {
        host = new URL(origin).host;
      } catch {
        throw csrfFailed("malformed Origin");
      }
      if (host !== request.host) throw csrfFailed("foreign origin");
    }
    const header = request.headers["x-csrf-token"];
    const body = request.body as FormBody | undefined;
    const given = typeof header === "string" ? header : one(body?._csrf);
    if (!given) throw csrfFailed("no CSRF token");
    const a = Buffer.from(given);
    const b = Buffer.from(ctx.session.csrf_token);
    if (a.length !== b.length || !timingSafeEqual(a, b)) throw csrfFailed("wrong CSRF token");
    return ctx;
  }

  return { loadSession, requireSession, requireChange };
}

/**
 * The session before the input, as the bearer routes authenticate before they validate: on a
 * session route (`x-surface: session`) no session is a 401 before the body is even read, and a
 * change without its CSRF token a 403 before the schema is checked. Added in the plugin that parses
 * the cookie, after it.
 */
export function sessionBeforeInput(app: FastifyInstance, guard: ReturnType<typeof sessionGuard>): void {
  const isSessionRoute = (request: FastifyRequest) =>
    (request.routeOptions.schema as { "x-surface"?: string } | undefined)?.["x-surface"] === "session";
  app.addHook("onRequest", async (request) => {
    if (isSessionRoute(request)) await guard.requireSession(request);
  });
  app.addHook("preValidation", async (request) => {
    if (isSessionRoute(request) && request.method !== "GET" && request.method !== "HEAD")
      await guard.requireChange(request);
  });
}

// `/dav/` on `txtfs serve`: WebDAV over the service's domain (src/dav/serviceBackend.ts). Requests
// below /dav/ are taken before Fastify's routes (WebDAV has its own methods, CORS and bodies): the
// caller is authenticated as for the API (the key as the Basic password, or a bearer token) and
// each request is served on that caller's own site, spending the caller's rate-limit points.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { FastifyRequest } from "fastify";
import { challenge, keyOf } from "../dav/auth.ts";
import { cors } from "../dav/cors.ts";
import { handleDav } from "../dav/handler.ts";
import type { KeptSite } from "../dav/request.ts";
import { ServiceBackend } from "../dav/serviceBackend.ts";
import { ServiceTombstones } from "../dav/serviceTombstones.ts";
import { StoreDeadProps } from "../dav/storeDeadProps.ts";
import { StoreLockKeeper } from "../dav/storeLockKeeper.ts";
import type { Logger } from "../lib/logger.ts";
import type { Store } from "../store/store.ts";
import type { AttachmentLimits } from "./domain/attachments/rules.ts";
import { authenticate } from "./http/auth.ts";
import type { Limiter } from "./http/rateLimit.ts";
import { costOf } from "./http/types.ts";
import type { KeyUsage } from "./http/usage.ts";
import type { IdentityHub } from "./identity/hub.ts";

export const DAV_PREFIX = "/dav/";

export function isDavPath(url: string | undefined): boolean {
  const path = (url ?? "").split("?")[0]!;
  return path === "/dav" || path.startsWith(DAV_PREFIX);
}

export interface DavServiceDeps {
  store: Store;
  usage: KeyUsage;
  hub: IdentityHub;
  attachments: AttachmentLimits;
  /** The API's rate limiter: WebDAV requests spend the same points (PROPFIND as a read). */
  limiter: Limiter;
  log: Logger;
}

export class DavService {
  private readonly deps: DavServiceDeps;
  /** Each user's locks and dead properties: in the store, for every server on it. */
  private readonly kept = new Map<string, { locks: StoreLockKeeper; props: StoreDeadProps }>();
  /** The notes deleted over /dav/ a moment ago, for the callers that save by DELETE then PUT. */
  private readonly tombstones = new ServiceTombstones();

  constructor(deps: DavServiceDeps) {
    this.deps = deps;
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (cors(req, res)) return;
    const anonymous = `ip:${req.socket.remoteAddress ?? ""}`;
    const key = keyOf(req.headers);
    if (!key) {
      if (!(await this.admit(req, res, anonymous, true))) return;
      req.resume();
      return challenge(
        res,
        "txtfs: an API key is needed (as the password, any user name, or a bearer token)",
      );
    }
    const { store, usage, hub } = this.deps;
    let actor: Awaited<ReturnType<typeof authenticate>>;
    try {
      // Authentication reads the Authorization header (and the source) alone.
      const shim = {
        headers: { authorization: `Bearer ${key}`, "x-txtfs-source": "dav" },
      } as unknown as FastifyRequest;
      actor = await authenticate(shim, store, usage, hub);
    } catch (err) {
      // Failed authentications count against the caller's address, as on the API.
      if (!(await this.admit(req, res, anonymous, true))) return;
      req.resume();
      return challenge(res, `txtfs: ${(err as Error).message}`);
    }
    if (!(await this.admit(req, res, actor.principal, false))) return;
    const site: KeptSite = {
      backend: new ServiceBackend(store, actor, this.deps.attachments, this.tombstones),
      ...this.keptFor(actor.userId),
    };
    await handleDav(req, res, { prefix: DAV_PREFIX, site, log: this.deps.log });
  }

  /** Spends the request's points; false (answered 429 with Retry-After) when they do not fit. */
  private async admit(req: IncomingMessage, res: ServerResponse, rateKey: string, anonymous: boolean) {
    const { limiter } = this.deps;
    const reads = ["GET", "HEAD", "OPTIONS", "PROPFIND"].includes(req.method ?? "");
    const cost = costOf(reads ? "GET" : "PUT", 200);
    const check = await limiter.check(rateKey, anonymous, cost);
    if (!check.allowed) {
      req.resume();
      res.writeHead(429, {
        "Retry-After": String(check.resetSeconds),
        "Content-Type": "text/plain; charset=utf-8",
      });
      res.end(`txtfs: rate limit of ${check.limit} points per ${limiter.config.windowSeconds} s reached\n`);
      return false;
    }
    limiter.spend(rateKey, anonymous, cost);
    return true;
  }

  private keptFor(userId: string) {
    let kept = this.kept.get(userId);
    if (!kept) {
      kept = {
        locks: new StoreLockKeeper(this.deps.store, userId),
        props: new StoreDeadProps(this.deps.store, userId),
      };
      this.kept.set(userId, kept);
    }
    return kept;
  }
}

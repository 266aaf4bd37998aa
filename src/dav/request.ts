// One WebDAV request as the methods see it, and the answer they give back (written by handler.ts).
import type { IncomingHttpHeaders } from "node:http";
import type { DavBackend } from "./backend.ts";
import type { DeadPropKeeper } from "./deadProps.ts";
import type { LockKeeper, Locks } from "./locks.ts";

/** What one request reaches: the user's tree, their locks as the request began, their dead properties. */
export interface DavSite {
  backend: DavBackend;
  locks: Locks;
  props: DeadPropKeeper;
}

/** What one user reaches, with where their locks are kept (each request loads them, then saves its changes). */
export interface KeptSite {
  backend: DavBackend;
  locks: LockKeeper;
  props: DeadPropKeeper;
}

export interface DavRequest {
  method: string;
  /** The back-end path of the request URL. */
  path: string;
  /** The request URL's path (for error bodies and Content-Location). */
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** Where the tree is served: "/" or "/dav/"; hrefs begin with it. */
  prefix: string;
  site: DavSite;
}

export interface Answer {
  status: number;
  headers?: Record<string, string | number>;
  body?: Buffer | string;
}

export function header(req: DavRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(", ") : v;
}

export const xmlAnswer = (status: number, xml: string, headers: Answer["headers"] = {}): Answer => ({
  status,
  headers: { "Content-Type": 'application/xml; charset="utf-8"', ...headers },
  body: xml,
});

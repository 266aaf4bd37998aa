// CORS for the web views that sync a vault over WebDAV (Obsidian's desktop and mobile apps, a local
// page): their origins may call every method with Authorization, and read the headers clients need.
import type { IncomingMessage, ServerResponse } from "node:http";
import { METHODS } from "./methods/read.ts";

export const CORS_ORIGINS = ["app://obsidian.md", "capacitor://localhost", "http://localhost"];

function allowed(origin: string): boolean {
  return CORS_ORIGINS.includes(origin) || /^http:\/\/(localhost|127\.0\.0\.1)(:\d+)?$/.test(origin);
}

/** Sets the CORS headers for an allowed origin; true when the request was a preflight (answered). */
export function cors(req: IncomingMessage, res: ServerResponse): boolean {
  const origin = req.headers.origin;
  if (!origin || !allowed(origin)) return false;
  res.setHeader("Access-Control-Allow-Origin", origin);
  res.setHeader("Vary", "Origin");
  res.setHeader("Access-Control-Allow-Credentials", "true");
  res.setHeader(
    "Access-Control-Expose-Headers",
    "DAV, ETag, Lock-Token, Content-Length, Content-Range, Last-Modified",
  );
  const preflight = req.method === "OPTIONS" && req.headers["access-control-request-method"] !== undefined;
  if (!preflight) return false;
  res.setHeader("Access-Control-Allow-Methods", METHODS);
  res.setHeader(
    "Access-Control-Allow-Headers",
    "Authorization, Content-Type, Depth, Destination, If, If-Match, If-None-Match, Lock-Token, Overwrite, Timeout, Range, X-OC-Mtime",
  );
  res.setHeader("Access-Control-Max-Age", "600");
  res.statusCode = 204;
  res.end();
  return true;
}

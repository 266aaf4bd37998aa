// The properties the server computes (RFC 4918 section 15, RFC 4331 quotas), and which of them a
// PROPPATCH may not set.
import type { DavEntry } from "./backend.ts";
import type { Lock } from "./locks.ts";
import { hrefOf, nameOf } from "./paths.ts";
import { DAV_NS, esc } from "./xml.ts";

const D = (local: string) => `{${DAV_NS}}${local}`;

export const LIVE = [
  "creationdate",
  "displayname",
  "getcontentlength",
  "getcontenttype",
  "getetag",
  "getlastmodified",
  "resourcetype",
  "lockdiscovery",
  "supportedlock",
].map(D);
/** Answered when asked for by name, not in allprop (RFC 4331 section 3). */
export const QUOTA = ["quota-available-bytes", "quota-used-bytes"].map(D);
/** Live properties no PROPPATCH sets (displayname and getcontenttype stay dead-settable). */
export const PROTECTED = new Set(
  [...LIVE, ...QUOTA].filter((n) => n !== D("displayname") && n !== D("getcontenttype")),
);

const TYPES: Record<string, string> = {
  md: "text/markdown; charset=utf-8",
  txt: "text/plain; charset=utf-8",
  html: "text/html",
  json: "application/json",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  pdf: "application/pdf",
  svg: "image/svg+xml",
};

export function contentTypeOf(path: string): string {
  const ext = /\.([^./]+)$/.exec(path)?.[1]?.toLowerCase() ?? "";
  return TYPES[ext] ?? "application/octet-stream";
}

export function lockXml(lock: Lock, prefix: string): string {
  const timeout = `Second-${Math.max(0, Math.round((lock.expiresAt - Date.now()) / 1000))}`;
  return (
    `<D:activelock><D:locktype><D:write/></D:locktype><D:lockscope><D:${lock.scope}/></D:lockscope>` +
    `<D:depth>${lock.depth === "0" ? "0" : "infinity"}</D:depth>${lock.owner}<D:timeout>${timeout}</D:timeout>` +
    `<D:locktoken><D:href>${esc(lock.token)}</D:href></D:locktoken>` +
    `<D:lockroot><D:href>${esc(hrefOf(lock.path, prefix, false))}</D:href></D:lockroot></D:activelock>`
  );
}

const SUPPORTED_LOCK =
  "<D:lockentry><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockentry>" +
  "<D:lockentry><D:lockscope><D:shared/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockentry>";

/** A live property's value as XML text, or undefined when this resource has none. */
export function liveValue(
  name: string,
  path: string,
  entry: DavEntry,
  ctx: { locks: Lock[]; prefix: string; quota?: { available: number; used: number } },
): string | undefined {
  switch (name.slice(DAV_NS.length + 2)) {
    case "creationdate":
      return entry.ctime.toISOString().replace(/\.\d{3}Z$/, "Z");
    case "displayname":
      return path === "/" ? undefined : esc(nameOf(path));
    case "getcontentlength":
      return entry.collection ? undefined : String(entry.size);
    case "getcontenttype":
      return entry.collection ? undefined : esc(contentTypeOf(path));
    case "getetag":
      return entry.collection ? undefined : esc(entry.etag);
    case "getlastmodified":
      return entry.mtime.toUTCString();
    case "resourcetype":
      return entry.collection ? "<D:collection/>" : "";
    case "lockdiscovery":
      return ctx.locks.map((l) => lockXml(l, ctx.prefix)).join("");
    case "supportedlock":
      return SUPPORTED_LOCK;
    case "quota-available-bytes":
      return ctx.quota ? String(ctx.quota.available) : undefined;
    case "quota-used-bytes":
      return ctx.quota ? String(ctx.quota.used) : undefined;
    default:
      return undefined;
  }
}

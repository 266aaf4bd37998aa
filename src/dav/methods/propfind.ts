// PROPFIND (RFC 4918 section 9.1): depth 0, 1 or infinity (bounded), allprop, propname and prop.
import type { DavEntry } from "../backend.ts";
import { DavError } from "../errors.ts";
import { LIVE, liveValue, QUOTA } from "../liveProps.ts";
import { hrefOf, join } from "../paths.ts";
import { type Answer, type DavRequest, header, xmlAnswer } from "../request.ts";
import { clark, DAV_NS, davChild, elements, esc, parseXml, propElement, XML_HEAD } from "../xml.ts";

/** Depth infinity answers at most this many resources (more: 403 propfind-finite-depth). */
const INFINITY_BOUND = 20_000;

type Asked =
  | { kind: "allprop"; include: string[] }
  | { kind: "propname" }
  | { kind: "prop"; names: string[] };

function asked(req: DavRequest): Asked {
  const root = parseXml(req.body);
  if (!root) return { kind: "allprop", include: [] };
  if (root.namespaceURI !== DAV_NS || root.localName !== "propfind")
    throw new DavError(400, "the PROPFIND body is not a <D:propfind>");
  const prop = davChild(root, "prop");
  if (prop) return { kind: "prop", names: elements(prop).map(clark) };
  if (davChild(root, "propname")) return { kind: "propname" };
  if (davChild(root, "allprop")) {
    const include = davChild(root, "include");
    return { kind: "allprop", include: include ? elements(include).map(clark) : [] };
  }
  throw new DavError(400, "the <D:propfind> names no allprop, propname or prop");
}

export async function propfind(req: DavRequest): Promise<Answer> {
  const what = asked(req);
  const depthHeader = (header(req, "depth") ?? "infinity").toLowerCase();
  if (!["0", "1", "infinity"].includes(depthHeader)) throw new DavError(400, `Depth ${depthHeader}?`);
  const { backend } = req.site;
  const root = await backend.stat(req.path);
  if (!root) throw new DavError(404);
  const found: [string, DavEntry][] = [[req.path, root]];
  if (root.collection && depthHeader !== "0") {
    const queue = [req.path];
    while (queue.length) {
      const dir = queue.shift()!;
      const listed = backend.entries
        ? await backend.entries(dir)
        : await Promise.all(
            (await backend.list(dir)).map(async (n) => [n, await backend.stat(join(dir, n))] as const),
          );
      for (const [name, entry] of listed) {
        if (!entry) continue; // gone since it was listed
        const path = join(dir, name);
        found.push([path, entry]);
        if (found.length > INFINITY_BOUND)
          throw new DavError(403, "too many resources for depth infinity", "propfind-finite-depth");
        if (entry.collection && depthHeader === "infinity") queue.push(path);
      }
    }
  }
  const needsQuota = what.kind === "prop" && what.names.some((n) => QUOTA.includes(n));
  const quota = needsQuota ? await backend.quota() : undefined;
  // Every resource's dead properties in one read (a store's query, not one per resource).
  const dead = await req.site.props.of(found.map(([path]) => path));
  const parts: string[] = [];
  for (const [path, entry] of found)
    parts.push(await responseFor(req, what, path, entry, quota, dead.get(path) ?? {}));
  return xmlAnswer(207, `${XML_HEAD}<D:multistatus xmlns:D="DAV:">${parts.join("")}</D:multistatus>`);
}

async function responseFor(
  req: DavRequest,
  what: Asked,
  path: string,
  entry: DavEntry,
  quota: { available: number; used: number } | undefined,
  dead: Record<string, string>,
): Promise<string> {
  const { site, prefix } = req;
  const own = site.backend.ownPropertyNames(entry.collection);
  const ctx = { locks: site.locks.covering(path), prefix, quota };
  const href = `<D:href>${esc(hrefOf(path, prefix, entry.collection))}</D:href>`;
  if (what.kind === "propname") {
    const names = [...LIVE, ...QUOTA, ...own.all, ...Object.keys(dead)];
    const props = [...new Set(names)].map((n) => propElement(n)).join("");
    return `<D:response>${href}${propstat(props, 200)}</D:response>`;
  }
  const names = what.kind === "prop" ? what.names : [...LIVE, ...Object.keys(dead), ...what.include];
  const wantsOwn = names.some((n) => own.all.includes(n));
  const ownValues = wantsOwn ? await site.backend.ownProperties(path, entry.collection) : new Map();
  const ok: string[] = [];
  const missing: string[] = [];
  for (const name of new Set(names)) {
    if (dead[name] !== undefined) {
      ok.push(dead[name]);
      continue;
    }
    const value = ownValues.has(name) ? ownValues.get(name) : liveValue(name, path, entry, ctx);
    if (value === undefined) missing.push(propElement(name));
    else ok.push(propElement(name, value));
  }
  const stats =
    (ok.length ? propstat(ok.join(""), 200) : "") + (missing.length ? propstat(missing.join(""), 404) : "");
  return `<D:response>${href}${stats || propstat("", 200)}</D:response>`;
}

const REASONS: Record<number, string> = {
  200: "OK",
  403: "Forbidden",
  404: "Not Found",
  409: "Conflict",
  424: "Failed Dependency",
};

export function propstat(props: string, status: number): string {
  return `<D:propstat><D:prop>${props}</D:prop><D:status>HTTP/1.1 ${status} ${REASONS[status] ?? ""}</D:status></D:propstat>`;
}

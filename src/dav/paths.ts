// Request URLs <-> back-end paths ("/", "/a/b.md"). The protocol layer serves below a prefix
// ("/" for `txtfs dav`, "/dav/" on `txtfs serve`); hrefs it writes are that prefix plus each name
// percent-encoded.
import { DavError } from "./errors.ts";

/** The back-end path of a URL path below `prefix` (ending in "/"); 404 outside it, 400 for a bad name. */
export function pathOf(urlPath: string, prefix: string): string {
  const bare = urlPath.split("?")[0]!;
  const withSlash = bare.endsWith("/") ? bare : `${bare}/`;
  if (!withSlash.startsWith(prefix)) throw new DavError(404, `not below ${prefix}`);
  const names: string[] = [];
  for (const raw of bare.slice(prefix.length).split("/")) {
    if (!raw) continue;
    let name: string;
    try {
      name = decodeURIComponent(raw);
    } catch {
      throw new DavError(400, `a name in the URL is not valid percent-encoded UTF-8: ${raw}`);
    }
    if (name === ".") continue;
    if (name === "..") {
      names.pop();
      continue;
    }
    if (name.includes("/") || name.includes("\0")) throw new DavError(400, `a name holds "/" or NUL: ${raw}`);
    names.push(name);
  }
  return `/${names.join("/")}`;
}

/** The href of a back-end path (collections end in "/"). */
export function hrefOf(path: string, prefix: string, collection: boolean): string {
  const names = path.split("/").filter(Boolean).map(encodeName);
  const joined = prefix + names.join("/");
  return collection && names.length > 0 ? `${joined}/` : joined;
}

// What encodeURIComponent leaves alone, less what some clients mis-parse in an href.
function encodeName(name: string): string {
  return encodeURIComponent(name).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

export function parentOf(path: string): string {
  const i = path.lastIndexOf("/");
  return i <= 0 ? "/" : path.slice(0, i);
}

export function nameOf(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

export function join(dir: string, name: string): string {
  return dir === "/" ? `/${name}` : `${dir}/${name}`;
}

/** Whether `path` is `dir` or below it. */
export function isWithin(path: string, dir: string): boolean {
  return path === dir || dir === "/" || path.startsWith(`${dir}/`);
}

/**
 * The back-end path a Destination header names (an absolute URL or an absolute path), which must
 * be on this server below `prefix`: 400 when it cannot be read, 502 when it is another server's.
 */
export function destinationPath(
  header: string | undefined,
  host: string | undefined,
  prefix: string,
): string {
  if (!header) throw new DavError(400, "COPY and MOVE need a Destination header");
  let url: URL;
  try {
    url = new URL(header, `http://${host ?? "localhost"}`);
  } catch {
    throw new DavError(400, `the Destination header is not a URL: ${header}`);
  }
  if (host && url.host !== host && /^[a-z]+:\/\//i.test(header))
    throw new DavError(502, `the Destination ${header} is on another server`);
  return pathOf(url.pathname, prefix);
}

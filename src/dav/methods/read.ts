// OPTIONS, GET and HEAD: what the server speaks, and a resource's bytes with ETag,
// If-None-Match (304) and a single Range (206 / 416).
import { checkMatch } from "../conditions.ts";
import { DavError } from "../errors.ts";
import { contentTypeOf } from "../liveProps.ts";
import { hrefOf, join } from "../paths.ts";
import type { Answer, DavRequest } from "../request.ts";
import { header } from "../request.ts";
import { esc } from "../xml.ts";

export const METHODS =
  "OPTIONS, GET, HEAD, PUT, DELETE, MKCOL, COPY, MOVE, PROPFIND, PROPPATCH, LOCK, UNLOCK";

export function options(): Answer {
  // MS-Author-Via: Windows' client looks for it before it treats the server as WebDAV.
  return {
    status: 200,
    headers: { DAV: "1, 2", "MS-Author-Via": "DAV", Allow: METHODS, "Content-Length": 0 },
  };
}

export async function get(req: DavRequest, head: boolean): Promise<Answer> {
  const { backend } = req.site;
  const entry = await backend.stat(req.path);
  if (!entry) throw new DavError(404);
  if (entry.collection) {
    // A browser's view of a folder; WebDAV leaves GET of a collection to the server.
    const names = await backend.list(req.path);
    const items = names
      .map((n) => `<li><a href="${esc(hrefOf(join(req.path, n), req.prefix, false))}">${esc(n)}</a></li>`)
      .join("");
    const html = `<!doctype html><meta charset="utf-8"><title>${esc(req.path)}</title><ul>${items}</ul>`;
    return {
      status: 200,
      headers: { "Content-Type": "text/html; charset=utf-8" },
      body: head ? undefined : html,
    };
  }
  const common = {
    ETag: entry.etag,
    "Last-Modified": entry.mtime.toUTCString(),
    "Accept-Ranges": "bytes",
    "Content-Type": contentTypeOf(req.path),
  };
  if (checkMatch(req, entry, true)) return { status: 304, headers: { ETag: entry.etag } };
  const range = header(req, "range");
  if (range && (header(req, "if-range") === undefined || header(req, "if-range") === entry.etag)) {
    const r = parseRange(range, entry.size);
    if (r === "unsatisfiable")
      return { status: 416, headers: { ...common, "Content-Range": `bytes */${entry.size}` } };
    if (r) {
      const data = head ? undefined : (await backend.read(req.path)).subarray(r.start, r.end + 1);
      return {
        status: 206,
        headers: {
          ...common,
          "Content-Range": `bytes ${r.start}-${r.end}/${entry.size}`,
          "Content-Length": r.end - r.start + 1,
        },
        body: data,
      };
    }
  }
  if (head) return { status: 200, headers: { ...common, "Content-Length": entry.size } };
  return { status: 200, headers: common, body: await backend.read(req.path) };
}

/** One byte range (several: the whole body is answered, as RFC 9110 allows). */
function parseRange(h: string, size: number): { start: number; end: number } | "unsatisfiable" | undefined {
  const m = /^bytes=(\d*)-(\d*)$/.exec(h.trim());
  if (!m || (!m[1] && !m[2])) return undefined;
  let start: number;
  let end: number;
  if (!m[1]) {
    start = Math.max(0, size - Number(m[2]));
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] ? Math.min(Number(m[2]), size - 1) : size - 1;
  }
  if (start >= size || start > end) return "unsatisfiable";
  return { start, end };
}

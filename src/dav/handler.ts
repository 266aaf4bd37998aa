// The WebDAV protocol layer: one request in (already authenticated, its site chosen), the method's
// answer out. Errors become statuses here: a DavError as it says, a back end's errno by
// statusOfErrno, anything else 500 (logged).
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "../lib/logger.ts";
import { errnoOf } from "./backend.ts";
import { DavError, statusOfErrno } from "./errors.ts";
import { LockConflict, Locks } from "./locks.ts";
import { copyOrMove } from "./methods/copyMove.ts";
import { lock, unlock } from "./methods/lock.ts";
import { propfind } from "./methods/propfind.ts";
import { proppatch } from "./methods/proppatch.ts";
import { get, METHODS, options } from "./methods/read.ts";
import { del, mkcol, put } from "./methods/write.ts";
import { pathOf } from "./paths.ts";
import type { Answer, DavRequest, DavSite, KeptSite } from "./request.ts";
import { esc, XML_HEAD } from "./xml.ts";

/** The largest request body taken (a PUT's bytes); more is 413. */
export const MAX_BODY_BYTES = 64 * 1024 * 1024;

const HANDLERS: Record<string, (req: DavRequest) => Promise<Answer>> = {
  OPTIONS: async () => options(),
  GET: (r) => get(r, false),
  HEAD: (r) => get(r, true),
  PUT: put,
  DELETE: del,
  MKCOL: mkcol,
  COPY: (r) => copyOrMove(r, false),
  MOVE: (r) => copyOrMove(r, true),
  PROPFIND: propfind,
  PROPPATCH: proppatch,
  LOCK: lock,
  UNLOCK: unlock,
};

export function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        reject(new DavError(413, `a request body is at most ${MAX_BODY_BYTES} bytes`));
        req.resume();
        return;
      }
      chunks.push(c);
    });
    req.once("end", () => resolve(Buffer.concat(chunks)));
    req.once("error", reject);
  });
}

/**
 * Serves one request below `prefix` on `site`; `body`: the request's bytes when someone (Fastify)
 * already read them. Never rejects: every failure is an answer.
 */
export async function handleDav(
  raw: IncomingMessage,
  res: ServerResponse,
  ctx: { prefix: string; site: KeptSite; log: Logger; body?: Buffer },
): Promise<void> {
  const method = (raw.method ?? "GET").toUpperCase();
  let answer: Answer;
  try {
    const run = HANDLERS[method];
    if (!run) throw new DavError(405, `${method} is not a WebDAV method here`);
    const body = ctx.body ?? (await readBody(raw));
    const url = raw.url ?? "/";
    const keeper = ctx.site.locks;
    const locks = new Locks(await keeper.load(Date.now()));
    const site: DavSite = { ...ctx.site, locks };
    const req: DavRequest = {
      method,
      path: pathOf(url, ctx.prefix),
      url,
      headers: raw.headers,
      body,
      prefix: ctx.prefix,
      site,
    };
    answer = await run(req);
    const changes = locks.changes();
    if (changes) await keeper.save(changes, Date.now());
  } catch (err) {
    answer = failure(err, method, raw.url ?? "/", ctx.log);
  }
  ctx.log.debug({ method, url: raw.url, status: answer.status, dest: raw.headers.destination }, "WebDAV");
  write(res, answer);
}

function failure(err: unknown, method: string, url: string, log: Logger): Answer {
  if (err instanceof LockConflict) return { status: 423 };
  if (err instanceof DavError) {
    const body = err.condition
      ? `${XML_HEAD}<D:error xmlns:D="DAV:"><D:${err.condition}/><D:responsedescription>${esc(err.message)}</D:responsedescription></D:error>`
      : undefined;
    const headers: Answer["headers"] = body ? { "Content-Type": 'application/xml; charset="utf-8"' } : {};
    if (err.status === 405) headers.Allow = METHODS;
    return { status: err.status, headers, body };
  }
  const errno = errnoOf(err);
  if (errno) {
    const status = statusOfErrno(errno);
    if (status >= 500) log.warn({ method, url, errno, err: (err as Error).message }, "WebDAV request failed");
    return { status };
  }
  log.error({ err, method, url }, "WebDAV request failed");
  return { status: 500 };
}

function write(res: ServerResponse, answer: Answer): void {
  const body = answer.body === undefined ? undefined : Buffer.from(answer.body);
  for (const [k, v] of Object.entries(answer.headers ?? {})) res.setHeader(k, v);
  if (body && !res.hasHeader("Content-Length")) res.setHeader("Content-Length", body.length);
  if (!body && !res.hasHeader("Content-Length") && answer.status !== 304 && answer.status !== 204)
    res.setHeader("Content-Length", 0);
  res.statusCode = answer.status;
  res.end(body);
}

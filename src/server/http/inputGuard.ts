// Input the service refuses before any route runs, the same way on every store:
// - bodies that are not valid UTF-8 (never silently replaced with U+FFFD), and JSON nested deeper
//   than any request needs (checked on the text, before anything walks it recursively),
// - a lone UTF-16 surrogate in any string (not representable in UTF-8: it would be stored as U+FFFD,
//   or raw in JSON columns, and then break every JSON reader of the account), and a NUL character
//   in any string but a note's content — in the body, the query and the path, naming the field.
//   Content keeps its NULs exactly, on both stores (a file written with a hole reads back NUL bytes;
//   the PostgreSQL store escapes them, see store/postgres/nulText.ts); a NUL in a name, a tag, an
//   id or a comment is a mistake, and refused,
// - failures raised below the routes (a bad URL, an over-long path segment, a malformed request
//   line or header), which would otherwise answer Fastify's or Node's own body instead of ours.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance, FastifyReply, FastifyRequest, RawServerDefault } from "fastify";
import type { Logger } from "../../lib/logger.ts";
import { type ErrorDetail, ServiceError } from "../domain/errors.ts";
import { LIMITS } from "../domain/limits.ts";
import { errorBody } from "./errors.ts";
import { nestsDeeperThan } from "./jsonDepth.ts";

const fatalUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Decodes a body strictly: invalid UTF-8 is a 400, not a string of U+FFFD. */
export function decodeUtf8(body: Buffer, what: string): string {
  try {
    return fatalUtf8.decode(body);
  } catch {
    throw new ServiceError(
      400,
      "invalid_encoding",
      `The ${what} is not valid UTF-8.`,
      "Send text encoded as UTF-8 (txtfs stores text, not bytes).",
    );
  }
}

const unsupportedText = (given: string | undefined) =>
  new ServiceError(
    415,
    "unsupported_media_type",
    `Content-Type ${given} is not accepted here.`,
    "Send application/json (only the upload endpoint takes text/plain or text/markdown).",
  );

const tooDeep = () =>
  new ServiceError(
    400,
    "json_too_deep",
    `The JSON body nests arrays and objects more than ${LIMITS.jsonDepth} levels deep.`,
    `Flatten the body: no request of this API needs more than ${LIMITS.jsonDepth} levels.`,
  );

/** In a `u` regex a surrogate pair is one code point, so only an unpaired half matches. */
const LONE_SURROGATE = /\p{Cs}/u;

const nameOf = (path: string, key: string) =>
  /^\d+$/.test(key) ? `${path}[${key}]` : path ? `${path}.${key}` : key;

/** Fields whose text is a note's body: NUL characters are kept there. */
const isContent = (path: string) => path === "content" || path.endsWith(".content");

/** The first string (or object key) that cannot be stored as text: a NUL or a lone surrogate. */
export function findUnstorableString(value: unknown, path: string): ErrorDetail | undefined {
  if (typeof value === "string") {
    if (value.includes("\0") && !isContent(path))
      return { field: path, code: "nul_character", message: `${path} must not contain a NUL character` };
    if (LONE_SURROGATE.test(value))
      return {
        field: path,
        code: "lone_surrogate",
        message: `${path} must not contain a lone UTF-16 surrogate (it is not representable in UTF-8)`,
      };
    return undefined;
  }
  if (ArrayBuffer.isView(value)) return undefined; // bytes, not text
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findUnstorableString(value[i], `${path}[${i}]`);
      if (found) return found;
    }
    return undefined;
  }
  if (value && typeof value === "object") {
    for (const [key, inner] of Object.entries(value)) {
      const field = nameOf(path, key);
      const inKey = findUnstorableString(key, field);
      if (inKey) return { ...inKey, message: `a field name in ${path || "the body"} is not storable text` };
      const found = findUnstorableString(inner, field);
      if (found) return found;
    }
  }
  return undefined;
}

function refuseUnstorable(request: FastifyRequest): void {
  const parts: [string, unknown, string][] = [
    ["path parameter", request.params, ""],
    ["query parameter", request.query, ""],
    // A text body (upload) is a note's content, already strictly decoded, and a binary one (a
    // recording to transcribe) is bytes: nothing else to check. (A Buffer walked as an object was
    // 26 million fields: a 25 MiB upload took 18 s of garbage collection.)
    [
      "field",
      typeof request.body === "string" || Buffer.isBuffer(request.body) ? undefined : request.body,
      "",
    ],
  ];
  for (const [where, value, root] of parts) {
    const found = findUnstorableString(value, root);
    if (!found) continue;
    throw new ServiceError(
      400,
      "validation_failed",
      `Invalid ${where}: ${found.message}.`,
      "Remove the NUL character or the unpaired surrogate; text is stored as UTF-8.",
      [found],
    );
  }
}

/** Registers the strict body parsers and the check of every string the request carries. */
export function installInputGuard(
  app: FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, Logger, TypeBoxTypeProvider>,
): void {
  // JSON: decode strictly, then Fastify's own parser (which also refuses __proto__ poisoning).
  const json = app.getDefaultJsonParser("error", "error");
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "buffer" }, (req, body, done) => {
    let text: string;
    try {
      text = decodeUtf8(body as Buffer, "JSON body");
      if (nestsDeeperThan(text, LIMITS.jsonDepth)) throw tooDeep();
    } catch (err) {
      done(err as Error, undefined);
      return;
    }
    json(req, text, done);
  });
  // Text bodies (upload): the same strict decoding, and only where a route takes text (elsewhere a
  // text body is the wrong media type, 415, not a string that fails the schema).
  app.removeContentTypeParser("text/plain");
  app.addContentTypeParser(["text/plain", "text/markdown"], { parseAs: "buffer" }, (req, body, done) => {
    try {
      const consumes = (req.routeOptions.schema as { consumes?: string[] } | undefined)?.consumes ?? [];
      const type = (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
      if (!consumes.includes(type)) throw unsupportedText(req.headers["content-type"]);
      done(null, decodeUtf8(body as Buffer, "body"));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
  app.addHook("preValidation", async (request) => refuseUnstorable(request));
}

/** Fastify's `frameworkErrors`: a URL it cannot decode, a path segment longer than the router takes. */
export function frameworkErrors(
  error: Error & { code?: string },
  request: FastifyRequest,
  reply: FastifyReply,
) {
  const err =
    error.code === "FST_ERR_MAX_PARAM_LENGTH"
      ? new ServiceError(
          414,
          "uri_too_long",
          "A path segment of this URL is longer than any identifier of this API.",
          "Check the identifier in the path (ids are at most 64 characters).",
        )
      : new ServiceError(
          400,
          "invalid_url",
          "The URL is not valid: a percent-encoded part does not decode to UTF-8 text.",
          "Percent-encode path segments as UTF-8 (encodeURIComponent).",
        );
  reply.header("X-Request-ID", request.id);
  return reply.code(err.status).type("application/json; charset=utf-8").send(errorBody(err, request.id));
}

/**
 * Node's `clientError`: a request the HTTP parser refused (a control character in a header, a
 * malformed request line, oversized headers). No request object exists, so the answer is written to
 * the socket directly, still in the spec's error body with a fresh request id.
 */
export function clientErrorHandler(nextId: () => string, apiVersion: string) {
  return (err: Error & { code?: string }, socket: Socket) => {
    if (err.code === "ECONNRESET" || socket.destroyed) return;
    const [status, code, message, resolution] =
      err.code === "HPE_HEADER_OVERFLOW"
        ? [431, "headers_too_large", "The request headers are too large.", "Send smaller headers."]
        : err.code === "ERR_HTTP_REQUEST_TIMEOUT"
          ? [408, "request_timeout", "The request was not received in time.", "Retry the request."]
          : [
              400,
              "invalid_request",
              "The request is not valid HTTP (for example a control character in a header value).",
              "Send header values of visible ASCII characters, spaces and tabs only.",
            ];
    const id = nextId();
    const body = JSON.stringify(errorBody(new ServiceError(status, code, message, resolution), id));
    if (socket.writable) {
      socket.write(
        `HTTP/1.1 ${status} ${status === 400 ? "Bad Request" : status === 431 ? "Request Header Fields Too Large" : "Request Timeout"}\r\n` +
          `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
          `X-Request-ID: ${id}\r\nAPI-Version: ${apiVersion}\r\nConnection: close\r\n\r\n${body}`,
      );
    }
    socket.destroy(err);
  };
}

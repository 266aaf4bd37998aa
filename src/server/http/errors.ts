// One error body for every failure: {error: {code, message, resolution, requestId}} (+ details).
import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { ServiceError } from "../domain/errors.ts";

interface ValidationIssue {
  instancePath?: string;
  message?: string;
  keyword?: string;
  params?: Record<string, unknown>;
}

/** `/tags/3` -> `tags[3]`, `/file/name` -> `file.name`; required/unknown fields name themselves. */
function fieldOf(issue: ValidationIssue, part: string | undefined): string {
  const path = (issue.instancePath ?? "")
    .split("/")
    .filter(Boolean)
    .map((seg, i) => (/^\d+$/.test(seg) ? `[${seg}]` : i === 0 ? seg : `.${seg}`))
    .join("");
  const p = issue.params ?? {};
  const named =
    (p.requiredProperties as string[] | undefined)?.[0] ??
    (p.missingProperty as string | undefined) ??
    (p.additionalProperties as string[] | undefined)?.[0] ??
    (p.additionalProperty as string | undefined);
  const field = named ? (path ? `${path}.${named}` : named) : path;
  return field || (part === "body" ? "body" : (part ?? "request"));
}

function describe(issue: ValidationIssue, field: string): string {
  switch (issue.keyword) {
    case "required":
      return `${field} is required`;
    case "additionalProperties":
      return `${field} is not a known field`;
    default:
      return `${field} ${issue.message ?? "is invalid"}`;
  }
}

export function toServiceError(error: FastifyError | Error, request?: FastifyRequest): ServiceError {
  if (error instanceof ServiceError) return error;
  const fe = error as FastifyError & { validation?: ValidationIssue[]; validationContext?: string };
  if (fe.validation) {
    // TypeBox reports an unknown field twice (as `additionalProperties` and as a `false` schema).
    const details = fe.validation
      .filter((issue) => issue.keyword !== "boolean")
      .map((issue) => {
        const field = fieldOf(issue, fe.validationContext);
        return { field, code: issue.keyword ?? "invalid", message: describe(issue, field) };
      });
    const where = fe.validationContext === "querystring" ? "query parameter" : "field";
    return new ServiceError(
      400,
      "validation_failed",
      `Invalid ${where}: ${details.map((d) => d.message).join("; ")}.`,
      "Fix the named field (see the API reference for types and allowed values) and retry.",
      details,
    );
  }
  switch (fe.code) {
    case "FST_ERR_CTP_INVALID_JSON_BODY":
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return new ServiceError(
        400,
        "invalid_json",
        `The body is not valid JSON: ${fe.message}`,
        "Send a well-formed JSON body with Content-Type: application/json.",
      );
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return new ServiceError(
        413,
        "payload_too_large",
        "The request body is larger than this endpoint accepts.",
        "Send a smaller body: files are limited to 5 MiB, imports to 64 MiB per request.",
      );
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return new ServiceError(
        415,
        "unsupported_media_type",
        `Content-Type ${request?.headers["content-type"] ?? "(none)"} is not accepted here.`,
        "Send application/json, or text/plain / text/markdown to the upload endpoint.",
      );
    case "FST_ERR_CTP_INVALID_CONTENT_LENGTH":
      return new ServiceError(
        400,
        "invalid_request",
        "Content-Length does not match the body.",
        "Send a correct Content-Length.",
      );
  }
  if (error instanceof SyntaxError || fe.statusCode === 400) {
    return new ServiceError(400, "invalid_request", fe.message, "Fix the request and retry.");
  }
  return new ServiceError(
    500,
    "internal_error",
    "The server failed to handle this request.",
    "Retry later; if it keeps failing, report the requestId.",
  );
}

export function errorBody(err: ServiceError, requestId: string) {
  return {
    error: {
      code: err.code,
      message: err.message,
      resolution: err.resolution,
      requestId,
      ...(err.details ? { details: err.details } : {}),
    },
  };
}

export async function handleError(error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply) {
  const err = toServiceError(error, request);
  // A failing readiness probe is the answer working as designed, repeated every few seconds: warn.
  // A failed AI provider call was logged (as a warning, by host and status) where it failed.
  if (err.code === "not_ready") request.log.warn({ reason: err.message }, "not ready");
  // A full quota (507) is the caller's state, not a failure of the server.
  else if (err.status >= 500 && err.code !== "ai_provider_error" && err.code !== "insufficient_storage")
    request.log.error({ err: error }, "request failed");
  if (err.headers) reply.headers(err.headers);
  return reply.code(err.status).type("application/json; charset=utf-8").send(errorBody(err, request.id));
}

export const routeNotFound = (request: FastifyRequest) =>
  new ServiceError(
    404,
    "route_not_found",
    `No endpoint ${request.method} ${request.url.split("?")[0]}.`,
    "Check the path and method; GET /api/v1 lists every endpoint.",
  );

export async function handleNotFound(request: FastifyRequest, reply: FastifyReply) {
  return reply
    .code(404)
    .type("application/json; charset=utf-8")
    .send(errorBody(routeNotFound(request), request.id));
}

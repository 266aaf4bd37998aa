// Errors of the service as the spec's error body describes them: a status, a stable snake_case
// code, a message saying what went wrong and a resolution saying how to fix it.

export interface ErrorDetail {
  field?: string;
  code: string;
  message: string;
  [extra: string]: unknown;
}

export class ServiceError extends Error {
  readonly status: number;
  readonly code: string;
  readonly resolution: string;
  readonly details?: ErrorDetail[] | Record<string, unknown>;
  readonly headers?: Record<string, string>;

  constructor(
    status: number,
    code: string,
    message: string,
    resolution: string,
    details?: ErrorDetail[] | Record<string, unknown>,
    headers?: Record<string, string>,
  ) {
    super(message);
    this.name = "ServiceError";
    this.status = status;
    this.code = code;
    this.resolution = resolution;
    this.details = details;
    this.headers = headers;
  }
}

export const invalid = (field: string, message: string, resolution?: string) =>
  new ServiceError(
    400,
    "validation_failed",
    `${field}: ${message}`,
    resolution ?? `Fix \`${field}\` and retry.`,
    [{ field, code: "invalid", message }],
  );

export const notFound = (what: "file" | "folder" | "target file" | "key" | "user", id: string) =>
  new ServiceError(
    404,
    "not_found",
    `No ${what} with id ${id} is visible to you.`,
    `Check the id (list ${what === "folder" ? "folders with GET /api/me/folders" : "files with GET /api/v1/files"}); it may have been deleted or never shared with you.`,
  );

export const ownerOnly = (action: string) =>
  new ServiceError(
    403,
    "owner_only",
    `Only the owner may ${action}.`,
    "Ask the file's owner to make this change.",
  );

export const readOnly = (what: string) =>
  new ServiceError(
    403,
    "read_only_access",
    `You have read-only access to this ${what}.`,
    "Ask the owner for writer access, or comment and suggest instead.",
  );

export const preconditionFailed = (currentEtag: string) =>
  new ServiceError(
    412,
    "precondition_failed",
    "If-Match does not match the current entity tag: the resource changed since you read it.",
    "Fetch it again (GET /api/v1/files/:id), reapply your change to the new version and retry with its ETag in If-Match.",
    { currentEtag },
  );

export const tooLarge = (what: string, limit: string) =>
  new ServiceError(
    413,
    "payload_too_large",
    `${what} exceeds the limit of ${limit}.`,
    `Keep ${what} under ${limit}.`,
  );

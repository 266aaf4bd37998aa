// What the Streamable HTTP transport refuses before any JSON-RPC message is read, checked here so
// the refusal is the service's error body with its headers (the SDK's own answers are JSON-RPC
// error objects, which the MCP spec allows but does not require for HTTP-level failures). Errors
// inside a well-formed message (unknown method, bad params) stay JSON-RPC errors in a 200.

import type { IncomingHttpHeaders } from "node:http";
import {
  isInitializeRequest,
  JSONRPCMessageSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "@modelcontextprotocol/sdk/types.js";
import { ServiceError } from "../domain/errors.ts";

/** The SDK's limit on messages in one JSON-RPC batch. */
const MAX_BATCH = 100;

const badRequest = (message: string, resolution: string) =>
  new ServiceError(400, "invalid_mcp_request", message, resolution);

export function checkMcpRequest(headers: IncomingHttpHeaders, body: unknown): ServiceError | undefined {
  const accept = headers.accept ?? "";
  if (!accept.includes("application/json") || !accept.includes("text/event-stream")) {
    return new ServiceError(
      406,
      "not_acceptable",
      "An MCP client must accept both application/json and text/event-stream.",
      "Send Accept: application/json, text/event-stream (the MCP Streamable HTTP transport).",
    );
  }
  const type = (headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
  if (type !== "application/json") {
    return new ServiceError(
      415,
      "unsupported_media_type",
      `Content-Type ${headers["content-type"] ?? "(none)"} is not accepted here.`,
      "POST JSON-RPC messages with Content-Type: application/json.",
    );
  }
  const messages = Array.isArray(body) ? body : [body];
  if (messages.length === 0 || messages.length > MAX_BATCH) {
    return badRequest(
      `A JSON-RPC batch holds 1 to ${MAX_BATCH} messages; this one holds ${messages.length}.`,
      "Send fewer messages per request.",
    );
  }
  if (!messages.every((m) => JSONRPCMessageSchema.safeParse(m).success)) {
    return badRequest(
      "The body is not a JSON-RPC 2.0 message (nor a batch of them).",
      'Send {"jsonrpc": "2.0", "id": 1, "method": "...", "params": {...}}.',
    );
  }
  const initialize = messages.some((m) => isInitializeRequest(m));
  if (initialize && messages.length > 1) {
    return badRequest(
      "An initialize request must be sent alone.",
      "Send initialize in a request of its own.",
    );
  }
  const version = headers["mcp-protocol-version"];
  if (!initialize && typeof version === "string" && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
    return badRequest(
      `MCP-Protocol-Version ${version} is not supported (supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")}).`,
      "Send a protocol version this server supports, as negotiated at initialize.",
    );
  }
  return undefined;
}

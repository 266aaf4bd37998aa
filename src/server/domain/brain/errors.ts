// The brain's errors in the spec's body: 402 without a provider for this account, 409 without the
// user's own key (workspace analysis), 429 over quota or when the provider limits us, 502 when the
// provider fails. Messages name the provider's host and status, never its key.
import { ServiceError } from "../errors.ts";
import type { ProviderError } from "./provider.ts";

const KEY_PAGE = "the key page (/keys) or PUT /api/me/vault/ai-key";

export const aiKeyRequired = (why: string) =>
  new ServiceError(
    402,
    "ai_key_required",
    `This operation needs an AI provider: ${why}.`,
    `Save your own OpenAI-compatible API key (and optionally its server and model) on ${KEY_PAGE}, or ask the operator for the pro plan (txtfs admin user plan EMAIL pro); on your own machine, start it with a provider: txtfs mount --serve --ai-base-url URL --ai-model NAME (docs/brain.md).`,
  );

export const aiNotActivated = () =>
  new ServiceError(
    409,
    "ai_not_activated",
    "Workspace analysis runs only with your own AI key, and none is saved for this account.",
    `Save your OpenAI-compatible API key on ${KEY_PAGE}, then retry.`,
  );

export const aiExcluded = (what: string) =>
  new ServiceError(
    409,
    "ai_excluded",
    `${what} is in a folder kept away from the AI.`,
    'Clear the folder\'s setting (PUT /api/v1/folders/{id}/ai {"excluded": false}) to use the AI on it.',
  );

export const modelUnavailable = (what: string) =>
  new ServiceError(
    409,
    "ai_model_unavailable",
    `The AI provider serving you has no ${what} configured.`,
    "Ask the operator to configure one (txtfs serve --ai-transcription-model / --ai-embedding-model), or use your own key's server.",
  );

export function fromProviderError(err: ProviderError): ServiceError {
  if (err.kind === "rate_limited") {
    const retry = err.retryAfterSeconds ?? 30;
    return new ServiceError(
      429,
      "ai_provider_rate_limited",
      `The AI provider ${err.host} is rate limiting requests (HTTP 429).`,
      `Retry after ${retry} s (Retry-After).`,
      { providerHost: err.host, providerStatus: 429 },
      { "Retry-After": String(retry) },
    );
  }
  const status = err.status ? `HTTP ${err.status}` : err.kind === "timeout" ? "timed out" : err.kind;
  return new ServiceError(
    502,
    "ai_provider_error",
    `The AI provider ${err.host} failed (${status}): ${err.message}`,
    err.kind === "blocked"
      ? "Point your AI key's server at a public address (link-local, metadata and, on a public server, private addresses are refused)."
      : "Nothing was changed. Retry later; if it persists, check the provider's status or your key's server and model.",
    { providerHost: err.host, providerStatus: err.status, reason: err.kind },
  );
}

// Every state-changing request runs through `mutate`: one transaction for the change, its feed rows
// and its Idempotency-Key record together, so a retried request replays the saved response
// instead of applying the change twice (Stripe's model, the IETF draft's status codes).
import { createHash } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { Store, Tx } from "../../store/store.ts";
import type { Actor } from "../domain/actor.ts";
import { ServiceError } from "../domain/errors.ts";

export interface Outcome {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

const RETENTION_MS = 24 * 3600 * 1000;
const inFlight = new Set<string>();

export function idempotencyKey(request: FastifyRequest): string | undefined {
  const raw = request.headers["idempotency-key"];
  if (raw === undefined) return undefined;
  // The draft sends an sf-string ("..."); a bare token is accepted too.
  const key = String(raw)
    .trim()
    .replace(/^"(.*)"$/, "$1");
  if (!/^[\x21-\x7e]{1,255}$/.test(key)) {
    throw new ServiceError(
      400,
      "invalid_idempotency_key",
      "Idempotency-Key must be 1-255 visible ASCII characters.",
      "Send a fresh random value such as a UUID in Idempotency-Key.",
    );
  }
  return key;
}

function fingerprint(request: FastifyRequest): string {
  // A raw body (an attachment's bytes) is hashed as it is: as JSON a Buffer would be a list of numbers.
  const body = Buffer.isBuffer(request.body)
    ? request.body
    : typeof request.body === "string"
      ? request.body
      : JSON.stringify(request.body ?? null);
  return createHash("sha256")
    .update(`${request.method}\n${request.url}\n${request.headers["if-match"] ?? ""}\n`)
    .update(body)
    .digest("hex");
}

/**
 * What the key's first request was answered with, for the 422 of a different request under it: a
 * client whose first answer was lost (and whose bytes changed since) learns what that request made,
 * rather than make it twice. A note's text is left out: the record names its version.
 */
function originalOf(status: number, body: string): { status: number; body: unknown } {
  const withoutText = (v: unknown): unknown => {
    if (!v || typeof v !== "object" || Array.isArray(v)) return v;
    const { content: _, ...rest } = v as Record<string, unknown>;
    return Object.fromEntries(Object.entries(rest).map(([k, x]) => [k, k === "file" ? withoutText(x) : x]));
  };
  return { status, body: withoutText(JSON.parse(body)) };
}

export function actorOf(request: FastifyRequest): Actor {
  if (!request.actor) throw new Error("route has no authenticated actor");
  return request.actor;
}

export async function mutate(
  store: Store,
  request: FastifyRequest,
  reply: FastifyReply,
  work: (tx: Tx, actor: Actor) => Promise<Outcome>,
): Promise<FastifyReply> {
  const actor = actorOf(request);
  const key = idempotencyKey(request);
  const slot = key ? `${actor.principal}\n${key}` : undefined;
  if (slot && inFlight.has(slot)) {
    throw new ServiceError(
      409,
      "idempotency_key_in_use",
      "A request with this Idempotency-Key is still being processed.",
      "Wait for the first request to finish, then retry to get its response.",
      undefined,
      { "Retry-After": "1" },
    );
  }
  if (slot) inFlight.add(slot);
  try {
    const fp = key ? fingerprint(request) : "";
    const result = await store.transaction(
      async (tx) => {
        if (key) {
          const saved = await tx.idempotency.get(actor.principal, key, new Date().toISOString());
          if (saved) {
            if (saved.fingerprint !== fp) {
              throw new ServiceError(
                422,
                "idempotency_key_reused",
                "This Idempotency-Key was already used for a different request.",
                "Use a new Idempotency-Key for a new request; reuse a key only to retry the same request.",
                { original: originalOf(saved.status, saved.body) },
              );
            }
            return {
              outcome: {
                status: saved.status,
                body: JSON.parse(saved.body),
                headers: JSON.parse(saved.headers),
              } as Outcome,
              replayed: true,
            };
          }
        }
        const outcome = await work(tx, actor);
        if (key) {
          const now = Date.now();
          await tx.idempotency.save({
            principal: actor.principal,
            key,
            fingerprint: fp,
            status: outcome.status,
            headers: JSON.stringify(outcome.headers ?? {}),
            body: JSON.stringify(outcome.body),
            created_at: new Date(now).toISOString(),
            expires_at: new Date(now + RETENTION_MS).toISOString(),
          });
        }
        return { outcome, replayed: false };
        // The actor's writes queue up rather than collide on the account's feed counter.
      },
      { serializeOn: [`account:${actor.userId}`] },
    );
    const { outcome, replayed } = result;
    if (outcome.headers) reply.headers(outcome.headers);
    if (replayed) reply.header("Idempotent-Replayed", "true");
    return reply.code(outcome.status).send(outcome.body);
  } finally {
    if (slot) inFlight.delete(slot);
  }
}

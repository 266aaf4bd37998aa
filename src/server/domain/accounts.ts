// Users and API keys: creation (admin CLI, first start), listing, revocation, authentication.
import { hashApiKey, looksLikeApiKey, mintApiKey } from "../../lib/apiKeys.ts";
import { newId } from "../../lib/ids.ts";
import { nowIso, utcDay } from "../../lib/time.ts";
import type { UserRow } from "../../store/repos/rows.ts";
import type { Tx } from "../../store/store.ts";
import { invalid, notFound, ServiceError } from "./errors.ts";
import { toTxtApiKey } from "./records.ts";
import { isKeyScope, KEY_SCOPES } from "./scopes.ts";
import { activatePendingShares } from "./shares.ts";

const EMAIL = /^[^\s@]+@[^\s@]+$/;

export async function createUser(tx: Tx, email: string, name = ""): Promise<UserRow> {
  const normalized = email.trim().toLowerCase();
  if (!EMAIL.test(normalized)) throw invalid("email", `${JSON.stringify(email)} is not an email address`);
  if (await tx.users.byEmail(normalized)) {
    throw new ServiceError(
      409,
      "conflict",
      `A user with email ${normalized} already exists.`,
      "Use that user, or pick another email.",
    );
  }
  const row = { id: newId("u"), email: normalized, name: name.trim(), created_at: nowIso() };
  await tx.users.insert(row);
  const user = { ...row, feed_seq: 0, feed_floor: 0, plan: "free" };
  await activatePendingShares(tx, user);
  return user;
}

export async function userByEmail(tx: Tx, email: string): Promise<UserRow> {
  const user = await tx.users.byEmail(email.trim());
  if (!user) throw notFound("user", email);
  return user;
}

export interface KeyInput {
  label?: string;
  scopes?: readonly string[];
  /** Seconds from now; undefined = never expires. */
  expiresIn?: number;
}

/** Mints a key. The full key is returned here once and stored only as a hash. */
export async function createKey(tx: Tx, userId: string, input: KeyInput) {
  const scopes = [...new Set(input.scopes ?? KEY_SCOPES)];
  const unknown = scopes.filter((s) => !isKeyScope(s));
  if (unknown.length)
    throw invalid("scopes", `unknown scope(s) ${unknown.join(", ")}; valid: ${KEY_SCOPES.join(", ")}`);
  if (scopes.length === 0) throw invalid("scopes", "a key needs at least one scope");
  if (input.expiresIn !== undefined && !(input.expiresIn > 0))
    throw invalid("expires", "must be in the future");
  const { key, hash, prefix } = mintApiKey();
  const now = new Date();
  const row = {
    id: newId("key"),
    user_id: userId,
    label: input.label ?? "",
    token_prefix: prefix,
    token_hash: hash,
    scopes: JSON.stringify(scopes),
    created_at: now.toISOString(),
    expires_at: input.expiresIn ? new Date(now.getTime() + input.expiresIn * 1000).toISOString() : null,
  };
  await tx.keys.insert(row);
  const record = toTxtApiKey(
    { ...row, revoked_at: null, last_used_at: null, requests_today: 0, requests_day: null },
    utcDay(),
  );
  return { key: record, secret: key };
}

export async function listKeys(tx: Tx, userId: string) {
  const today = utcDay();
  return (await tx.keys.listForUser(userId)).map((k) => toTxtApiKey(k, today));
}

/** Revokes by key id or by token prefix. */
export async function revokeKey(tx: Tx, idOrPrefix: string) {
  const row = (await tx.keys.byId(idOrPrefix)) ?? undefined;
  if (!row) throw notFound("key", idOrPrefix);
  await tx.keys.revoke(row.id, nowIso());
  return toTxtApiKey({ ...row, revoked_at: row.revoked_at ?? nowIso() }, utcDay());
}

export type KeyCheck =
  | { ok: true; user: UserRow; keyId: string; scopes: string[] }
  | { ok: false; code: "invalid_api_key" | "api_key_revoked" | "api_key_expired" };

/** The stored key and its user (cacheable: no clock involved). */
export async function loadKey(tx: Tx, hash: string) {
  const key = await tx.keys.byHash(hash);
  const user = key ? await tx.users.byId(key.user_id) : undefined;
  return key && user ? { key, user } : null;
}

/** Checks a bearer key: format and checksum first (no database hit for garbage), then the hash. */
export async function authenticateKey(
  token: string,
  load: (hash: string) => Promise<Awaited<ReturnType<typeof loadKey>>>,
): Promise<KeyCheck> {
  if (!looksLikeApiKey(token)) return { ok: false, code: "invalid_api_key" };
  const found = await load(hashApiKey(token));
  if (!found) return { ok: false, code: "invalid_api_key" };
  const { key, user } = found;
  if (key.revoked_at) return { ok: false, code: "api_key_revoked" };
  if (key.expires_at && key.expires_at <= nowIso()) return { ok: false, code: "api_key_expired" };
  return { ok: true, user, keyId: key.id, scopes: JSON.parse(key.scopes) as string[] };
}

// Key management for a signed-in user (the key page and /api/me/keys): mint, list, relabel, rotate
// and revoke the user's own keys. The full key is returned only when it is minted.
import { nowIso, utcDay } from "../../lib/time.ts";
import type { Tx } from "../../store/store.ts";
import { createKey, type KeyInput } from "./accounts.ts";
import { invalid, ServiceError } from "./errors.ts";
import { toTxtApiKey } from "./records.ts";

export const LABEL_MAX = 100;
/** Keys minted on the key page expire within a year at most (null = never is allowed too). */
export const KEY_EXPIRY_MAX_SECONDS = 366 * 86400;
export const ROTATE_GRACE_DEFAULT_SECONDS = 86400;
export const ROTATE_GRACE_MAX_SECONDS = 7 * 86400;

async function ownKey(tx: Tx, userId: string, keyId: string) {
  const row = await tx.keys.byId(keyId);
  if (!row || row.user_id !== userId) {
    throw new ServiceError(
      404,
      "not_found",
      `No key with id ${keyId} is yours.`,
      "List your keys and use one of their ids.",
    );
  }
  return row;
}

function checkLabel(label: string | undefined): string {
  const l = (label ?? "").trim();
  if ([...l].length > LABEL_MAX) throw invalid("label", `at most ${LABEL_MAX} characters`);
  if (/\p{Cc}/u.test(l)) throw invalid("label", "no control characters");
  return l;
}

export async function mintUserKey(tx: Tx, userId: string, input: KeyInput) {
  if (input.expiresIn !== undefined && input.expiresIn > KEY_EXPIRY_MAX_SECONDS) {
    throw invalid("expiresIn", "at most one year; mint a new key when it runs out");
  }
  return createKey(tx, userId, { ...input, label: checkLabel(input.label) });
}

export async function listUserKeys(tx: Tx, userId: string) {
  const today = utcDay();
  return (await tx.keys.listForUser(userId)).map((k) => toTxtApiKey(k, today));
}

export async function relabelUserKey(tx: Tx, userId: string, keyId: string, label: string) {
  const row = await ownKey(tx, userId, keyId);
  const l = checkLabel(label);
  await tx.keys.setLabel(row.id, l);
  return toTxtApiKey({ ...row, label: l }, utcDay());
}

export async function revokeUserKey(tx: Tx, userId: string, keyId: string) {
  const row = await ownKey(tx, userId, keyId);
  const at = row.revoked_at ?? nowIso();
  await tx.keys.revoke(row.id, at);
  return toTxtApiKey({ ...row, revoked_at: at }, utcDay());
}

/**
 * Rotation (Stripe's "roll key"): a new key with the same label, scopes and lifetime; the old one
 * keeps working for `graceSeconds` (0 = stops at once) so deployments can switch over.
 */
export async function rotateUserKey(
  tx: Tx,
  userId: string,
  keyId: string,
  graceSeconds = ROTATE_GRACE_DEFAULT_SECONDS,
) {
  const row = await ownKey(tx, userId, keyId);
  if (!Number.isInteger(graceSeconds) || graceSeconds < 0 || graceSeconds > ROTATE_GRACE_MAX_SECONDS) {
    throw invalid("graceSeconds", `an integer from 0 to ${ROTATE_GRACE_MAX_SECONDS}`);
  }
  const now = Date.now();
  if (row.revoked_at || (row.expires_at && Date.parse(row.expires_at) <= now)) {
    throw new ServiceError(
      409,
      "conflict",
      "This key is revoked or expired; there is nothing to rotate.",
      "Mint a new key instead.",
    );
  }
  const lifetime = row.expires_at
    ? Math.max(1, Math.round((Date.parse(row.expires_at) - Date.parse(row.created_at)) / 1000))
    : undefined;
  const minted = await createKey(tx, userId, {
    label: row.label,
    scopes: JSON.parse(row.scopes) as string[],
    expiresIn: lifetime,
  });
  if (graceSeconds === 0) await tx.keys.revoke(row.id, new Date(now).toISOString());
  else await tx.keys.expireBy(row.id, new Date(now + graceSeconds * 1000).toISOString());
  const old = (await tx.keys.byId(row.id))!;
  return { ...minted, rotated: toTxtApiKey(old, utcDay()) };
}

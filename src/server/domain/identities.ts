// Identities: accounts signed in with the identity provider, keyed by (issuer, subject) — never by
// email. A first sign-in creates the account; a sign-in while a key-page session is open links the
// new identity to that account. One identity per account is active (`use`).
import { createHash } from "node:crypto";
import { newId } from "../../lib/ids.ts";
import { nowIso } from "../../lib/time.ts";
import type { IdentityRow } from "../../store/repos/identities.ts";
import type { UserRow } from "../../store/repos/rows.ts";
import type { Tx } from "../../store/store.ts";
import { ServiceError } from "./errors.ts";

/** What a verified token (or a sign-in) says about the person. */
export interface IdentityClaims {
  provider: string;
  issuer: string;
  subject: string;
  email: string | null;
  username: string | null;
  name: string | null;
  wallet?: Record<string, unknown> | null;
}

/** Tokens the server holds for an identity (sealed before they are stored). */
export interface HeldTokens {
  accessToken: string;
  refreshToken: string | null;
  expiresAt: string;
}

export interface Sealer {
  seal(plaintext: string): string;
  open(sealed: string): string;
}

/** The spec's `identity` object. */
export function toIdentity(row: IdentityRow) {
  const wallet = row.wallet ? (JSON.parse(row.wallet) as Record<string, unknown>) : null;
  return {
    id: row.id,
    provider: row.provider,
    issuer: row.issuer,
    subject: row.subject,
    username: row.username,
    status: row.status,
    verifiedAt: row.verified_at,
    verificationError: row.verification_error,
    wallet: wallet
      ? {
          address: String(wallet.address ?? ""),
          chainType: (wallet.chainType as string | undefined) ?? null,
          network: (wallet.network as string | undefined) ?? null,
          walletType: (wallet.walletType as string | undefined) ?? null,
        }
      : null,
    active: row.active === 1,
  };
}

/** An email for a new account: the token's, unless another account has it (we never merge by email). */
async function emailForNewUser(tx: Tx, c: IdentityClaims): Promise<string> {
  const claimed = c.email?.trim().toLowerCase();
  if (claimed && /^[^\s@]+@[^\s@]+$/.test(claimed) && !(await tx.users.byEmail(claimed))) return claimed;
  const tag = createHash("sha256").update(`${c.issuer} ${c.subject}`).digest("hex").slice(0, 12);
  return `${c.subject.replace(/[^\w.-]/g, "_").slice(0, 40)}.${tag}@identity.txtfs.invalid`;
}

/**
 * Finds the account of (issuer, subject); creates account and identity on first sign-in, or links a
 * new identity to `linkTo` (the account of an open key-page session).
 */
export async function signInIdentity(
  tx: Tx,
  c: IdentityClaims,
  linkTo?: string,
): Promise<{ user: UserRow; identity: IdentityRow; created: boolean }> {
  const now = nowIso();
  const wallet = c.wallet ? JSON.stringify(c.wallet) : null;
  const existing = await tx.identities.bySubject(c.issuer, c.subject);
  if (existing) {
    await tx.identities.updateProfile(existing.id, { username: c.username, email: c.email, wallet, at: now });
    const user = (await tx.users.byId(existing.user_id))!;
    return { user, identity: (await tx.identities.byId(existing.id))!, created: false };
  }
  let user = linkTo ? await tx.users.byId(linkTo) : undefined;
  const created = !user;
  if (!user) {
    const row = {
      id: newId("u"),
      email: await emailForNewUser(tx, c),
      name: c.name ?? c.username ?? "",
      created_at: now,
    };
    await tx.users.insert(row);
    user = { ...row, feed_seq: 0, feed_floor: 0, plan: "free" };
  }
  const hasActive = Boolean(await tx.identities.active(user.id));
  const identity: IdentityRow = {
    id: newId("idn"),
    user_id: user.id,
    provider: c.provider,
    issuer: c.issuer,
    subject: c.subject,
    username: c.username,
    email: c.email,
    status: "verified",
    verified_at: now,
    verification_error: null,
    wallet,
    active: hasActive ? 0 : 1,
    token_expires_at: null,
    created_at: now,
    updated_at: now,
    held_tokens: null,
  };
  await tx.identities.insert(identity);
  return { user, identity, created };
}

/** Remembers the tokens for the identity (sealed), so the server can act for it later (realtime). */
export async function holdTokens(tx: Tx, identityId: string, tokens: HeldTokens, sealer: Sealer) {
  await tx.identities.setHeldTokens(
    identityId,
    sealer.seal(JSON.stringify(tokens)),
    tokens.expiresAt,
    nowIso(),
  );
}

export function heldTokensOf(row: IdentityRow, sealer: Sealer): HeldTokens | null {
  if (!row.held_tokens) return null;
  try {
    return JSON.parse(sealer.open(row.held_tokens)) as HeldTokens;
  } catch {
    return null; // sealed with another vault key: as good as none
  }
}

export async function listIdentities(tx: Tx, userId: string) {
  return (await tx.identities.listForUser(userId)).map(toIdentity);
}

/** `use`: makes one of the account's identities the active one. */
export async function useIdentity(tx: Tx, userId: string, identityId: string) {
  const row = await tx.identities.byId(identityId);
  if (!row || row.user_id !== userId) {
    throw new ServiceError(
      404,
      "not_found",
      `No identity with id ${identityId} is linked to your account.`,
      "List your identities with GET /api/v1/identities and pick one of their ids.",
    );
  }
  await tx.identities.setActive(userId, identityId);
  return listIdentities(tx, userId);
}

export async function activeIdentity(tx: Tx, userId: string) {
  const row = await tx.identities.active(userId);
  return row ? toIdentity(row) : null;
}

import type { Sql } from "../store.ts";

export interface IdentityRow {
  id: string;
  user_id: string;
  provider: string;
  issuer: string;
  subject: string;
  username: string | null;
  email: string | null;
  status: string | null;
  verified_at: string | null;
  verification_error: string | null;
  /** JSON of the wallet object, or null. */
  wallet: string | null;
  /** 0/1: the identity the account acts as (at most one per account). */
  active: number;
  token_expires_at: string | null;
  created_at: string;
  updated_at: string;
  /** Encrypted JSON of the tokens the server holds for this identity (vault cipher), or null. */
  held_tokens: string | null;
}

export class IdentityRepo {
  private readonly sql: Sql;

  constructor(sql: Sql) {
    this.sql = sql;
  }

  insert(row: IdentityRow) {
    return this.sql.run(
      `INSERT INTO identities (id, user_id, provider, issuer, subject, username, email, status, verified_at,
         verification_error, wallet, active, token_expires_at, created_at, updated_at, held_tokens)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        row.id,
        row.user_id,
        row.provider,
        row.issuer,
        row.subject,
        row.username,
        row.email,
        row.status,
        row.verified_at,
        row.verification_error,
        row.wallet,
        row.active,
        row.token_expires_at,
        row.created_at,
        row.updated_at,
        row.held_tokens,
      ],
    );
  }

  bySubject(issuer: string, subject: string): Promise<IdentityRow | undefined> {
    return this.sql.get("SELECT * FROM identities WHERE issuer = ? AND subject = ?", [issuer, subject]);
  }

  byId(id: string): Promise<IdentityRow | undefined> {
    return this.sql.get("SELECT * FROM identities WHERE id = ?", [id]);
  }

  listForUser(userId: string): Promise<IdentityRow[]> {
    return this.sql.all("SELECT * FROM identities WHERE user_id = ? ORDER BY created_at, id", [userId]);
  }

  active(userId: string): Promise<IdentityRow | undefined> {
    return this.sql.get("SELECT * FROM identities WHERE user_id = ? AND active = 1", [userId]);
  }

  /** Makes `id` the account's only active identity. */
  async setActive(userId: string, id: string) {
    await this.sql.run("UPDATE identities SET active = 0 WHERE user_id = ? AND id <> ?", [userId, id]);
    return this.sql.run("UPDATE identities SET active = 1 WHERE user_id = ? AND id = ?", [userId, id]);
  }

  /** Profile claims seen at a sign-in. */
  updateProfile(
    id: string,
    p: { username: string | null; email: string | null; wallet: string | null; at: string },
  ) {
    return this.sql.run(
      `UPDATE identities SET username = ?, email = ?, wallet = COALESCE(?, wallet), status = 'verified',
         verified_at = ?, verification_error = NULL, updated_at = ? WHERE id = ?`,
      [p.username, p.email, p.wallet, p.at, p.at, id],
    );
  }

  setHeldTokens(id: string, heldTokens: string | null, expiresAt: string | null, at: string) {
    return this.sql.run(
      "UPDATE identities SET held_tokens = ?, token_expires_at = ?, updated_at = ? WHERE id = ?",
      [heldTokens, expiresAt, at, id],
    );
  }

  setVerificationError(id: string, error: string, at: string) {
    return this.sql.run(
      "UPDATE identities SET status = 'reauth_required', verification_error = ?, updated_at = ? WHERE id = ?",
      [error, at, id],
    );
  }
}

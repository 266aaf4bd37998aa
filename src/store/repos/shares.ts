import type { Sql } from "../store.ts";
import type { ShareRow } from "./rows.ts";

export class ShareRepo {
  private readonly sql: Sql;

  constructor(sql: Sql) {
    this.sql = sql;
  }

  insert(row: ShareRow) {
    return this.sql.run(
      `INSERT INTO shares (id, resource_type, resource_id, owner_id, grantee_id, grantee_email, role, status,
         created_by, created_at, updated_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        row.id,
        row.resource_type,
        row.resource_id,
        row.owner_id,
        row.grantee_id,
        row.grantee_email,
        row.role,
        row.status,
        row.created_by,
        row.created_at,
        row.updated_at,
        row.expires_at,
      ],
    );
  }

  /** Active, unexpired shares granted to a user. */
  activeForGrantee(userId: string, now: string): Promise<ShareRow[]> {
    return this.sql.all(
      `SELECT * FROM shares WHERE grantee_id = ? AND status = 'active' AND (expires_at IS NULL OR expires_at > ?)`,
      [userId, now],
    );
  }

  /** Active shares on any of these resources (a file, or the folders above it). */
  activeOn(resourceIds: readonly string[], now: string): Promise<ShareRow[]> {
    if (resourceIds.length === 0) return Promise.resolve([]);
    return this.sql.all(
      `SELECT * FROM shares WHERE resource_id IN (${resourceIds.map(() => "?").join(",")})
         AND status = 'active' AND (expires_at IS NULL OR expires_at > ?)`,
      [...resourceIds, now],
    );
  }

  deleteOn(resourceId: string) {
    return this.sql.run("DELETE FROM shares WHERE resource_id = ?", [resourceId]);
  }
  byId(id: string): Promise<ShareRow | undefined> {
    return this.sql.get("SELECT * FROM shares WHERE id = ?", [id]);
  }

  /** The live (active or pending) share of a resource with an email, if any. */
  liveFor(resourceId: string, email: string): Promise<ShareRow | undefined> {
    return this.sql.get(
      "SELECT * FROM shares WHERE resource_id = ? AND grantee_email = ? AND status IN ('active', 'pending')",
      [resourceId, email],
    );
  }

  /** Live shares on these resources (pending included), newest first. */
  liveOn(resourceIds: readonly string[]): Promise<ShareRow[]> {
    if (resourceIds.length === 0) return Promise.resolve([]);
    return this.sql.all(
      `SELECT * FROM shares WHERE resource_id IN (${resourceIds.map(() => "?").join(",")})
         AND status IN ('active', 'pending') ORDER BY created_at, id`,
      resourceIds,
    );
  }

  /** Live shares a user granted (as the resource's owner) or received. */
  liveInvolving(userId: string): Promise<ShareRow[]> {
    return this.sql.all(
      `SELECT * FROM shares WHERE (owner_id = ? OR grantee_id = ?) AND status IN ('active', 'pending')
       ORDER BY created_at, id`,
      [userId, userId],
    );
  }

  /** Pending shares waiting for an account with this email. */
  pendingForEmail(email: string): Promise<ShareRow[]> {
    return this.sql.all("SELECT * FROM shares WHERE grantee_email = ? AND status = 'pending'", [email]);
  }

  update(row: ShareRow) {
    return this.sql.run(
      "UPDATE shares SET grantee_id = ?, role = ?, status = ?, updated_at = ?, expires_at = ? WHERE id = ?",
      [row.grantee_id, row.role, row.status, row.updated_at, row.expires_at, row.id],
    );
  }
}

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
}

import type { Sql } from "../store.ts";
import type { ConnectionRow } from "./rows.ts";

/** Explicit connections are stored once, from the file they were made on, and read both ways. */
export class ConnectionRepo {
  private readonly sql: Sql;

  constructor(sql: Sql) {
    this.sql = sql;
  }

  /** The existing row between the two files, in either direction. */
  between(a: string, b: string): Promise<ConnectionRow | undefined> {
    return this.sql.get(
      `SELECT * FROM connections WHERE (file_id = ? AND target_file_id = ?) OR (file_id = ? AND target_file_id = ?)`,
      [a, b, b, a],
    );
  }

  insert(row: ConnectionRow) {
    return this.sql.run(
      `INSERT INTO connections (file_id, target_file_id, reason, created_by, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?)`,
      [row.file_id, row.target_file_id, row.reason, row.created_by, row.created_at, row.updated_at],
    );
  }

  updateReason(row: ConnectionRow) {
    return this.sql.run(
      "UPDATE connections SET reason = ?, updated_at = ? WHERE file_id = ? AND target_file_id = ?",
      [row.reason, row.updated_at, row.file_id, row.target_file_id],
    );
  }

  forFile(fileId: string): Promise<ConnectionRow[]> {
    return this.sql.all("SELECT * FROM connections WHERE file_id = ? OR target_file_id = ?", [
      fileId,
      fileId,
    ]);
  }

  deleteBetween(a: string, b: string) {
    return this.sql.run(
      "DELETE FROM connections WHERE (file_id = ? AND target_file_id = ?) OR (file_id = ? AND target_file_id = ?)",
      [a, b, b, a],
    );
  }

  deleteForFile(fileId: string) {
    return this.sql.run("DELETE FROM connections WHERE file_id = ? OR target_file_id = ?", [fileId, fileId]);
  }

  /** Every connection touching a note of this owner (one query, for workspace figures). */
  touchingOwner(ownerId: string): Promise<Pick<ConnectionRow, "file_id" | "target_file_id">[]> {
    return this.sql.all(
      `SELECT c.file_id, c.target_file_id FROM connections c
       WHERE c.file_id IN (SELECT id FROM files WHERE owner_id = ?)
          OR c.target_file_id IN (SELECT id FROM files WHERE owner_id = ?)`,
      [ownerId, ownerId],
    );
  }
}

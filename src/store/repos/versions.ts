import type { Sql } from "../store.ts";
import type { VersionRow } from "./rows.ts";

export class VersionRepo {
  private readonly sql: Sql;

  constructor(sql: Sql) {
    this.sql = sql;
  }

  insert(row: VersionRow) {
    return this.sql.run(
      `INSERT INTO file_versions (id, file_id, version_number, content_hash, byte_size, author_user_id, source,
         label, commit_id, created_at, content) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        row.id,
        row.file_id,
        row.version_number,
        row.content_hash,
        row.byte_size,
        row.author_user_id,
        row.source,
        row.label,
        row.commit_id,
        row.created_at,
        row.content,
      ],
    );
  }

  listForFile(fileId: string): Promise<Omit<VersionRow, "content">[]> {
    return this.sql.all(
      `SELECT id, file_id, version_number, content_hash, byte_size, author_user_id, source, label, commit_id,
         created_at FROM file_versions WHERE file_id = ? ORDER BY version_number DESC`,
      [fileId],
    );
  }

  /** Drops unlabelled versions numbered at or below `upTo` (labelled ones are kept for good). */
  pruneUnlabelled(fileId: string, upTo: number) {
    return this.sql.run(
      "DELETE FROM file_versions WHERE file_id = ? AND version_number <= ? AND label IS NULL AND commit_id IS NULL",
      [fileId, upTo],
    );
  }

  deleteForFile(fileId: string) {
    return this.sql.run("DELETE FROM file_versions WHERE file_id = ?", [fileId]);
  }
  /** One version with its body, by number. */
  byNumber(fileId: string, versionNumber: number): Promise<VersionRow | undefined> {
    return this.sql.get("SELECT * FROM file_versions WHERE file_id = ? AND version_number = ?", [
      fileId,
      versionNumber,
    ]);
  }

  /** Versions of a file without bodies, newest first, with the author's name; keyset paged. */
  page(fileId: string, beforeNumber: number | undefined, limit: number) {
    return this.sql.all<
      Omit<VersionRow, "content"> & { author_name: string | null; author_email: string | null }
    >(
      `SELECT v.id, v.file_id, v.version_number, v.content_hash, v.byte_size, v.author_user_id, v.source, v.label,
         v.commit_id, v.created_at, u.name AS author_name, u.email AS author_email
       FROM file_versions v LEFT JOIN users u ON u.id = v.author_user_id
       WHERE v.file_id = ? ${beforeNumber !== undefined ? "AND v.version_number < ?" : ""}
       ORDER BY v.version_number DESC LIMIT ?`,
      beforeNumber !== undefined ? [fileId, beforeNumber, limit] : [fileId, limit],
    );
  }

  setLabel(id: string, label: string | null, commitId: string | null) {
    return this.sql.run("UPDATE file_versions SET label = ?, commit_id = ? WHERE id = ?", [
      label,
      commitId,
      id,
    ]);
  }
}

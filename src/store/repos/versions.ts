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
}

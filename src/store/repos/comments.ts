import type { Sql } from "../store.ts";
import type { CommentRow, SuggestionRow } from "./rows.ts";

const COMMENT_COLUMNS =
  "id, file_id, user_id, selection_start, selection_end, selected_text, anchor_state, version_number, " +
  "resolved, resolved_by, resolved_at, created_at, updated_at, body";
const SUGGESTION_COLUMNS =
  "id, file_id, user_id, selection_start, selection_end, anchor_state, version_number, status, reviewed_by, " +
  "reviewed_at, created_at, updated_at, original_text, suggested_text";

const marks = (n: number) => Array.from({ length: n }, () => "?").join(", ");

/** Comments on files, with optional anchors into the text. */
export class CommentRepo {
  private readonly sql: Sql;

  constructor(sql: Sql) {
    this.sql = sql;
  }

  insert(row: CommentRow) {
    const cols = COMMENT_COLUMNS.split(", ") as (keyof CommentRow)[];
    return this.sql.run(
      `INSERT INTO comments (${COMMENT_COLUMNS}) VALUES (${marks(cols.length)})`,
      cols.map((c) => row[c]),
    );
  }

  update(row: CommentRow) {
    return this.sql.run(
      `UPDATE comments SET selection_start = ?, selection_end = ?, anchor_state = ?, resolved = ?, resolved_by = ?,
         resolved_at = ?, updated_at = ?, body = ? WHERE id = ?`,
      [
        row.selection_start,
        row.selection_end,
        row.anchor_state,
        row.resolved,
        row.resolved_by,
        row.resolved_at,
        row.updated_at,
        row.body,
        row.id,
      ],
    );
  }

  byId(id: string): Promise<CommentRow | undefined> {
    return this.sql.get(`SELECT ${COMMENT_COLUMNS} FROM comments WHERE id = ?`, [id]);
  }

  listForFile(fileId: string): Promise<CommentRow[]> {
    return this.sql.all(`SELECT ${COMMENT_COLUMNS} FROM comments WHERE file_id = ? ORDER BY created_at, id`, [
      fileId,
    ]);
  }

  /** Anchored comments whose range still points into the text: what a content write must move. */
  anchoredForFile(fileId: string): Promise<CommentRow[]> {
    return this.sql.all(
      `SELECT ${COMMENT_COLUMNS} FROM comments
       WHERE file_id = ? AND selection_start IS NOT NULL AND anchor_state = 'current'`,
      [fileId],
    );
  }

  delete(id: string) {
    return this.sql.run("DELETE FROM comments WHERE id = ?", [id]);
  }

  deleteForFile(fileId: string) {
    return this.sql.run("DELETE FROM comments WHERE file_id = ?", [fileId]);
  }
}

/** Suggested replacements of a range of a file's text. */
export class SuggestionRepo {
  private readonly sql: Sql;

  constructor(sql: Sql) {
    this.sql = sql;
  }

  insert(row: SuggestionRow) {
    const cols = SUGGESTION_COLUMNS.split(", ") as (keyof SuggestionRow)[];
    return this.sql.run(
      `INSERT INTO suggestions (${SUGGESTION_COLUMNS}) VALUES (${marks(cols.length)})`,
      cols.map((c) => row[c]),
    );
  }

  update(row: SuggestionRow) {
    return this.sql.run(
      `UPDATE suggestions SET selection_start = ?, selection_end = ?, anchor_state = ?, status = ?, reviewed_by = ?,
         reviewed_at = ?, updated_at = ? WHERE id = ?`,
      [
        row.selection_start,
        row.selection_end,
        row.anchor_state,
        row.status,
        row.reviewed_by,
        row.reviewed_at,
        row.updated_at,
        row.id,
      ],
    );
  }

  byId(id: string): Promise<SuggestionRow | undefined> {
    return this.sql.get(`SELECT ${SUGGESTION_COLUMNS} FROM suggestions WHERE id = ?`, [id]);
  }

  listForFile(fileId: string, status?: string): Promise<SuggestionRow[]> {
    return this.sql.all(
      `SELECT ${SUGGESTION_COLUMNS} FROM suggestions WHERE file_id = ? ${status ? "AND status = ?" : ""}
       ORDER BY created_at, id`,
      status ? [fileId, status] : [fileId],
    );
  }

  pendingForFile(fileId: string): Promise<SuggestionRow[]> {
    return this.sql.all(
      `SELECT ${SUGGESTION_COLUMNS} FROM suggestions WHERE file_id = ? AND status = 'pending' AND anchor_state = 'current'`,
      [fileId],
    );
  }

  deleteForFile(fileId: string) {
    return this.sql.run("DELETE FROM suggestions WHERE file_id = ?", [fileId]);
  }
}

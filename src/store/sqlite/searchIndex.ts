// SQLite's full-text index (FTS5, migration 7) is brought up to date after a write commits, not
// inside it. Tokenizing is a quarter of a bulk sync of new notes (200 notes of 1 KiB: ~75 ms a
// request with the index kept by triggers, ~57 without), and an edit of a note tokenized its old
// body too, to take it out. Now the write's triggers only note which files changed
// (`file_search_pending`, in the same transaction, so a crash loses nothing); the store indexes
// them a moment after the commit, off the request's path, and a note edited again meanwhile is
// indexed once. A search indexes whatever is still noted before it looks, so it always sees
// every committed change, as before.
import type { Sql } from "../store.ts";

/** Files indexed per transaction by the background pass, so a waiting request is not held long. */
export const INDEX_BATCH = 500;

/**
 * Brings the index up to date for up to `limit` noted files (all of them by default), in one
 * savepoint (its own transaction outside one). Returns how many it did. Set-based, a few
 * statements for the whole batch: noted files are taken in id order, so "up to the last one
 * taken" names the batch (nothing else writes meanwhile: the store runs one unit at a time).
 */
export async function indexPending(sql: Sql, limit = Number.MAX_SAFE_INTEGER): Promise<number> {
  const batch = await sql.get<{ last: string | null; n: number }>(
    "SELECT max(file_id) AS last, count(*) AS n FROM (SELECT file_id FROM file_search_pending ORDER BY file_id LIMIT ?)",
    [limit],
  );
  const last = batch?.last;
  if (!last) return 0;
  await sql.run("SAVEPOINT file_search_index");
  try {
    // What the index holds for these files goes (FTS5 reads the old text from its own copy), the
    // id mapping of those deleted since goes, then the files as they are now go in.
    await sql.run(
      `DELETE FROM file_search WHERE rowid IN (SELECT s.rowid FROM file_search_pending p
         JOIN file_search_ids s ON s.file_id = p.file_id WHERE p.file_id <= ?)`,
      [last],
    );
    await sql.run(
      `DELETE FROM file_search_ids WHERE file_id IN (SELECT p.file_id FROM file_search_pending p
         WHERE p.file_id <= ? AND NOT EXISTS (SELECT 1 FROM files f WHERE f.id = p.file_id))`,
      [last],
    );
    await sql.run(
      `INSERT OR IGNORE INTO file_search_ids (file_id)
       SELECT p.file_id FROM file_search_pending p JOIN files f ON f.id = p.file_id WHERE p.file_id <= ?`,
      [last],
    );
    await sql.run(
      `INSERT INTO file_search (rowid, name, context, tags, content)
       SELECT s.rowid, f.name, f.context, f.tags, f.content FROM file_search_pending p
         JOIN files f ON f.id = p.file_id JOIN file_search_ids s ON s.file_id = p.file_id
       WHERE p.file_id <= ?`,
      [last],
    );
    await sql.run("DELETE FROM file_search_pending WHERE file_id <= ?", [last]);
    await sql.run("RELEASE file_search_index");
  } catch (err) {
    await sql.run("ROLLBACK TO file_search_index");
    await sql.run("RELEASE file_search_index");
    throw err;
  }
  return Number(batch.n);
}

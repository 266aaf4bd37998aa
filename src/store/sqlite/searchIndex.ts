// SQLite's full-text index (FTS5, migration 7) is brought up to date after a write commits, not
// inside it. Tokenizing is a quarter of a bulk sync of new notes (200 notes of 1 KiB: ~75 ms a
// request with the index kept by triggers, ~57 without), and an edit of a note tokenized its old
// body too, to take it out. Now the write's triggers only note which files changed
// (`file_search_pending`, in the same transaction, so a crash loses nothing); the store indexes
// them a moment after the commit, off the request's path, and a note edited again meanwhile is
// indexed once. A search indexes whatever is still noted before it looks, so it always sees
// every committed change, as before.
import type { Sql } from "../store.ts";

/**
 * The `scope` column's tokens (migration 14): who may see a note, as words FTS5 can match, so a
 * search's MATCH holds the caller's access and FTS5 yields only the caller's notes. Ids are
 * hex-encoded (one token each, whatever characters an id holds): `o` owner, `d` folder, `n` note.
 */
export function scopeToken(kind: "o" | "d" | "n", id: string): string {
  return kind + Buffer.from(id, "utf8").toString("hex");
}

/** The same tokens written by SQLite for a row of files `f` (hex() is upper case; FTS5 folds it). */
const SCOPE_SQL =
  "'o' || hex(f.owner_id) || ' n' || hex(f.id) || CASE WHEN f.folder_id IS NULL THEN '' ELSE ' d' || hex(f.folder_id) END";

/**
 * A background pass's transaction takes up to this many noted files, and stops once their text
 * passes INDEX_BATCH_BYTES: node:sqlite is synchronous, so a batch holds the service's event loop
 * (every request waits) for as long as it tokenizes. 500 notes of 8 KiB took ~0.5 s in one batch,
 * enough to stall an unmount's last delivery behind it; in batches of 256 KiB the same work
 * (16 batches) held it for at most 60 ms at a time.
 */
export const INDEX_BATCH = 500;
export const INDEX_BATCH_BYTES = 256 * 1024;

/**
 * The most noted files a search brings into the index itself before it looks (a write's, an
 * import's: ~1-2 s of tokenizing at most). A larger backlog (an upgrade re-indexes every note) is
 * the background pass's, in batches: in one go it held the event loop for minutes.
 */
export const SEARCH_CATCH_UP = 2000;

/** A search that would first have to index more than SEARCH_CATCH_UP noted files. */
export class SearchIndexBehind extends Error {
  readonly pending: number;
  constructor(pending: number) {
    super(`the full-text index is catching up: more than ${pending - 1} notes are not indexed yet`);
    this.pending = pending;
  }
}

/**
 * Indexes what is still noted, if that is at most SEARCH_CATCH_UP files, so that what follows sees
 * every commit. A larger backlog: `strict` (a search, whose answer must be whole) throws
 * SearchIndexBehind; otherwise (candidates for related notes) the index is used as it is.
 */
export async function catchUp(sql: Sql, strict: boolean): Promise<void> {
  const row = await sql.get<{ n: number }>(
    "SELECT count(*) AS n FROM (SELECT 1 FROM file_search_pending LIMIT ?)",
    [SEARCH_CATCH_UP + 1],
  );
  const pending = Number(row?.n ?? 0);
  if (pending === 0) return;
  if (pending <= SEARCH_CATCH_UP) {
    await indexPending(sql);
    return;
  }
  if (strict) throw new SearchIndexBehind(pending);
}

/**
 * Brings the index up to date for up to `limit` noted files (all of them by default), or fewer
 * once the text taken passes `maxBytes` (always at least one), in one savepoint (its own
 * transaction outside one). Returns how many it did. Set-based, a few statements for the whole
 * batch: noted files are taken in id order, so "up to the last one taken" names the batch (nothing
 * else writes meanwhile: the store runs one unit at a time).
 */
export async function indexPending(
  sql: Sql,
  limit = Number.MAX_SAFE_INTEGER,
  maxBytes = Number.POSITIVE_INFINITY,
): Promise<number> {
  let last: string | undefined;
  let n = 0;
  if (maxBytes === Number.POSITIVE_INFINITY) {
    const batch = await sql.get<{ last: string | null; n: number }>(
      "SELECT max(file_id) AS last, count(*) AS n FROM (SELECT file_id FROM file_search_pending ORDER BY file_id LIMIT ?)",
      [limit],
    );
    last = batch?.last ?? undefined;
    n = Number(batch?.n ?? 0);
  } else {
    // Weighed by the text now in the file (a deleted one counts as nothing).
    const noted = await sql.all<{ file_id: string; bytes: number | null }>(
      `SELECT p.file_id, length(CAST(f.content AS BLOB)) + length(CAST(f.name AS BLOB))
         + length(CAST(f.context AS BLOB)) + length(CAST(f.tags AS BLOB)) AS bytes
       FROM file_search_pending p LEFT JOIN files f ON f.id = p.file_id ORDER BY p.file_id LIMIT ?`,
      [limit],
    );
    let bytes = 0;
    for (const row of noted) {
      if (n > 0 && bytes + Number(row.bytes ?? 0) > maxBytes) break;
      bytes += Number(row.bytes ?? 0);
      last = row.file_id;
      n++;
    }
  }
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
      `INSERT INTO file_search (rowid, name, context, tags, content, scope)
       SELECT s.rowid, f.name, f.context, f.tags, f.content, ${SCOPE_SQL} FROM file_search_pending p
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
  return n;
}

// Candidates for related notes, each found through an index and bounded by a LIMIT, so the work of
// one request does not grow with the store: notes sharing a tag (file_search_tags, migration 11),
// notes in the same folder (files_folder), and the leading text of a few notes for comparing words.
// The caller's own notes are one index range; notes shared with it are reached from the shares.

import type { Sql } from "../store.ts";
import { accessWhere, type FileListFilter } from "./files.ts";

function placeholders(n: number): string {
  return Array.from({ length: n }, () => "?").join(", ");
}

/** What a note says in words, cut to its head: enough to tell whether two notes share words. */
export interface NoteText {
  id: string;
  name: string;
  context: string;
  tags: string;
  head: string;
}

export class RelatedRepo {
  private readonly sql: Sql;

  constructor(sql: Sql) {
    this.sql = sql;
  }

  /**
   * How many notes the filter sees with `tag`, counted up to `cap` (a tag carried by more is
   * simply common): rarer shared tags say more about two notes.
   */
  async tagCount(filter: FileListFilter, tag: string, cap: number): Promise<number> {
    const own = await this.sql.get<{ n: number }>(
      `SELECT COUNT(*) AS n FROM (SELECT 1 FROM file_search_tags WHERE owner_id = ? AND tag = ? LIMIT ${cap}) AS t`,
      [filter.ownerId, tag],
    );
    let n = Number(own?.n ?? 0);
    if (n < cap && this.shared(filter)) n += (await this.sharedWithTag(filter, tag, cap - n)).length;
    return Math.min(n, cap);
  }

  /** Up to `limit` notes the filter sees that carry `tag`. */
  async withTag(filter: FileListFilter, tag: string, limit: number): Promise<string[]> {
    const rows = await this.sql.all<{ id: string }>(
      `SELECT file_id AS id FROM file_search_tags WHERE owner_id = ? AND tag = ? ORDER BY file_id LIMIT ${limit}`,
      [filter.ownerId, tag],
    );
    const ids = rows.map((r) => r.id);
    if (ids.length < limit && this.shared(filter))
      ids.push(...(await this.sharedWithTag(filter, tag, limit - ids.length)));
    return ids;
  }

  /** Up to `limit` notes the filter sees directly in `folderId`. */
  async inFolder(filter: FileListFilter, folderId: string, limit: number): Promise<string[]> {
    const { where, params } = accessWhere(filter);
    const rows = await this.sql.all<{ id: string }>(
      `SELECT files.id AS id FROM files WHERE files.folder_id = ? AND ${where.join(" AND ")} ORDER BY files.id LIMIT ${limit}`,
      [folderId, ...params],
    );
    return rows.map((r) => r.id);
  }

  /** The words of these notes: name, context, tags and the first `chars` characters of the body. */
  texts(ids: readonly string[], chars: number): Promise<NoteText[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.sql.all<NoteText>(
      `SELECT id, name, context, tags, substr(content, 1, ${chars}) AS head FROM files WHERE id IN (${placeholders(ids.length)})`,
      ids,
    );
  }

  private shared(filter: FileListFilter): boolean {
    return Boolean(filter.sharedFolderIds?.length || filter.sharedFileIds?.length);
  }

  /** Notes shared with the filter's account that carry `tag`: from the shares, then each note's tags. */
  private async sharedWithTag(filter: FileListFilter, tag: string, limit: number): Promise<string[]> {
    const parts: string[] = [];
    const params: unknown[] = [];
    if (filter.sharedFolderIds?.length) {
      parts.push(`files.folder_id IN (${placeholders(filter.sharedFolderIds.length)})`);
      params.push(...filter.sharedFolderIds);
    }
    if (filter.sharedFileIds?.length) {
      parts.push(`files.id IN (${placeholders(filter.sharedFileIds.length)})`);
      params.push(...filter.sharedFileIds);
    }
    const rows = await this.sql.all<{ id: string }>(
      `SELECT files.id AS id FROM files JOIN file_search_tags t ON t.file_id = files.id AND t.tag = ?
       WHERE files.owner_id <> ? AND (${parts.join(" OR ")}) ORDER BY files.id LIMIT ${limit}`,
      [tag, filter.ownerId, ...params],
    );
    return rows.map((r) => r.id);
  }
}

import type { Sql } from "../store.ts";
import type { FileMetaRow, FileRow } from "./rows.ts";

// Every column but `content`, which is stored last so that listings never touch large bodies.
export const FILE_META_COLUMNS =
  "id, owner_id, folder_id, name, type, availability, context, tags, size, content_hash, revision, " +
  "version_number, etag, plan_enabled, plan_scope, plan_trust, plan_source, plan_updated_at, created_at, updated_at";
const META = FILE_META_COLUMNS.split(", ")
  .map((c) => `files.${c}`)
  .join(", ");
const ALL_COLUMNS = `${FILE_META_COLUMNS}, content`;

function placeholders(n: number): string {
  return Array.from({ length: n }, () => "?").join(",");
}

export interface FileListFilter {
  ownerId: string;
  /** Files reachable through shares: in these folders, or these exact files. */
  sharedFolderIds?: readonly string[];
  sharedFileIds?: readonly string[];
  /** Only files directly in this folder (null = root files). Undefined = everywhere. */
  folderId?: string | null;
  /** Keyset pagination: ids strictly greater than this. */
  afterId?: string;
  limit?: number;
}

export class FileRepo {
  private readonly sql: Sql;

  constructor(sql: Sql) {
    this.sql = sql;
  }

  insert(row: FileRow) {
    const cols = ALL_COLUMNS.split(", ");
    return this.sql.run(
      `INSERT INTO files (${ALL_COLUMNS}) VALUES (${placeholders(cols.length)})`,
      cols.map((c) => row[c as keyof FileRow]),
    );
  }

  /** Writes every mutable column of `row` (the caller bumped revision/etag). */
  update(row: FileRow) {
    return this.sql.run(
      `UPDATE files SET folder_id = ?, name = ?, type = ?, availability = ?, context = ?, tags = ?, size = ?,
         content_hash = ?, revision = ?, version_number = ?, etag = ?, plan_enabled = ?, plan_scope = ?,
         plan_trust = ?, plan_source = ?, plan_updated_at = ?, updated_at = ?, content = ?
       WHERE id = ?`,
      [
        row.folder_id,
        row.name,
        row.type,
        row.availability,
        row.context,
        row.tags,
        row.size,
        row.content_hash,
        row.revision,
        row.version_number,
        row.etag,
        row.plan_enabled,
        row.plan_scope,
        row.plan_trust,
        row.plan_source,
        row.plan_updated_at,
        row.updated_at,
        row.content,
        row.id,
      ],
    );
  }

  byId(id: string): Promise<FileRow | undefined> {
    return this.sql.get(`SELECT ${ALL_COLUMNS} FROM files WHERE id = ?`, [id]);
  }

  metaById(id: string): Promise<FileMetaRow | undefined> {
    return this.sql.get(`SELECT ${FILE_META_COLUMNS} FROM files WHERE id = ?`, [id]);
  }

  metaByIds(ids: readonly string[]): Promise<FileMetaRow[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.sql.all(
      `SELECT ${FILE_META_COLUMNS} FROM files WHERE id IN (${placeholders(ids.length)})`,
      ids,
    );
  }

  /** Files the filter can see, ordered by id, without bodies (or with, for folder fetches). */
  list(filter: FileListFilter, withContent = false): Promise<FileRow[] | FileMetaRow[]> {
    const { where, params } = accessWhere(filter);
    if (filter.folderId !== undefined) {
      where.push(filter.folderId === null ? "files.folder_id IS NULL" : "files.folder_id = ?");
      if (filter.folderId !== null) params.push(filter.folderId);
    }
    if (filter.afterId) {
      where.push("files.id > ?");
      params.push(filter.afterId);
    }
    const limit = filter.limit ? ` LIMIT ${Math.floor(filter.limit)}` : "";
    const cols = withContent ? `${META}, files.content` : META;
    return this.sql.all(
      `SELECT ${cols} FROM files WHERE ${where.join(" AND ")} ORDER BY files.id${limit}`,
      params,
    );
  }

  /** Files in any of these folders (bodies included when asked). */
  inFolders(folderIds: readonly string[], withContent: boolean): Promise<FileRow[]> {
    if (folderIds.length === 0) return Promise.resolve([]);
    const cols = withContent ? ALL_COLUMNS : FILE_META_COLUMNS;
    return this.sql.all(
      `SELECT ${cols} FROM files WHERE folder_id IN (${placeholders(folderIds.length)}) ORDER BY id`,
      folderIds,
    );
  }

  delete(id: string) {
    return this.sql.run("DELETE FROM files WHERE id = ?", [id]);
  }
}

export function accessWhere(filter: FileListFilter): { where: string[]; params: unknown[] } {
  const any = ["files.owner_id = ?"];
  const params: unknown[] = [filter.ownerId];
  if (filter.sharedFolderIds?.length) {
    any.push(`files.folder_id IN (${placeholders(filter.sharedFolderIds.length)})`);
    params.push(...filter.sharedFolderIds);
  }
  if (filter.sharedFileIds?.length) {
    any.push(`files.id IN (${placeholders(filter.sharedFileIds.length)})`);
    params.push(...filter.sharedFileIds);
  }
  return { where: [`(${any.join(" OR ")})`], params };
}

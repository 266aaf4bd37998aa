import type { Sql } from "../store.ts";
import type { FileMetaRow, FileRow } from "./rows.ts";
import type { Dialect } from "./search.ts";

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

const INSERT_COLUMNS = ALL_COLUMNS.split(", ") as (keyof FileRow)[];
const INSERT_SQL = `INSERT INTO files (${ALL_COLUMNS}) VALUES (${placeholders(INSERT_COLUMNS.length)})`;

/**
 * A listed file as the JSON text of its record's fields that come from its row (listJson), with
 * what its caller's role is worked out from.
 */
export interface FileJsonRow {
  id: string;
  owner_id: string;
  folder_id: string | null;
  json: string;
}

/**
 * The record fields drawn from a file's row, in the order of a TxtFile (records.ts adds endpoint,
 * raw, access and role): one list for the JSON the database writes and the JSON written here.
 */
const JSON_FIELDS = [
  ["id", "id"],
  ["name", "name"],
  ["context", "context"],
  ["tags", "tags"],
  ["type", "type"],
  ["availability", "availability"],
  ["size", "size"],
  ["folderId", "folder_id"],
  ["createdAt", "created_at"],
  ["updatedAt", "updated_at"],
  ["etag", "etag"],
  ["contentHash", "content_hash"],
  ["ownerId", "owner_id"],
] as const;

/** SQLite's json_object of JSON_FIELDS (tags are JSON text already). */
const SQLITE_JSON = `json_object(${JSON_FIELDS.map(([key, col]) => `'${key}', ${col === "tags" ? "json(files.tags)" : `files.${col}`}`).join(", ")})`;

/** The same JSON written from the row (PostgreSQL, whose rows are unescaped on their way out: nulText.ts). */
function rowJson(row: FileMetaRow): string {
  const out: Record<string, unknown> = {};
  for (const [key, col] of JSON_FIELDS) {
    const v = row[col];
    out[key] = col === "tags" ? JSON.parse(v as string) : col === "size" ? Number(v) : v;
  }
  return JSON.stringify(out);
}

export class FileRepo {
  private readonly sql: Sql;
  private readonly dialect: Dialect;

  constructor(sql: Sql, dialect: Dialect = "sqlite") {
    this.sql = sql;
    this.dialect = dialect;
  }

  insert(row: FileRow) {
    return this.sql.run(
      INSERT_SQL,
      INSERT_COLUMNS.map((c) => row[c]),
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
    const { sql, params } = listQuery(filter, withContent ? `${META}, files.content` : META, this.dialect);
    return this.sql.all(sql, params);
  }

  /**
   * The same files as list() (never bodies), each as JSON text: SQLite writes it itself, so the
   * rows of a listing of 100,000 notes never become objects (0.27-0.48 s instead of 0.6-1.2 s).
   */
  async listJson(filter: FileListFilter): Promise<FileJsonRow[]> {
    if (this.dialect === "postgres") {
      const rows = (await this.list(filter)) as FileMetaRow[];
      return rows.map((r) => ({ id: r.id, owner_id: r.owner_id, folder_id: r.folder_id, json: rowJson(r) }));
    }
    const { sql, params } = listQuery(
      filter,
      `files.id, files.owner_id, files.folder_id, ${SQLITE_JSON} AS json`,
      this.dialect,
    );
    return this.sql.all(sql, params);
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

  /**
   * The files of one owner's folder (null: its top level) with any of these names, through
   * files_folder_name (migration 18): an import looks up its own names, never the whole folder.
   */
  named(ownerId: string, folderId: string | null, names: readonly string[]): Promise<FileMetaRow[]> {
    if (names.length === 0) return Promise.resolve([]);
    const inFolder = folderId === null ? "folder_id IS NULL" : "folder_id = ?";
    // SQLite's planner, seeing small folders, would rather walk one: named, as a folder can be big.
    const from = this.dialect === "sqlite" ? "files INDEXED BY files_folder_name" : "files";
    return this.sql.all(
      `SELECT ${FILE_META_COLUMNS} FROM ${from} WHERE ${inFolder} AND name IN (${placeholders(names.length)}) AND owner_id = ? ORDER BY id`,
      [...(folderId === null ? [] : [folderId]), ...names, ownerId],
    );
  }

  delete(id: string) {
    return this.sql.run("DELETE FROM files WHERE id = ?", [id]);
  }
}

/** The query of list() and listJson(), selecting `cols`. */
function listQuery(
  filter: FileListFilter,
  cols: string,
  dialect: Dialect,
): { sql: string; params: unknown[] } {
  const { where, params } = accessWhere(filter);
  // One folder (or the top level) of one account is one range of files_owner_folder (migration
  // 15). SQLite's statistics average the notes per folder, so they cannot tell that the top level
  // holds few: left to choose, it walked every note of the account through the listing index.
  const ownFolder =
    dialect === "sqlite" &&
    filter.folderId !== undefined &&
    !filter.sharedFolderIds?.length &&
    !filter.sharedFileIds?.length;
  if (filter.folderId !== undefined) {
    where.push(filter.folderId === null ? "files.folder_id IS NULL" : "files.folder_id = ?");
    if (filter.folderId !== null) params.push(filter.folderId);
  }
  if (filter.afterId) {
    where.push("files.id > ?");
    params.push(filter.afterId);
  }
  const limit = filter.limit ? ` LIMIT ${Math.floor(filter.limit)}` : "";
  const from = ownFolder ? "files INDEXED BY files_owner_folder" : "files";
  return {
    sql: `SELECT ${cols} FROM ${from} WHERE ${where.join(" AND ")} ORDER BY files.id${limit}`,
    params,
  };
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

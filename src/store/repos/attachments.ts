import type { Sql } from "../store.ts";

/** An attachment: any file that is not a note, its bytes in the blob store by `content_hash`. */
export interface AttachmentRow {
  id: string;
  owner_id: string;
  folder_id: string | null;
  name: string;
  content_type: string;
  size: number;
  content_hash: string;
  revision: number;
  version_number: number;
  etag: string;
  created_at: string;
  updated_at: string;
}

export interface AttachmentVersionRow {
  id: string;
  attachment_id: string;
  version_number: number;
  content_hash: string;
  byte_size: number;
  author_user_id: string | null;
  source: string;
  created_at: string;
}

const COLUMNS = [
  "id",
  "owner_id",
  "folder_id",
  "name",
  "content_type",
  "size",
  "content_hash",
  "revision",
  "version_number",
  "etag",
  "created_at",
  "updated_at",
] as const;
const VERSION_COLUMNS = [
  "id",
  "attachment_id",
  "version_number",
  "content_hash",
  "byte_size",
  "author_user_id",
  "source",
  "created_at",
] as const;

const marks = (n: number) => Array.from({ length: n }, () => "?").join(", ");

/** Integers come back as strings from PostgreSQL's BIGINT: numbers here, as on SQLite. */
function normal(row: AttachmentRow | undefined): AttachmentRow | undefined {
  if (!row) return row;
  row.size = Number(row.size);
  row.revision = Number(row.revision);
  row.version_number = Number(row.version_number);
  return row;
}

export class AttachmentRepo {
  private readonly sql: Sql;
  /** Owners known (in this unit of work) to hold attachments or none: bulk note creates ask once. */
  private readonly owners = new Map<string, boolean>();

  constructor(sql: Sql) {
    this.sql = sql;
  }

  /** Does the account own any attachment? (Remembered for the unit of work; an insert sets it.) */
  async anyOwnedBy(ownerId: string): Promise<boolean> {
    let known = this.owners.get(ownerId);
    if (known === undefined) {
      known = !!(await this.sql.get("SELECT 1 AS one FROM attachments WHERE owner_id = ? LIMIT 1", [
        ownerId,
      ]));
      this.owners.set(ownerId, known);
    }
    return known;
  }

  insert(row: AttachmentRow) {
    this.owners.set(row.owner_id, true);
    return this.sql.run(
      `INSERT INTO attachments (${COLUMNS.join(", ")}) VALUES (${marks(COLUMNS.length)})`,
      COLUMNS.map((c) => row[c]),
    );
  }

  update(row: AttachmentRow) {
    const set = COLUMNS.slice(1)
      .map((c) => `${c} = ?`)
      .join(", ");
    return this.sql.run(`UPDATE attachments SET ${set} WHERE id = ?`, [
      ...COLUMNS.slice(1).map((c) => row[c]),
      row.id,
    ]);
  }

  async byId(id: string): Promise<AttachmentRow | undefined> {
    return normal(await this.sql.get<AttachmentRow>("SELECT * FROM attachments WHERE id = ?", [id]));
  }

  /** The attachment of that name in that place (an owner's folder, or its root). */
  async byPlace(ownerId: string, folderId: string | null, name: string) {
    return normal(
      await this.sql.get<AttachmentRow>(
        "SELECT * FROM attachments WHERE owner_id = ? AND COALESCE(folder_id, '') = ? AND name = ?",
        [ownerId, folderId ?? "", name],
      ),
    );
  }

  async byIds(ids: readonly string[]): Promise<AttachmentRow[]> {
    if (ids.length === 0) return [];
    const rows = await this.sql.all<AttachmentRow>(
      `SELECT * FROM attachments WHERE id IN (${marks(ids.length)}) ORDER BY id`,
      ids,
    );
    return rows.map((r) => normal(r)!);
  }

  /** Attachments directly in these folders, by id. */
  async inFolders(folderIds: readonly string[]): Promise<AttachmentRow[]> {
    if (folderIds.length === 0) return [];
    const rows = await this.sql.all<AttachmentRow>(
      `SELECT * FROM attachments WHERE folder_id IN (${marks(folderIds.length)}) ORDER BY id`,
      folderIds,
    );
    return rows.map((r) => normal(r)!);
  }

  /**
   * Attachments an account sees, keyset paged by id: its own and those in folders shared with it;
   * with `folderId`, only those directly there (null = its root).
   */
  async page(
    filter: {
      ownerId: string;
      sharedFolderIds: readonly string[];
      folderId?: string | null;
      afterId?: string;
    },
    limit: number,
  ): Promise<AttachmentRow[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (filter.folderId === null) {
      where.push("folder_id IS NULL AND owner_id = ?");
      params.push(filter.ownerId);
    } else if (filter.folderId !== undefined) {
      where.push("folder_id = ?");
      params.push(filter.folderId);
    } else if (filter.sharedFolderIds.length > 0) {
      where.push(`(owner_id = ? OR folder_id IN (${marks(filter.sharedFolderIds.length)}))`);
      params.push(filter.ownerId, ...filter.sharedFolderIds);
    } else {
      where.push("owner_id = ?");
      params.push(filter.ownerId);
    }
    if (filter.afterId) {
      where.push("id > ?");
      params.push(filter.afterId);
    }
    const rows = await this.sql.all<AttachmentRow>(
      `SELECT * FROM attachments WHERE ${where.join(" AND ")} ORDER BY id LIMIT ?`,
      [...params, limit],
    );
    return rows.map((r) => normal(r)!);
  }

  /** Bytes of current content an account owns (what its quota counts). */
  async bytesOwned(ownerId: string): Promise<number> {
    const row = await this.sql.get<{ n: number | string | null }>(
      "SELECT SUM(size) AS n FROM attachments WHERE owner_id = ?",
      [ownerId],
    );
    return Number(row?.n ?? 0);
  }

  delete(id: string) {
    return this.sql.run("DELETE FROM attachments WHERE id = ?", [id]);
  }

  insertVersion(row: AttachmentVersionRow) {
    return this.sql.run(
      `INSERT INTO attachment_versions (${VERSION_COLUMNS.join(", ")}) VALUES (${marks(VERSION_COLUMNS.length)})`,
      VERSION_COLUMNS.map((c) => row[c]),
    );
  }

  /** An attachment's versions, newest first. */
  async versions(attachmentId: string): Promise<(AttachmentVersionRow & { author_name: string | null })[]> {
    const rows = await this.sql.all<AttachmentVersionRow & { author_name: string | null }>(
      `SELECT v.*, u.name AS author_name FROM attachment_versions v LEFT JOIN users u ON u.id = v.author_user_id
       WHERE v.attachment_id = ? ORDER BY v.version_number DESC`,
      [attachmentId],
    );
    for (const r of rows) {
      r.version_number = Number(r.version_number);
      r.byte_size = Number(r.byte_size);
    }
    return rows;
  }

  async version(attachmentId: string, versionNumber: number) {
    const row = await this.sql.get<AttachmentVersionRow>(
      "SELECT * FROM attachment_versions WHERE attachment_id = ? AND version_number = ?",
      [attachmentId, versionNumber],
    );
    if (row) {
      row.version_number = Number(row.version_number);
      row.byte_size = Number(row.byte_size);
    }
    return row;
  }

  /** Versions numbered at or below `upTo`, to be released and dropped (retention). */
  versionsUpTo(attachmentId: string, upTo: number): Promise<AttachmentVersionRow[]> {
    return this.sql.all(
      "SELECT * FROM attachment_versions WHERE attachment_id = ? AND version_number <= ? ORDER BY version_number",
      [attachmentId, upTo],
    );
  }

  deleteVersion(id: string) {
    return this.sql.run("DELETE FROM attachment_versions WHERE id = ?", [id]);
  }
}

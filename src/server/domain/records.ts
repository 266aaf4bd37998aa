// Rows -> the spec's resource records (TxtFile, TxtFileDetail, TxtFolder, TxtPlanMetadata, TxtApiKey).
// Fields beyond the spec's (etag, contentHash, revision) are additive, as the spec allows.
import type { TxtFile, TxtFileDetail, TxtFolder } from "../../lib/apiTypes.ts";
import type { FileJsonRow } from "../../store/repos/files.ts";
import type { ApiKeyRow, FileMetaRow, FileRow, FolderRow, Role } from "../../store/repos/rows.ts";

export type { TxtFile, TxtFileDetail, TxtFolder };

export const fileEndpoint = (id: string) => `/api/v1/files/${id}`;
export const folderEndpoint = (id: string) => `/api/v1/folders/${id}`;

export function parseTags(json: string): string[] {
  return JSON.parse(json) as string[];
}

export function toTxtFile(row: FileMetaRow, role: Role): TxtFile {
  return {
    id: row.id,
    name: row.name,
    context: row.context,
    tags: parseTags(row.tags),
    type: row.type,
    availability: row.availability,
    size: Number(row.size),
    folderId: row.folder_id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    endpoint: fileEndpoint(row.id),
    raw: `${fileEndpoint(row.id)}/raw`,
    access: role === "owner" ? "owner" : "shared",
    role,
    etag: row.etag,
    contentHash: row.content_hash,
    ownerId: row.owner_id,
  };
}

/**
 * A listed file's record as JSON text: the fields its row gives, as the database wrote them
 * (FileRepo.listJson), and those worked out here: the object toTxtFile makes, its keys in
 * another order.
 */
export function listedFileJson(row: FileJsonRow, role: Role): string {
  const endpoint = fileEndpoint(row.id); // ids are f_ and Crockford base32: nothing to escape
  const access = role === "owner" ? "owner" : "shared";
  return `${row.json.slice(0, -1)},"endpoint":"${endpoint}","raw":"${endpoint}/raw","access":"${access}","role":"${role}"}`;
}

export function toTxtFileDetail(row: FileRow, role: Role): TxtFileDetail {
  const { id, name, context, tags, type, availability, size, folderId, createdAt, updatedAt, access, etag } =
    toTxtFile(row, role);
  return {
    id,
    name,
    content: row.content,
    context,
    tags,
    type,
    availability,
    folderId,
    createdAt,
    updatedAt,
    access,
    role,
    size,
    etag,
    contentHash: row.content_hash,
    ownerId: row.owner_id,
    endpoint: fileEndpoint(row.id),
    raw: `${fileEndpoint(row.id)}/raw`,
  };
}

export function toTxtFolder(row: FolderRow, role: Role, fileCount: number): TxtFolder {
  return {
    id: row.id,
    name: row.name,
    context: row.context,
    tags: parseTags(row.tags),
    parentFolderId: row.parent_id,
    fileCount,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    endpoint: folderEndpoint(row.id),
    access: role === "owner" ? "owner" : "shared",
    role,
    ownerId: row.owner_id,
  };
}

export function toPlan(row: FileMetaRow) {
  return {
    enabled: row.plan_enabled === 1,
    scope: row.plan_scope as "manual" | "project" | "global",
    trust: row.plan_trust as "unreviewed" | "approved",
    source: row.plan_source,
    updatedAt: row.plan_updated_at,
  };
}

export function toTxtApiKey(row: ApiKeyRow, today: string) {
  return {
    id: row.id,
    label: row.label,
    token_prefix: row.token_prefix,
    created_at: row.created_at,
    last_used_at: row.last_used_at,
    expires_at: row.expires_at,
    scopes: JSON.parse(row.scopes) as string[],
    requests_today: row.requests_day === today ? Number(row.requests_today) : 0,
    revoked_at: row.revoked_at,
  };
}

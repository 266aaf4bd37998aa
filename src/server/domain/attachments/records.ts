// Attachment rows -> the API's records (TxtAttachment, and its versions). An extension of the spec:
// notes keep their TxtFile records; attachments never appear among them.
import type { AttachmentRow, AttachmentVersionRow } from "../../../store/repos/attachments.ts";
import type { Role } from "../../../store/repos/rows.ts";

export const attachmentEndpoint = (id: string) => `/api/v1/attachments/${id}`;

export interface TxtAttachment {
  id: string;
  name: string;
  folderId: string | null;
  contentType: string;
  size: number;
  contentHash: string;
  etag: string;
  revision: number;
  versionNumber: number;
  createdAt: string;
  updatedAt: string;
  endpoint: string;
  raw: string;
  access: "owner" | "shared";
  role: Role;
  ownerId: string;
}

export function toTxtAttachment(row: AttachmentRow, role: Role): TxtAttachment {
  return {
    id: row.id,
    name: row.name,
    folderId: row.folder_id,
    contentType: row.content_type,
    size: Number(row.size),
    contentHash: row.content_hash,
    etag: row.etag,
    revision: Number(row.revision),
    versionNumber: Number(row.version_number),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    endpoint: attachmentEndpoint(row.id),
    raw: `${attachmentEndpoint(row.id)}/raw`,
    access: role === "owner" ? "owner" : "shared",
    role,
    ownerId: row.owner_id,
  };
}

export function toAttachmentVersion(
  row: AttachmentVersionRow & { author_name?: string | null },
  current: number,
) {
  return {
    id: row.id,
    attachmentId: row.attachment_id,
    versionNumber: Number(row.version_number),
    contentHash: row.content_hash,
    byteSize: Number(row.byte_size),
    authorUserId: row.author_user_id,
    authorName: row.author_name ?? null,
    source: row.source,
    createdAt: row.created_at,
    current: Number(row.version_number) === current,
    raw: `${attachmentEndpoint(row.attachment_id)}/versions/${row.version_number}/raw`,
  };
}

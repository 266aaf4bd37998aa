// The API's resource records (docs/spec.md "Resources"), shared by the server that builds them and the
// client that reads them. Fields beyond the spec's (etag, contentHash) are additive.

export type Role = "owner" | "writer" | "reader";

/**
 * The header of GET /api/me/files by which the service says each record of "files" is on a line
 * of its own (`lines`): a client may then split them at line ends (src/client/listingStream.ts).
 */
export const LISTING_LINES_HEADER = "x-txtfs-listing";

export interface TxtFile {
  id: string;
  name: string;
  context: string;
  tags: string[];
  type: "txt" | "md";
  availability: "cloud" | "cloud+local";
  size: number;
  folderId: string | null;
  createdAt: string;
  updatedAt: string;
  endpoint: string;
  raw: string;
  access: "owner" | "shared";
  role: Role;
  etag: string;
  contentHash: string;
  /** The owner's account id (additive): who shared it, for items that are not yours. */
  ownerId?: string;
}

export interface TxtFileDetail extends Omit<TxtFile, "endpoint" | "raw"> {
  content: string;
  endpoint: string;
  raw: string;
}

export interface TxtFolder {
  id: string;
  name: string;
  context: string;
  tags: string[];
  parentFolderId: string | null;
  fileCount: number;
  createdAt: string;
  updatedAt: string;
  endpoint: string;
  access: "owner" | "shared";
  role: Role;
  ownerId?: string;
  files?: (TxtFile & { content: string })[];
}

/**
 * An attachment (an extension of the spec): any file that is not a note, bytes exact, by folder
 * and name (docs/api.md, "Attachments"). The server's own type is domain/attachments/records.ts.
 */
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

/** One record of the change feed (GET /api/v1/changes): metadata only, never bodies. */
export interface ChangeRecord {
  seq: number;
  /** `share`, `comment`, `suggestion` and `version` records carry `fileId` (or the shared resource). */
  kind: "file" | "folder" | "share" | "comment" | "suggestion" | "version" | "attachment";
  id: string;
  deleted: boolean;
  /** For tombstones: `deleted`, or `access_revoked` when the item is no longer visible to you. */
  reason?: string;
  changedAt: string;
  etag?: string;
  file?: TxtFile;
  folder?: TxtFolder;
  /** The file a comment, suggestion or version belongs to (also on their tombstones). */
  fileId?: string;
  share?: Record<string, unknown>;
  comment?: Record<string, unknown>;
  suggestion?: Record<string, unknown>;
  version?: Record<string, unknown>;
  /** Only in a feed read with `include=attachments` (an extension of the spec). */
  attachment?: Record<string, unknown>;
}

/** A version of a note (SPEC `TxtVersion`); `content` only when one version is fetched. */
export interface TxtVersion {
  id: string;
  file_id: string;
  content?: string;
  version_number: number;
  content_hash: string | null;
  byte_size: number;
  author_user_id: string | null;
  author_name: string | null;
  source: string;
  label: string | null;
  commit_id: string | null;
  created_at: string;
}

/** A comment on a note (SPEC `TxtComment`). */
export interface TxtComment {
  id: string;
  file_id: string;
  user_id: string;
  user_email: string;
  user_name: string | null;
  body: string;
  selection_start: number | null;
  selection_end: number | null;
  selected_text: string | null;
  resolved: boolean;
  created_at: string;
  updated_at: string;
  anchor_state?: string;
}

/** A suggested replacement of a selection (SPEC `TxtSuggestion`). */
export interface TxtSuggestion {
  id: string;
  file_id: string;
  user_id: string;
  user_email: string;
  user_name: string | null;
  original_text: string;
  suggested_text: string;
  selection_start: number;
  selection_end: number;
  status: "pending" | "accepted" | "rejected";
  created_at: string;
}

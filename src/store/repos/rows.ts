// Row shapes as stored. Booleans are 0/1 integers and timestamps ISO strings in every backend.

export type Role = "owner" | "writer" | "reader";

export interface UserRow {
  id: string;
  email: string;
  name: string;
  created_at: string;
  feed_seq: number;
  feed_floor: number;
  /** `free` or `pro` (txtfs admin user plan): `pro` accounts may use the operator's AI provider. */
  plan: string;
}

export interface ApiKeyRow {
  id: string;
  user_id: string;
  label: string;
  token_prefix: string;
  token_hash: string;
  scopes: string; // JSON array
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
  requests_today: number;
  requests_day: string | null;
}

export interface FolderRow {
  id: string;
  owner_id: string;
  parent_id: string | null;
  name: string;
  context: string;
  tags: string; // JSON array
  revision: number;
  created_at: string;
  updated_at: string;
  /** 1: nothing in this folder or below is ever sent to an AI provider. */
  ai_excluded?: number;
}

/** A file without its body: what listings read. */
export interface FileMetaRow {
  id: string;
  owner_id: string;
  folder_id: string | null;
  name: string;
  type: "txt" | "md";
  availability: "cloud" | "cloud+local";
  context: string;
  tags: string; // JSON array
  size: number;
  content_hash: string;
  revision: number;
  version_number: number;
  etag: string;
  plan_enabled: number;
  plan_scope: string;
  plan_trust: string;
  plan_source: string;
  plan_updated_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface FileRow extends FileMetaRow {
  content: string;
}

export interface VersionRow {
  id: string;
  file_id: string;
  version_number: number;
  content_hash: string | null;
  byte_size: number;
  author_user_id: string | null;
  source: string;
  label: string | null;
  commit_id: string | null;
  created_at: string;
  content: string;
}

export interface ConnectionRow {
  file_id: string;
  target_file_id: string;
  reason: string;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}

export interface ShareRow {
  id: string;
  resource_type: "file" | "folder";
  resource_id: string;
  owner_id: string;
  grantee_id: string | null;
  grantee_email: string;
  role: "writer" | "reader";
  status: "active" | "pending" | "revoked";
  created_by: string;
  created_at: string;
  updated_at: string;
  expires_at: string | null;
}

export interface FeedRow {
  account_id: string;
  seq: number;
  kind: string;
  item_id: string;
  deleted: number;
  reason: string | null;
  record: string; // JSON snapshot for this account
  changed_at: string;
}

export interface IdempotencyRow {
  principal: string;
  key: string;
  fingerprint: string;
  status: number;
  headers: string;
  body: string;
  created_at: string;
  expires_at: string;
}

export interface CommentRow {
  id: string;
  file_id: string;
  user_id: string;
  selection_start: number | null;
  selection_end: number | null;
  selected_text: string | null;
  anchor_state: "current" | "outdated";
  version_number: number;
  resolved: number;
  resolved_by: string | null;
  resolved_at: string | null;
  created_at: string;
  updated_at: string;
  body: string;
}

export interface SuggestionRow {
  id: string;
  file_id: string;
  user_id: string;
  selection_start: number;
  selection_end: number;
  anchor_state: "current" | "outdated";
  version_number: number;
  status: "pending" | "accepted" | "rejected";
  reviewed_by: string | null;
  reviewed_at: string | null;
  created_at: string;
  updated_at: string;
  original_text: string;
  suggested_text: string;
}

export interface TempUrlRow {
  id: string;
  file_id: string;
  token_hash: string;
  created_by: string;
  created_at: string;
  expires_at: string;
  revoked_at: string | null;
}

export interface ThemeRow {
  scope_type: "account" | "file" | "folder" | "group";
  scope_id: string;
  theme_id: string;
  overrides: string; // JSON object
  revision: number;
  updated_by: string;
  updated_at: string;
}

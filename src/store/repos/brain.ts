// Records of the context brain: AI usage per account and day, ideation records, reviewable
// proposals, transcriptions, artifacts and note embeddings.
import type { Sql } from "../store.ts";
import { accessWhere, type FileListFilter } from "./files.ts";

export interface AiUsageRow {
  account_id: string;
  day: string;
  requests: number;
  tokens: number;
}

export interface IdeationRow {
  file_id: string;
  owner_id: string;
  created_by: string;
  created_at: string;
  grown_at: string | null;
  grow_count: number;
  /** JSON array of IdeationEvent (domain/brain/ideation.ts). */
  history: string;
}

export interface ProposalRow {
  id: string;
  owner_id: string;
  analysis_id: string;
  kind: string;
  target_type: string;
  target_id: string | null;
  base_etag: string | null;
  status: "pending" | "accepted" | "rejected";
  reason: string;
  created_at: string;
  reviewed_at: string | null;
  reviewed_by: string | null;
  proposed: string; // JSON
  current: string; // JSON
}

export interface TranscriptionRow {
  id: string;
  owner_id: string;
  status: "completed" | "failed";
  source_type: "audio" | "image";
  media_type: string;
  byte_size: number;
  model: string | null;
  file_id: string | null;
  created_at: string;
  completed_at: string | null;
}

export interface ArtifactRow {
  id: string;
  owner_id: string;
  kind: string;
  title: string;
  media_type: string;
  model: string | null;
  source_ids: string; // JSON array
  file_id: string | null;
  created_at: string;
  content: string;
}

export interface EmbeddingRow {
  file_id: string;
  model: string;
  version_number: number;
  content_hash: string;
  created_at: string;
  vector: string; // JSON array of numbers
}

/** PostgreSQL returns BIGINT columns as strings: make these keys numbers again. */
function num<T extends object>(row: T | undefined, ...keys: (keyof T)[]): T | undefined {
  if (!row) return row;
  const r = row as Record<keyof T, unknown>;
  for (const k of keys) if (r[k] !== null && r[k] !== undefined) r[k] = Number(r[k]);
  return row;
}

export class AiUsageRepo {
  private readonly sql: Sql;
  constructor(sql: Sql) {
    this.sql = sql;
  }

  async get(accountId: string, day: string): Promise<AiUsageRow> {
    const row = await this.sql.get<AiUsageRow>("SELECT * FROM ai_usage WHERE account_id = ? AND day = ?", [
      accountId,
      day,
    ]);
    return num(row, "requests", "tokens") ?? { account_id: accountId, day, requests: 0, tokens: 0 };
  }

  async add(accountId: string, day: string, requests: number, tokens: number): Promise<AiUsageRow> {
    const row = await this.sql.get<AiUsageRow>(
      `INSERT INTO ai_usage (account_id, day, requests, tokens) VALUES (?, ?, ?, ?)
       ON CONFLICT (account_id, day) DO UPDATE SET requests = ai_usage.requests + excluded.requests,
         tokens = ai_usage.tokens + excluded.tokens
       RETURNING account_id, day, requests, tokens`,
      [accountId, day, requests, tokens],
    );
    return num(row, "requests", "tokens")!;
  }

  purgeBefore(day: string) {
    return this.sql.run("DELETE FROM ai_usage WHERE day < ?", [day]);
  }
}

export class IdeationRepo {
  private readonly sql: Sql;
  constructor(sql: Sql) {
    this.sql = sql;
  }

  async get(fileId: string): Promise<IdeationRow | undefined> {
    return num(
      await this.sql.get<IdeationRow>("SELECT * FROM ideation_records WHERE file_id = ?", [fileId]),
      "grow_count",
    );
  }

  put(row: IdeationRow) {
    return this.sql.run(
      `INSERT INTO ideation_records (file_id, owner_id, created_by, created_at, grown_at, grow_count, history)
       VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (file_id) DO UPDATE SET grown_at = excluded.grown_at, grow_count = excluded.grow_count,
         history = excluded.history`,
      [row.file_id, row.owner_id, row.created_by, row.created_at, row.grown_at, row.grow_count, row.history],
    );
  }

  async recent(ownerId: string, limit: number): Promise<IdeationRow[]> {
    const rows = await this.sql.all<IdeationRow>(
      `SELECT * FROM ideation_records WHERE owner_id = ? ORDER BY COALESCE(grown_at, created_at) DESC, file_id LIMIT ${Math.floor(limit)}`,
      [ownerId],
    );
    return rows.map((r) => num(r, "grow_count")!);
  }
}

export class ProposalRepo {
  private readonly sql: Sql;
  constructor(sql: Sql) {
    this.sql = sql;
  }

  insert(row: ProposalRow) {
    return this.sql.run(
      `INSERT INTO ai_proposals (id, owner_id, analysis_id, kind, target_type, target_id, base_etag, status, reason,
         created_at, reviewed_at, reviewed_by, proposed, current) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        row.id,
        row.owner_id,
        row.analysis_id,
        row.kind,
        row.target_type,
        row.target_id,
        row.base_etag,
        row.status,
        row.reason,
        row.created_at,
        row.reviewed_at,
        row.reviewed_by,
        row.proposed,
        row.current,
      ],
    );
  }

  byId(id: string): Promise<ProposalRow | undefined> {
    return this.sql.get("SELECT * FROM ai_proposals WHERE id = ?", [id]);
  }

  list(ownerId: string, status: string | undefined, limit: number): Promise<ProposalRow[]> {
    return status
      ? this.sql.all(
          `SELECT * FROM ai_proposals WHERE owner_id = ? AND status = ? ORDER BY created_at DESC, id LIMIT ${Math.floor(limit)}`,
          [ownerId, status],
        )
      : this.sql.all(
          `SELECT * FROM ai_proposals WHERE owner_id = ? ORDER BY created_at DESC, id LIMIT ${Math.floor(limit)}`,
          [ownerId],
        );
  }

  review(id: string, status: "accepted" | "rejected", by: string, at: string) {
    return this.sql.run(
      "UPDATE ai_proposals SET status = ?, reviewed_by = ?, reviewed_at = ? WHERE id = ? AND status = 'pending'",
      [status, by, at, id],
    );
  }
}

export class TranscriptionRepo {
  private readonly sql: Sql;
  constructor(sql: Sql) {
    this.sql = sql;
  }

  insert(row: TranscriptionRow) {
    return this.sql.run(
      `INSERT INTO transcriptions (id, owner_id, status, source_type, media_type, byte_size, model, file_id, created_at,
         completed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        row.id,
        row.owner_id,
        row.status,
        row.source_type,
        row.media_type,
        row.byte_size,
        row.model,
        row.file_id,
        row.created_at,
        row.completed_at,
      ],
    );
  }

  async byId(id: string): Promise<TranscriptionRow | undefined> {
    return num(
      await this.sql.get<TranscriptionRow>("SELECT * FROM transcriptions WHERE id = ?", [id]),
      "byte_size",
    );
  }

  async list(ownerId: string, limit: number): Promise<TranscriptionRow[]> {
    const rows = await this.sql.all<TranscriptionRow>(
      `SELECT * FROM transcriptions WHERE owner_id = ? ORDER BY created_at DESC, id LIMIT ${Math.floor(limit)}`,
      [ownerId],
    );
    return rows.map((r) => num(r, "byte_size")!);
  }
}

export class ArtifactRepo {
  private readonly sql: Sql;
  constructor(sql: Sql) {
    this.sql = sql;
  }

  insert(row: ArtifactRow) {
    return this.sql.run(
      `INSERT INTO artifacts (id, owner_id, kind, title, media_type, model, source_ids, file_id, created_at, content)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        row.id,
        row.owner_id,
        row.kind,
        row.title,
        row.media_type,
        row.model,
        row.source_ids,
        row.file_id,
        row.created_at,
        row.content,
      ],
    );
  }

  byId(id: string): Promise<ArtifactRow | undefined> {
    return this.sql.get("SELECT * FROM artifacts WHERE id = ?", [id]);
  }

  list(ownerId: string, limit: number): Promise<ArtifactRow[]> {
    return this.sql.all(
      `SELECT * FROM artifacts WHERE owner_id = ? ORDER BY created_at DESC, id LIMIT ${Math.floor(limit)}`,
      [ownerId],
    );
  }
}

export class EmbeddingRepo {
  private readonly sql: Sql;
  constructor(sql: Sql) {
    this.sql = sql;
  }

  async forFiles(fileIds: readonly string[], model: string): Promise<EmbeddingRow[]> {
    if (fileIds.length === 0) return [];
    const rows = await this.sql.all<EmbeddingRow>(
      `SELECT * FROM note_embeddings WHERE model = ? AND file_id IN (${fileIds.map(() => "?").join(",")})`,
      [model, ...fileIds],
    );
    return rows.map((r) => num(r, "version_number")!);
  }

  /** The model a note has a vector from (the newest), if any. */
  async modelOf(fileId: string): Promise<string | undefined> {
    const row = await this.sql.get<{ model: string }>(
      "SELECT model FROM note_embeddings WHERE file_id = ? ORDER BY created_at DESC LIMIT 1",
      [fileId],
    );
    return row?.model;
  }

  /** Current vectors (matching the note's content) of every note the filter sees. */
  async visible(filter: FileListFilter, model: string): Promise<Pick<EmbeddingRow, "file_id" | "vector">[]> {
    const { where, params } = accessWhere(filter);
    return this.sql.all(
      `SELECT e.file_id, e.vector FROM note_embeddings e JOIN files ON files.id = e.file_id
       WHERE e.model = ? AND e.content_hash = files.content_hash AND ${where.join(" AND ")}`,
      [model, ...params],
    );
  }

  put(row: EmbeddingRow) {
    return this.sql.run(
      `INSERT INTO note_embeddings (file_id, model, version_number, content_hash, created_at, vector)
       VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (file_id, model) DO UPDATE SET version_number = excluded.version_number,
         content_hash = excluded.content_hash, created_at = excluded.created_at, vector = excluded.vector`,
      [row.file_id, row.model, row.version_number, row.content_hash, row.created_at, row.vector],
    );
  }
}

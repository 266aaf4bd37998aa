// Semantic relatedness from the configured provider's embedding model: one vector per note version,
// kept in the store (recomputed only when the note's content changes). No model runs in-process.
import { nowIso } from "../../../lib/time.ts";
import type { EmbeddingRow } from "../../../store/repos/brain.ts";
import type { FileRow } from "../../../store/repos/rows.ts";
import type { Tx } from "../../../store/store.ts";
import type { AiProvider } from "./provider.ts";

export function cosine(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na && nb ? dot / Math.sqrt(na * nb) : 0;
}

const embedText = (f: FileRow) => `${f.name}\n${f.context}\n${f.content}`.slice(0, 8000);

export interface SemanticRanking {
  /** File id -> cosine similarity to the query. */
  similarity: Map<string, number>;
  /** Vectors computed now, to keep (written with the operation's result). */
  fresh: EmbeddingRow[];
  tokens: number;
}

export async function loadEmbeddings(tx: Tx, model: string, files: readonly FileRow[]) {
  const rows = await tx.embeddings.forFiles(
    files.map((f) => f.id),
    model,
  );
  return new Map(rows.map((r) => [r.file_id, r]));
}

/** Ranks `files` by meaning against `query`, embedding only notes whose stored vector is stale. */
export async function semanticRanking(
  provider: AiProvider,
  query: string,
  files: readonly FileRow[],
  stored: ReadonlyMap<string, EmbeddingRow>,
): Promise<SemanticRanking> {
  const model = provider.embeddingModel!;
  const stale = files.filter((f) => stored.get(f.id)?.content_hash !== f.content_hash);
  const answer = await provider.embed([query, ...stale.map(embedText)]);
  const [queryVector, ...vectors] = answer.vectors;
  const fresh: EmbeddingRow[] = stale.map((f, i) => ({
    file_id: f.id,
    model,
    version_number: f.version_number,
    content_hash: f.content_hash,
    created_at: nowIso(),
    vector: JSON.stringify(vectors[i]),
  }));
  const vectorOf = new Map<string, number[]>();
  for (const [id, row] of stored) vectorOf.set(id, JSON.parse(row.vector) as number[]);
  for (const row of fresh) vectorOf.set(row.file_id, JSON.parse(row.vector) as number[]);
  const similarity = new Map<string, number>();
  for (const f of files) {
    const v = vectorOf.get(f.id);
    if (v && queryVector) similarity.set(f.id, cosine(queryVector, v));
  }
  return { similarity, fresh, tokens: answer.usage.tokens };
}

/** Stores fresh vectors unless the note changed meanwhile (then its next AI use recomputes it). */
export async function keepEmbeddings(tx: Tx, rows: readonly EmbeddingRow[]): Promise<void> {
  for (const row of rows) {
    const meta = await tx.files.metaById(row.file_id);
    if (meta && meta.content_hash === row.content_hash) await tx.embeddings.put(row);
  }
}

// Related files: explicit connections a client made, plus ones inferred from shared tags and folders.
import { nowIso } from "../../lib/time.ts";
import type { FileMetaRow } from "../../store/repos/rows.ts";
import type { Tx } from "../../store/store.ts";
import { loadScope, requireFile, roleInScope, visibleTo } from "./access.ts";
import type { Actor } from "./actor.ts";
import { cosine } from "./brain/semantic.ts";
import { salientTerms } from "./brain/terms.ts";
import { invalid, ServiceError } from "./errors.ts";
import { checkMaxChars, LIMITS } from "./limits.ts";
import { parseTags, toTxtFile } from "./records.ts";

export type ConnectionReason =
  | { type: "explicit"; reason: string; createdAt: string; updatedAt: string }
  | { type: "shared_tags"; tags: string[] }
  | { type: "same_folder"; folderId: string }
  /** Full-text ranking (FTS5 bm25 / ts_rank) over the note's salient words; no model involved. */
  | { type: "similar_text"; score: number }
  /** Cosine similarity of stored embeddings (present once the AI provider has embedded both notes). */
  | { type: "similar_meaning"; similarity: number };

// Ranking weights: a person's explicit link beats any inference; each shared tag counts, a shared
// folder a little. Documented in the README. The explicit weight exceeds the most any inference can
// score (every tag shared and the same folder), so an explicit link always ranks first.
// Similar text adds up to 2 (the best match) and similar meaning up to 2 (identical vectors).
const INFERRED = { tag: 2, folder: 1, text: 2, meaning: 2 } as const;
const WEIGHT = {
  ...INFERRED,
  explicit: INFERRED.tag * LIMITS.tags + INFERRED.folder + INFERRED.text + INFERRED.meaning + 1,
} as const;
const TEXT_CANDIDATES = 20;
const MEANING_THRESHOLD = 0.5;
const MAX_RESULTS = 50;

async function visibleTarget(tx: Tx, actor: Actor, targetId: string) {
  try {
    return (await requireFile(tx, actor, targetId, "reader")).file;
  } catch (err) {
    if (err instanceof ServiceError && err.status === 404) {
      throw new ServiceError(
        404,
        "not_found",
        `targetFileId: no file ${targetId} is visible to you.`,
        "Pass the id of a file you can read.",
      );
    }
    throw err;
  }
}

export async function connectFiles(
  tx: Tx,
  actor: Actor,
  id: string,
  body: { targetFileId: string; reason?: string },
) {
  const { file } = await requireFile(tx, actor, id, "writer");
  if (body.targetFileId === id) throw invalid("targetFileId", "a file cannot be connected to itself");
  const reason = checkMaxChars("reason", body.reason ?? "", LIMITS.reasonChars);
  await visibleTarget(tx, actor, body.targetFileId);
  const now = nowIso();
  const existing = await tx.connections.between(file.id, body.targetFileId);
  if (existing) {
    if (body.reason !== undefined && existing.reason !== reason) {
      await tx.connections.updateReason({ ...existing, reason, updated_at: now });
      existing.reason = reason;
      existing.updated_at = now;
    }
    return { connection: present(existing, id), created: false };
  }
  const row = {
    file_id: id,
    target_file_id: body.targetFileId,
    reason,
    created_by: actor.userId,
    created_at: now,
    updated_at: now,
  };
  await tx.connections.insert(row);
  return { connection: present(row, id), created: true };
}

export async function disconnectFiles(tx: Tx, actor: Actor, id: string, targetFileId: string) {
  await requireFile(tx, actor, id, "writer");
  // Idempotent: removing a connection that is not there reports removed: false.
  const removed = (await tx.connections.deleteBetween(id, targetFileId)).changes > 0;
  return { fileId: id, targetFileId, removed };
}

function present(
  row: { file_id: string; target_file_id: string; reason: string; created_at: string; updated_at: string },
  from: string,
) {
  return {
    fileId: from,
    targetFileId: row.file_id === from ? row.target_file_id : row.file_id,
    reason: row.reason,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** Ranked related files, each with every reason it is related (explicit and inferred). */
export async function relatedFiles(tx: Tx, actor: Actor, id: string) {
  const { file } = await requireFile(tx, actor, id, "reader");
  const scope = await loadScope(tx, actor);
  const candidates = (await tx.files.list({
    ...visibleTo(scope),
  })) as FileMetaRow[];
  const byId = new Map(candidates.map((c) => [c.id, c]));
  const related = new Map<string, { score: number; reasons: ConnectionReason[] }>();
  const add = (otherId: string, score: number, reason: ConnectionReason) => {
    const entry = related.get(otherId) ?? { score: 0, reasons: [] };
    entry.score += score;
    entry.reasons.push(reason);
    related.set(otherId, entry);
  };
  for (const c of await tx.connections.forFile(id)) {
    const other = c.file_id === id ? c.target_file_id : c.file_id;
    if (byId.has(other)) {
      add(other, WEIGHT.explicit, {
        type: "explicit",
        reason: c.reason,
        createdAt: c.created_at,
        updatedAt: c.updated_at,
      });
    }
  }
  const tags = new Set(parseTags(file.tags));
  for (const other of candidates) {
    if (other.id === id) continue;
    const shared = tags.size ? parseTags(other.tags).filter((t) => tags.has(t)) : [];
    if (shared.length) add(other.id, WEIGHT.tag * shared.length, { type: "shared_tags", tags: shared });
    if (file.folder_id && other.folder_id === file.folder_id)
      add(other.id, WEIGHT.folder, { type: "same_folder", folderId: file.folder_id });
  }
  const terms = salientTerms(
    `${file.name}\n${file.context}\n${parseTags(file.tags).join(" ")}\n${file.content}`,
  );
  if (terms.length) {
    const hits = await tx.search.search(visibleTo(scope), {
      terms,
      match: "any",
      limit: TEXT_CANDIDATES,
      excludeIds: [id],
    });
    hits.forEach((h, i) => {
      if (byId.has(h.id)) {
        add(h.id, WEIGHT.text * (1 - i / hits.length), {
          type: "similar_text",
          score: Math.round(h.score * 1000) / 1000,
        });
      }
    });
  }
  const model = await tx.embeddings.modelOf(id);
  if (model) {
    const vectors = await tx.embeddings.visible(visibleTo(scope), model);
    const own = vectors.find((v) => v.file_id === id);
    if (own) {
      const mine = JSON.parse(own.vector) as number[];
      for (const v of vectors) {
        if (v.file_id === id || !byId.has(v.file_id)) continue;
        const similarity = cosine(mine, JSON.parse(v.vector) as number[]);
        if (similarity >= MEANING_THRESHOLD) {
          add(v.file_id, WEIGHT.meaning * similarity, {
            type: "similar_meaning",
            similarity: Math.round(similarity * 1000) / 1000,
          });
        }
      }
    }
  }
  const ranked = [...related.entries()]
    .sort((a, b) => b[1].score - a[1].score || (a[0] < b[0] ? -1 : 1))
    .slice(0, MAX_RESULTS);
  return {
    fileId: id,
    connections: ranked.map(([otherId, r]) => {
      const row = byId.get(otherId)!;
      return {
        file: toTxtFile(row, roleInScope(scope, row) ?? "reader"),
        score: Math.round(r.score * 1000) / 1000,
        reasons: r.reasons,
      };
    }),
  };
}

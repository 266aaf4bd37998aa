// Explicit connections a client makes between two notes (related notes, which rank them beside
// inferred ones, are related.ts).
import { nowIso } from "../../lib/time.ts";
import type { Tx } from "../../store/store.ts";
import { requireFile } from "./access.ts";
import type { Actor } from "./actor.ts";
import { invalid, ServiceError } from "./errors.ts";
import { checkMaxChars, LIMITS } from "./limits.ts";

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

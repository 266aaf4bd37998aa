// Sync: one round trip "push, then pull" for full clients (CouchDB replication, Dropbox's conflicted
// copies). The client sends its feed cursor and its local changes, each with the ETag it was based
// on; every change is applied on its own (a savepoint each), a change whose base is stale is never
// applied over the remote one but reported as a conflict (and, with onConflict "copy", saved beside
// it as a conflicted copy); then the remote changes since the cursor come back, minus the echoes of
// this call's own writes.
import type { Tx } from "../../store/store.ts";
import type { Actor } from "./actor.ts";
import type { AttachmentLimits } from "./attachments/rules.ts";
import {
  applyOperation,
  type BatchOperation,
  checkBatchSize,
  errorOf,
  type OperationResult,
  type Refs,
} from "./batch.ts";
import { requireDevice } from "./devices.ts";
import { ServiceError } from "./errors.ts";
import { parseCursor, readChanges } from "./feed.ts";
import { createFile } from "./files.ts";
import { LIMITS } from "./limits.ts";
import { toTxtFile } from "./records.ts";

export interface SyncPush extends Omit<BatchOperation, "ifMatch"> {
  baseEtag?: string;
  onConflict?: "fail" | "copy";
}

export interface SyncRequest {
  deviceId?: string;
  cursor: number | string;
  limit?: number;
  push?: SyncPush[];
  /** `attachments`: the pulled changes include their records (an extension of the spec). */
  include?: "attachments";
}

export interface PushResult extends OperationResult {
  conflict?: {
    reason: "changed_remotely" | "deleted_remotely";
    currentEtag?: string;
    copy?: { id: string; name: string; etag: string };
  };
}

/**
 * `note.md` -> `note (conflicted copy laptop 2026-11-23 041205).md` (Dropbox's convention, to the
 * second); `attempt` > 1 adds a counter (`... 041205 2).md`) for copies made in the same second.
 */
export function conflictCopyName(name: string, device: string, at = new Date(), attempt = 1): string {
  const stamp = at.toISOString().slice(0, 19).replace("T", " ").replace(/:/g, "");
  const dot = name.lastIndexOf(".");
  const [base, ext] = dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, ""];
  const counter = attempt > 1 ? ` ${attempt}` : "";
  const label = `conflicted copy ${device.replace(/[/\0]/g, "_").slice(0, 40)} ${stamp}${counter}`.trim();
  return `${base.slice(0, 255 - ext.length - label.length - 3 - 8)} (${label})${ext}`;
}

/** The first conflict-copy name not taken in the folder: copies never share a name. */
async function freeConflictName(
  tx: Tx,
  actor: Actor,
  name: string,
  device: string,
  folderId: string | null,
): Promise<string> {
  const rows = folderId
    ? await tx.files.inFolders([folderId], false)
    : await tx.files.list({ ownerId: actor.userId, folderId: null });
  const taken = new Set(rows.map((r) => r.name));
  const at = new Date();
  for (let attempt = 1; ; attempt++) {
    const candidate = conflictCopyName(name, device, at, attempt);
    if (!taken.has(candidate)) return candidate;
  }
}

async function saveConflictCopy(
  tx: Tx,
  actor: Actor,
  item: SyncPush,
  deviceName: string,
  remote?: { name: string; folderId: string | null },
) {
  const body = item.body ?? {};
  const name = (body.name as string | undefined) ?? remote?.name;
  if (!name) return undefined;
  const folderId = remote ? remote.folderId : ((body.folderId as string | null | undefined) ?? null);
  const r = await createFile(tx, actor, {
    name: await freeConflictName(tx, actor, name, deviceName, folderId),
    content: body.content as string | undefined,
    context: body.context as string | undefined,
    tags: body.tags as string[] | undefined,
    folderId,
  });
  return r;
}

export async function sync(tx: Tx, actor: Actor, req: SyncRequest, limits: AttachmentLimits) {
  const parsed = parseCursor(String(req.cursor));
  // A bad or expired cursor fails the whole call before anything is pushed (400 / 410).
  const head = await readChanges(tx, actor, parsed, 1);
  const cursor = parsed === "latest" ? head.cursor : parsed;
  const device = req.deviceId ? await requireDevice(tx, actor, req.deviceId) : undefined;
  const push = req.push ?? [];
  checkBatchSize(push.length, LIMITS.syncPush, "The sync push");
  const refs: Refs = new Map();
  const results: PushResult[] = [];
  const own = new Set<number>();
  for (const [index, item] of push.entries()) {
    const id = item.id ?? String(index);
    if (refs.has(id)) {
      throw new ServiceError(
        400,
        "validation_failed",
        `push[${index}].id: "${id}" is used twice.`,
        "Give every pushed change a distinct id.",
        [{ field: `push[${index}].id`, code: "duplicate", message: "duplicate id" }],
      );
    }
    const op: BatchOperation = {
      id,
      op: item.op,
      target: item.target,
      body: item.body,
      ifMatch: item.baseEtag,
    };
    try {
      const r = await tx.savepoint(() => applyOperation(tx, actor, op, refs, limits));
      refs.set(id, r.itemId ?? null);
      if (r.seq !== undefined) own.add(r.seq);
      results.push({ id, index, op: item.op, ...r });
    } catch (err) {
      const { status, ...error } = errorOf(err);
      refs.set(id, null);
      const isFile =
        item.op === "file.update" ||
        item.op === "file.append" ||
        item.op === "file.delete" ||
        item.op === "attachment.update" ||
        item.op === "attachment.delete";
      const stale = isFile && status === 412;
      const gone = isFile && status === 404 && typeof item.target === "string";
      if (!stale && !gone) {
        results.push({ id, index, op: item.op, status, error });
        continue;
      }
      // A conflict: the remote side changed (or deleted) what this change was based on.
      const currentEtag = stale
        ? ((error.details as { currentEtag?: string } | undefined)?.currentEtag ?? undefined)
        : undefined;
      const result: PushResult = {
        id,
        index,
        op: item.op,
        status: 409,
        error: {
          code: "conflict",
          message: stale
            ? `${item.target}: changed remotely since ${item.baseEtag}; this change was not applied over it.`
            : `${item.target}: deleted remotely; this change was not applied.`,
          resolution: stale
            ? "Fetch the current version, merge your change into it and push again with its ETag."
            : "The file is gone: create it again (file.create) to keep your text.",
        },
        conflict: {
          reason: stale ? "changed_remotely" : "deleted_remotely",
          ...(currentEtag ? { currentEtag } : {}),
        },
      };
      if (item.onConflict === "copy" && item.op === "file.update") {
        const remote = stale ? await tx.files.metaById(item.target as string) : undefined;
        const copy = await tx
          .savepoint(() =>
            saveConflictCopy(
              tx,
              actor,
              item,
              device?.name ?? "sync",
              remote ? { name: remote.name, folderId: remote.folder_id } : undefined,
            ),
          )
          .catch(() => undefined);
        // The resolution says what happened: a client that believes it must not lose the edit.
        if (copy) {
          if (copy.seq !== undefined) own.add(copy.seq);
          result.conflict!.copy = { id: copy.file.id, name: copy.file.name, etag: copy.file.etag };
          result.body = { file: toTxtFile(copy.file, copy.role) };
          result.error!.resolution = `Your version was saved as a conflicted copy beside it (${copy.file.name}); merge them and delete the copy.`;
        } else {
          result.error!.resolution = stale
            ? "No conflicted copy could be made; your change is not on the service. Fetch the current version, merge your change into it and push again with its ETag."
            : "No conflicted copy could be made: the file is gone and this change does not carry its name. Push it again as file.create (or with body.name) to keep your text.";
        }
      }
      results.push(result);
    }
  }
  const page = await readChanges(tx, actor, cursor, req.limit ?? LIMITS.pageDefault, {
    attachments: req.include === "attachments",
  });
  const changes = page.changes.filter((c) => !own.has(c.seq));
  if (device) await tx.devices.touch(device.id, new Date().toISOString(), page.cursor);
  return {
    pushResults: results,
    conflicts: results.filter((r) => r.conflict).length,
    changes,
    cursor: page.cursor,
    hasMore: page.hasMore,
  };
}

// Batch writes: an ordered list of operations applied in one transaction, all or nothing by
// default (JSON:API atomic operations, Google Docs batchUpdate), with per-operation results. Each
// operation runs the same domain function as its single-request endpoint, so every rule holds.
import type { Tx } from "../../store/store.ts";
import type { Actor } from "./actor.ts";
import { type AttachmentOpName, applyAttachmentOperation } from "./attachments/operations.ts";
import type { AttachmentLimits } from "./attachments/rules.ts";
import { connectFiles, disconnectFiles } from "./connections.ts";
import { ServiceError } from "./errors.ts";
import {
  appendToFile,
  createFile,
  deleteFile,
  type FileCreateInput,
  type FilePatch,
  type IfMatch,
  updateFile,
} from "./files.ts";
import {
  createFolder,
  deleteFolder,
  type FolderCreateInput,
  type FolderPatch,
  updateFolder,
} from "./folders.ts";
import { LIMITS } from "./limits.ts";
import { toTxtFile, toTxtFolder } from "./records.ts";

export type BatchOpName =
  | "file.create"
  | "file.update"
  | "file.append"
  | "file.delete"
  | "folder.create"
  | "folder.update"
  | "folder.delete"
  | "connection.create"
  | "connection.delete"
  | AttachmentOpName;

export type IdOrRef = string | { ref: string };

export interface BatchOperation {
  id?: string;
  op: BatchOpName;
  target?: IdOrRef;
  ifMatch?: string;
  body?: Record<string, unknown>;
}

export interface OperationResult {
  id: string;
  index: number;
  op: BatchOpName;
  status: number;
  /** The created, changed or deleted item's id. */
  itemId?: string;
  etag?: string;
  seq?: number;
  body?: unknown;
  error?: { code: string; message: string; resolution: string; details?: unknown };
}

/** Operation id -> the id of the item it created or acted on (for `{"ref": ...}`); null = it failed. */
export type Refs = Map<string, string | null>;

const SCOPE: Record<BatchOpName, string> = {
  "file.create": "files:write",
  "file.update": "files:write",
  "file.append": "files:write",
  "file.delete": "files:write",
  "folder.create": "folders:write",
  "folder.update": "folders:write",
  "folder.delete": "folders:write",
  "connection.create": "files:write",
  "connection.delete": "files:write",
  "attachment.create": "files:write",
  "attachment.update": "files:write",
  "attachment.delete": "files:write",
};

/** A file operation's result: the file's id, ETag and record. */
const fileResult = (status: number, r: Awaited<ReturnType<typeof updateFile>>) => ({
  status,
  itemId: r.file.id,
  etag: r.file.etag,
  seq: r.seq,
  body: { file: toTxtFile(r.file, r.role) },
});

export const failedDependency = (ref: string) =>
  new ServiceError(
    424,
    "failed_dependency",
    `The operation it refers to ({"ref": "${ref}"}) failed, so this one was not attempted.`,
    "Fix the operation it depends on and send both again.",
  );

function resolve(value: IdOrRef, refs: Refs, field: string): string {
  if (typeof value === "string") return value;
  if (!refs.has(value.ref)) {
    throw new ServiceError(
      400,
      "validation_failed",
      `${field}: {"ref": "${value.ref}"} names no earlier operation of this request.`,
      "A ref must be the `id` of an operation placed before this one.",
      [{ field, code: "invalid_ref", message: `unknown ref ${value.ref}` }],
    );
  }
  const id = refs.get(value.ref);
  if (id === null || id === undefined) throw failedDependency(value.ref);
  return id;
}

function parseOpIfMatch(raw: string | undefined): IfMatch | undefined {
  if (raw === undefined) return undefined;
  const trimmed = raw.trim();
  if (trimmed === "*") return "*";
  return trimmed
    .split(",")
    .map((t) => t.trim())
    .filter(Boolean);
}

function requireTarget(op: BatchOperation, refs: Refs): string {
  if (op.target === undefined) {
    throw new ServiceError(
      400,
      "validation_failed",
      `target: ${op.op} needs the id (or {"ref"}) of the item it acts on.`,
      "Add `target` to the operation.",
      [{ field: "target", code: "required", message: "target is required" }],
    );
  }
  return resolve(op.target, refs, "target");
}

/** Resolves `{"ref"}` in the fields that hold ids. */
function resolveBody(body: Record<string, unknown>, refs: Refs): Record<string, unknown> {
  const out: Record<string, unknown> = { ...body };
  for (const field of ["folderId", "parentFolderId", "targetFileId"]) {
    const v = out[field];
    if (v !== undefined && v !== null) out[field] = resolve(v as IdOrRef, refs, `body.${field}`);
  }
  return out;
}

/** Applies one operation with its single-request domain function; throws its ServiceError. */
export async function applyOperation(
  tx: Tx,
  actor: Actor,
  op: BatchOperation,
  refs: Refs,
  limits: AttachmentLimits,
): Promise<Omit<OperationResult, "id" | "index" | "op">> {
  const scope = SCOPE[op.op];
  if (!actor.scopes.has(scope)) {
    throw new ServiceError(
      403,
      "insufficient_scope",
      `${op.op} needs the ${scope} scope, which your key does not have.`,
      `Use a key with the ${scope} scope (keys' scopes are fixed when minted).`,
      { requiredScopes: [scope] },
    );
  }
  if (op.ifMatch !== undefined && !op.op.startsWith("file.") && !op.op.startsWith("attachment.")) {
    throw new ServiceError(
      400,
      "validation_failed",
      `ifMatch: only file operations carry entity tags (${op.op} does not).`,
      "Drop ifMatch from this operation.",
      [{ field: "ifMatch", code: "invalid", message: "not allowed here" }],
    );
  }
  const body = resolveBody(op.body ?? {}, refs);
  const ifMatch = parseOpIfMatch(op.ifMatch);
  switch (op.op) {
    case "file.create": {
      if (ifMatch !== undefined)
        throw new ServiceError(
          400,
          "validation_failed",
          "ifMatch: a create has nothing to match.",
          "Drop ifMatch from file.create.",
          [{ field: "ifMatch", code: "invalid", message: "not allowed on create" }],
        );
      const r = await createFile(tx, actor, body as unknown as FileCreateInput);
      return fileResult(201, r);
    }
    case "file.update": {
      const r = await updateFile(tx, actor, requireTarget(op, refs), body as FilePatch, ifMatch);
      return fileResult(200, r);
    }
    case "file.append": {
      const tail = (body as { content: string }).content;
      const r = await appendToFile(tx, actor, requireTarget(op, refs), tail, ifMatch);
      return fileResult(200, r);
    }
    case "file.delete": {
      const r = await deleteFile(tx, actor, requireTarget(op, refs), ifMatch);
      return { status: 200, itemId: r.id, seq: r.seq, body: r };
    }
    case "folder.create": {
      const r = await createFolder(tx, actor, body as unknown as FolderCreateInput);
      return {
        status: 201,
        itemId: r.folder.id,
        seq: r.seq,
        body: { folder: toTxtFolder(r.folder, r.role, 0) },
      };
    }
    case "folder.update": {
      const r = await updateFolder(tx, actor, requireTarget(op, refs), body as FolderPatch);
      const count = (await tx.folders.fileCounts([r.folder.id])).get(r.folder.id) ?? 0;
      return {
        status: 200,
        itemId: r.folder.id,
        seq: r.seq,
        body: { folder: toTxtFolder(r.folder, r.role, count) },
      };
    }
    case "folder.delete": {
      const r = await deleteFolder(tx, actor, requireTarget(op, refs));
      return { status: 200, itemId: r.id, seq: r.seq, body: r };
    }
    case "connection.create": {
      const fileId = requireTarget(op, refs);
      const r = await connectFiles(tx, actor, fileId, body as { targetFileId: string; reason?: string });
      return { status: 200, itemId: fileId, body: r };
    }
    case "connection.delete": {
      const fileId = requireTarget(op, refs);
      const r = await disconnectFiles(tx, actor, fileId, body.targetFileId as string);
      return { status: 200, itemId: fileId, body: r };
    }
    case "attachment.create":
    case "attachment.update":
    case "attachment.delete":
      return applyAttachmentOperation(tx, actor, limits, op.op, () => requireTarget(op, refs), body, ifMatch);
  }
}

export function errorOf(err: unknown): OperationResult["error"] & { status: number } {
  if (err instanceof ServiceError) {
    return {
      status: err.status,
      code: err.code,
      message: err.message,
      resolution: err.resolution,
      ...(err.details ? { details: err.details } : {}),
    };
  }
  throw err;
}

export function checkBatchSize(count: number, max: number, what: string) {
  if (count > max) {
    throw new ServiceError(
      413,
      "payload_too_large",
      `${what} holds ${count} operations; the limit is ${max}.`,
      `Split it into requests of at most ${max} operations.`,
    );
  }
}

export interface BatchResponse {
  results: OperationResult[];
  seq: { from: number; to: number } | null;
}

/**
 * Runs the operations in order. Atomic (default): the first failure throws a ServiceError with
 * that operation's status, and the caller's transaction rolls back everything before it.
 * Non-atomic: each operation runs in its own savepoint; a failure is reported in its result and
 * operations that refer to it fail with 424.
 */
export async function runBatch(
  tx: Tx,
  actor: Actor,
  ops: readonly BatchOperation[],
  atomic: boolean,
  limits: AttachmentLimits,
): Promise<BatchResponse> {
  checkBatchSize(ops.length, LIMITS.batchOps, "The batch");
  const seen = new Set<string>();
  ops.forEach((op, index) => {
    const id = op.id ?? String(index);
    if (seen.has(id)) {
      throw new ServiceError(
        400,
        "validation_failed",
        `operations[${index}].id: "${id}" is used by an earlier operation.`,
        "Give every operation a distinct id.",
        [{ field: `operations[${index}].id`, code: "duplicate", message: "duplicate operation id" }],
      );
    }
    seen.add(id);
  });
  const refs: Refs = new Map();
  const results: OperationResult[] = [];
  for (const [index, op] of ops.entries()) {
    const id = op.id ?? String(index);
    try {
      const r = atomic
        ? await applyOperation(tx, actor, op, refs, limits)
        : await tx.savepoint(() => applyOperation(tx, actor, op, refs, limits));
      refs.set(id, r.itemId ?? null);
      results.push({ id, index, op: op.op, ...r });
    } catch (err) {
      const e = errorOf(err);
      if (atomic) {
        throw new ServiceError(
          e.status,
          e.code,
          `operations[${index}] (${id}, ${op.op}): ${e.message} Nothing in the batch was applied.`,
          e.resolution,
          [
            {
              operationId: id,
              index,
              code: e.code,
              message: e.message,
              ...(e.details && !Array.isArray(e.details) ? e.details : {}),
              ...(Array.isArray(e.details) ? { details: e.details } : {}),
            },
          ],
        );
      }
      refs.set(id, null);
      const { status, ...error } = e;
      results.push({ id, index, op: op.op, status, error });
    }
  }
  const seqs = results.flatMap((r) => (r.seq !== undefined ? [r.seq] : []));
  return {
    results,
    seq: seqs.length ? { from: Math.min(...seqs), to: Math.max(...seqs) } : null,
  };
}

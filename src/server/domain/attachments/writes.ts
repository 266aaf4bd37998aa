// Attachments: create, replace, rename/move, delete. Every change bumps the revision (and the ETag);
// every content change stores the bytes once per content (the blob store) and records a version;
// every change is published to the feed, in the same transaction.
import { newId } from "../../../lib/ids.ts";
import { nextIso, nowIso } from "../../../lib/time.ts";
import type { AttachmentRow } from "../../../store/repos/attachments.ts";
import { sha256Hex } from "../../../store/repos/blobs.ts";
import type { Role } from "../../../store/repos/rows.ts";
import type { Tx } from "../../../store/store.ts";
import { writableTarget } from "../access.ts";
import type { Actor } from "../actor.ts";
import { ServiceError } from "../errors.ts";
import { checkIfMatch, etagOf, type IfMatch } from "../files.ts";
import { LIMITS } from "../limits.ts";
import { attachmentAudience, requireAttachment } from "./access.ts";
import { contentTypeOf } from "./contentTypes.ts";
import { publishAttachment, publishAttachmentDeleted } from "./feed.ts";
import { type AttachmentLimits, checkAttachmentName, checkAttachmentSize, checkQuota } from "./rules.ts";

export interface AttachmentResult {
  row: AttachmentRow;
  role: Role;
  seq?: number;
  /** 201 for a new attachment, 200 for one replaced or changed. */
  status: 200 | 201;
}

export interface AttachmentCreateInput {
  name: string;
  folderId?: string | null;
  bytes: Buffer;
  /** `fail` (default): 409 when the name is taken; `replace`: new content for that attachment. */
  onExisting?: "fail" | "replace";
}

const nameTaken = (name: string, what: string) =>
  new ServiceError(
    409,
    "conflict",
    `name: ${JSON.stringify(name)} is taken in that folder by ${what}.`,
    what === "an attachment"
      ? "Pick another name, replace it (onExisting=replace, or PUT its /raw), or delete it first."
      : "Pick another name, or delete or rename the note first.",
  );

/** A name is one item's in its folder: another attachment or a note there holding it is a 409. */
async function checkPlaceFree(
  tx: Tx,
  ownerId: string,
  folderId: string | null,
  name: string,
  exceptId?: string,
): Promise<void> {
  const other = await tx.attachments.byPlace(ownerId, folderId, name);
  if (other && other.id !== exceptId) throw nameTaken(name, "an attachment");
  const notes = await tx.files.list({ ownerId, folderId });
  if (notes.some((n) => n.name === name)) throw nameTaken(name, "a note");
}

/** Stores the row's content as its newest version and prunes past the retention (notes' rule). */
async function recordVersion(tx: Tx, row: AttachmentRow, bytes: Buffer, actor: Actor): Promise<void> {
  await tx.blobs.put(bytes);
  await tx.attachments.insertVersion({
    id: newId("av"),
    attachment_id: row.id,
    version_number: row.version_number,
    content_hash: row.content_hash,
    byte_size: row.size,
    author_user_id: actor.userId,
    source: actor.source,
    created_at: row.updated_at,
  });
  if (row.version_number > LIMITS.versionsKept) {
    for (const old of await tx.attachments.versionsUpTo(row.id, row.version_number - LIMITS.versionsKept)) {
      await tx.attachments.deleteVersion(old.id);
      await tx.blobs.release(old.content_hash);
    }
  }
}

export async function createAttachment(
  tx: Tx,
  actor: Actor,
  limits: AttachmentLimits,
  input: AttachmentCreateInput,
): Promise<AttachmentResult> {
  const name = await checkAttachmentName("name", input.name, () => input.bytes);
  checkAttachmentSize(limits, input.bytes.length);
  const target = await writableTarget(tx, actor, input.folderId);
  const existing = await tx.attachments.byPlace(target.ownerId, target.folderId, name);
  if (existing) {
    if (input.onExisting !== "replace") throw nameTaken(name, "an attachment");
    const replaced = await replaceAttachment(tx, actor, limits, existing.id, input.bytes);
    return { ...replaced, status: 200 };
  }
  await checkPlaceFree(tx, target.ownerId, target.folderId, name);
  checkQuota(limits, await tx.attachments.bytesOwned(target.ownerId), input.bytes.length);
  const now = nowIso();
  const hash = sha256Hex(input.bytes);
  const row: AttachmentRow = {
    id: newId("a"),
    owner_id: target.ownerId,
    folder_id: target.folderId,
    name,
    content_type: contentTypeOf(name),
    size: input.bytes.length,
    content_hash: hash,
    revision: 1,
    version_number: 1,
    etag: etagOf(1, hash),
    created_at: now,
    updated_at: now,
  };
  await tx.attachments.insert(row);
  await recordVersion(tx, row, input.bytes, actor);
  const seqs = await publishAttachment(tx, row);
  const role = target.ownerId === actor.userId ? "owner" : target.role;
  return { row, role, seq: seqs.get(actor.userId), status: 201 };
}

/** New bytes for an attachment (any bytes: an attachment stays one, whatever it holds next). */
export async function replaceAttachment(
  tx: Tx,
  actor: Actor,
  limits: AttachmentLimits,
  id: string,
  bytes: Buffer,
  ifMatch?: IfMatch,
): Promise<AttachmentResult> {
  const { row, role } = await requireAttachment(tx, actor, id, "writer");
  checkIfMatch(ifMatch, row.etag);
  checkAttachmentSize(limits, bytes.length);
  const hash = sha256Hex(bytes);
  if (hash === row.content_hash) return { row, role, status: 200 }; // the same bytes: no new revision
  checkQuota(limits, await tx.attachments.bytesOwned(row.owner_id), bytes.length - row.size);
  const next: AttachmentRow = {
    ...row,
    size: bytes.length,
    content_hash: hash,
    revision: row.revision + 1,
    version_number: row.version_number + 1,
    etag: etagOf(row.revision + 1, hash),
    updated_at: nextIso(row.updated_at),
  };
  await tx.attachments.update(next);
  await recordVersion(tx, next, bytes, actor);
  const seqs = await publishAttachment(tx, next);
  return { row: next, role, seq: seqs.get(actor.userId), status: 200 };
}

export interface AttachmentPatch {
  name?: string;
  folderId?: string | null;
}

/** Rename and/or move: no bytes are copied (the content keeps its blob). */
export async function updateAttachment(
  tx: Tx,
  actor: Actor,
  id: string,
  patch: AttachmentPatch,
  ifMatch?: IfMatch,
): Promise<AttachmentResult> {
  const { row, role } = await requireAttachment(tx, actor, id, "writer");
  checkIfMatch(ifMatch, row.etag);
  const next: AttachmentRow = { ...row };
  if (patch.name !== undefined && patch.name !== row.name) {
    // A .md/.txt name is refused for UTF-8 content, which is then a note's.
    const bytes = async () => (await tx.blobs.get(row.content_hash)) ?? Buffer.alloc(0);
    await checkAttachmentName("name", patch.name, bytes);
    next.name = patch.name;
    next.content_type = contentTypeOf(patch.name);
  }
  if (patch.folderId !== undefined && patch.folderId !== row.folder_id) {
    const target = await writableTarget(tx, actor, patch.folderId);
    if (target.ownerId !== row.owner_id) {
      throw new ServiceError(
        403,
        "forbidden",
        "folderId: an attachment can only move between folders of its owner.",
        "Pick a folder owned by the attachment's owner, or upload a copy there.",
      );
    }
    next.folder_id = target.folderId;
  }
  if (next.name === row.name && next.folder_id === row.folder_id) return { row, role, status: 200 };
  await checkPlaceFree(tx, next.owner_id, next.folder_id, next.name, row.id);
  const before = next.folder_id !== row.folder_id ? await attachmentAudience(tx, row) : undefined;
  next.revision = row.revision + 1;
  next.etag = etagOf(next.revision, row.content_hash);
  next.updated_at = nextIso(row.updated_at);
  await tx.attachments.update(next);
  const seqs = await publishAttachment(tx, next, before);
  return { row: next, role, seq: seqs.get(actor.userId), status: 200 };
}

/** Deletes an attachment (owner only, as notes) with its history; unreferenced bytes go too. */
export async function deleteAttachment(tx: Tx, actor: Actor, id: string, ifMatch?: IfMatch) {
  const { row } = await requireAttachment(tx, actor, id, "owner");
  checkIfMatch(ifMatch, row.etag);
  const before = await attachmentAudience(tx, row);
  for (const v of await tx.attachments.versions(id)) {
    await tx.attachments.deleteVersion(v.id);
    await tx.blobs.release(v.content_hash);
  }
  await tx.attachments.delete(id);
  const seqs = await publishAttachmentDeleted(tx, id, before);
  return { id, deleted: true as const, seq: seqs.get(actor.userId) };
}

/**
 * A folder is being deleted: its attachments move up one level, as its notes do (published before
 * the folder's tombstone). A name the parent already holds keeps the attachment's id and gets
 * " (n)" before its extension, so nothing is lost. Returns the moved ids.
 */
export async function promoteAttachments(tx: Tx, folderId: string, parentId: string | null) {
  const moved: string[] = [];
  for (const row of await tx.attachments.inFolders([folderId])) {
    let name = row.name;
    for (let n = 1; await placeTaken(tx, row.owner_id, parentId, name); n++) name = numbered(row.name, n);
    const next: AttachmentRow = {
      ...row,
      folder_id: parentId,
      name,
      revision: row.revision + 1,
      etag: etagOf(row.revision + 1, row.content_hash),
      updated_at: nextIso(row.updated_at),
    };
    await tx.attachments.update(next);
    await publishAttachment(tx, next);
    moved.push(row.id);
  }
  return moved;
}

async function placeTaken(tx: Tx, ownerId: string, folderId: string | null, name: string) {
  return checkPlaceFree(tx, ownerId, folderId, name).then(
    () => false,
    () => true,
  );
}

function numbered(name: string, n: number): string {
  const dot = name.lastIndexOf(".");
  return dot > 0 ? `${name.slice(0, dot)} (${n})${name.slice(dot)}` : `${name} (${n})`;
}

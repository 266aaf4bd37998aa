// Files: create, read, update, delete, plan metadata. Every change bumps the revision (and so the
// ETag), every content change records a version, and every change is published to the feed.
import { contentHash } from "../../lib/contentHash.ts";
import { newId } from "../../lib/ids.ts";
import { nextIso, nowIso } from "../../lib/time.ts";
import type { FileRow, Role } from "../../store/repos/rows.ts";
import type { Tx } from "../../store/store.ts";
import { requireFile, writableTarget } from "./access.ts";
import type { Actor } from "./actor.ts";
import { rebaseAnchors } from "./anchors.ts";
import { refuseAttachmentName } from "./attachments/places.ts";
import { preconditionFailed, ServiceError } from "./errors.ts";
import { fileAudience, publishFile, publishFileDeleted } from "./feed.ts";
import {
  checkContent,
  checkContext,
  checkMaxChars,
  checkName,
  checkTags,
  LIMITS,
  typeFromName,
} from "./limits.ts";
import { forgetNote, indexNote } from "./links/linkIndex.ts";
import { checkTagRequest, declaredTags, setPart, shownTags } from "./links/noteTags.ts";
import { parseTags } from "./records.ts";
import { dropSharesOn } from "./shares.ts";

export type FileType = "txt" | "md";
export type Availability = "cloud" | "cloud+local";

export interface FileCreateInput {
  name: string;
  content?: string;
  context?: string;
  tags?: string[];
  fileType?: FileType;
  availability?: Availability;
  folderId?: string | null;
}

export type FilePatch = Partial<Omit<FileCreateInput, "name">> & { name?: string };

/** Parsed If-Match: the listed entity tags, or `*` (any current representation). */
export type IfMatch = readonly string[] | "*";

export interface FileResult {
  file: FileRow;
  role: Role;
  /** The actor's feed position of this change (lets a client skip its own echo). */
  seq?: number;
}

export const etagOf = (revision: number, hash: string) => `"${revision}-${hash.slice(0, 16)}"`;

/** Strong comparison (RFC 9110 §13.1.1): a weak tag never matches. */
export function checkIfMatch(ifMatch: IfMatch | undefined, etag: string): void {
  if (ifMatch === undefined || ifMatch === "*") return;
  if (!ifMatch.some((tag) => !tag.startsWith("W/") && tag === etag)) throw preconditionFailed(etag);
}

async function insertVersion(tx: Tx, file: FileRow, actor: Actor): Promise<void> {
  await tx.versions.insert({
    id: newId("v"),
    file_id: file.id,
    version_number: file.version_number,
    content_hash: file.content_hash,
    byte_size: file.size,
    author_user_id: actor.userId,
    source: actor.source,
    label: null,
    commit_id: null,
    created_at: file.updated_at,
    content: file.content,
  });
  // History is bounded: an editor that saves on every keystroke must not grow the store forever.
  if (file.version_number > LIMITS.versionsKept) {
    await tx.versions.pruneUnlabelled(file.id, file.version_number - LIMITS.versionsKept);
  }
}

export async function createFile(tx: Tx, actor: Actor, input: FileCreateInput): Promise<FileResult> {
  const name = checkName("name", input.name);
  const content = checkContent(input.content ?? "");
  const context = checkContext("context", input.context ?? "");
  const requested = checkTags("tags", input.tags ?? []);
  const type = input.fileType ?? typeFromName(name);
  const declared = type === "md" ? declaredTags(content) : [];
  const setTags = setPart(requested, declared);
  // A create carries content: never refused for its tags (noteTags.ts).
  const tags = shownTags(setTags, declared);
  const target = await writableTarget(tx, actor, input.folderId);
  await refuseAttachmentName(tx, target.ownerId, target.folderId, name);
  const now = nowIso();
  const hash = contentHash(content);
  const file: FileRow = {
    id: newId("f"),
    owner_id: target.ownerId,
    folder_id: target.folderId,
    name,
    type,
    availability: input.availability ?? "cloud+local",
    context,
    tags: JSON.stringify(tags),
    size: Buffer.byteLength(content, "utf8"),
    content_hash: hash,
    revision: 1,
    version_number: 1,
    etag: etagOf(1, hash),
    plan_enabled: 0,
    plan_scope: "manual",
    plan_trust: "unreviewed",
    plan_source: "",
    plan_updated_at: null,
    created_at: now,
    updated_at: now,
    content,
  };
  await tx.files.insert(file);
  // Without declared tags the shown ones are the set ones: no row needed (the fallback of retag).
  if (declared.length) await tx.links.putSetTags(file.id, setTags);
  await indexNote(tx, file);
  await insertVersion(tx, file, actor);
  const seqs = await publishFile(tx, file);
  return { file, role: target.ownerId === actor.userId ? "owner" : target.role, seq: seqs.get(actor.userId) };
}

export async function getFile(tx: Tx, actor: Actor, id: string): Promise<FileResult> {
  return requireFile(tx, actor, id, "reader");
}

/**
 * Adds `tail` at the end of the file's current content, whatever version that is (an extension of
 * the spec: `file.append` in batch and sync). A writer that only appends (a log, `>>`) then never
 * reads the file and never conflicts; with `ifMatch` it appends only to that version.
 */
export async function appendToFile(
  tx: Tx,
  actor: Actor,
  id: string,
  tail: string,
  ifMatch?: IfMatch,
): Promise<FileResult> {
  const { file } = await requireFile(tx, actor, id, "writer");
  checkIfMatch(ifMatch, file.etag);
  return updateFile(tx, actor, id, { content: file.content + tail }, ifMatch);
}

export async function updateFile(
  tx: Tx,
  actor: Actor,
  id: string,
  patch: FilePatch,
  ifMatch?: IfMatch,
): Promise<FileResult> {
  const { file, role } = await requireFile(tx, actor, id, "writer");
  checkIfMatch(ifMatch, file.etag);
  const next: FileRow = { ...file };
  if (patch.name !== undefined) {
    next.name = checkName("name", patch.name);
    // A rename to a .md/.txt name carries the type along unless fileType says otherwise.
    if (/\.(md|txt)$/i.test(next.name)) next.type = typeFromName(next.name);
  }
  if (patch.fileType !== undefined) next.type = patch.fileType;
  if (patch.context !== undefined) next.context = checkContext("context", patch.context);
  const requested = patch.tags !== undefined ? checkTags("tags", patch.tags) : undefined;
  if (patch.availability !== undefined) next.availability = patch.availability;
  if (patch.content !== undefined && patch.content !== file.content) {
    next.content = checkContent(patch.content);
    next.size = Buffer.byteLength(next.content, "utf8");
    next.content_hash = contentHash(next.content);
    next.version_number = file.version_number + 1;
  }
  if (patch.folderId !== undefined && patch.folderId !== file.folder_id) {
    const target = await writableTarget(tx, actor, patch.folderId);
    if (target.ownerId !== file.owner_id) {
      throw new ServiceError(
        403,
        "forbidden",
        "folderId: a file can only move between folders of its owner.",
        "Pick a folder owned by the file's owner, or copy the content into a new file there.",
      );
    }
    next.folder_id = target.folderId;
  }
  const setTags = await retag(tx, file, next, requested, patch.content !== undefined);
  const changed = (Object.keys(next) as (keyof FileRow)[]).some((k) => next[k] !== file[k]);
  if (!changed) return { file, role }; // an identical PUT makes no new revision
  if (next.name !== file.name || next.folder_id !== file.folder_id)
    await refuseAttachmentName(tx, next.owner_id, next.folder_id, next.name);
  const before = next.folder_id !== file.folder_id ? await fileAudience(tx, file) : undefined;
  next.revision = file.revision + 1;
  next.etag = etagOf(next.revision, next.content_hash);
  next.updated_at = nextIso(file.updated_at);
  await tx.files.update(next);
  if (setTags?.write) await tx.links.putSetTags(next.id, setTags.tags, setTags.needed);
  await indexNote(tx, next, file);
  if (next.version_number !== file.version_number) {
    await insertVersion(tx, next, actor);
    await rebaseAnchors(tx, file.id, file.content, next.content);
  }
  const seqs = await publishFile(tx, next, before);
  return { file: next, role, seq: seqs.get(actor.userId) };
}

/**
 * The tags `next` shows once its text or the tags asked for changed (noteTags.ts has the rule);
 * returns the set part to store (`needed`: the text declares tags, so the set part differs from
 * what shows; `write: false`: there is nothing to store), or undefined when neither changed.
 */
async function retag(
  tx: Tx,
  file: FileRow,
  next: FileRow,
  requested: string[] | undefined,
  carriesContent: boolean,
) {
  if (requested === undefined && next.content === file.content && next.type === file.type) return undefined;
  const declared = next.type === "md" ? declaredTags(next.content) : [];
  const before = parseTags(file.tags);
  // Only a note whose text declares tags has a row of set tags (createFile and this keep it so); a
  // note saved before tags were read from text has none either: all its tags were set.
  const hadRow = file.type === "md" && declaredTags(file.content).length > 0;
  const setTags =
    requested !== undefined
      ? setPart(requested, declared)
      : hadRow
        ? ((await tx.links.setTags(file.id)) ?? before)
        : before;
  const shown = shownTags(setTags, declared);
  // Only a request that changes tags alone can be refused for them: a save of content never is.
  if (requested !== undefined && !carriesContent) checkTagRequest(requested, before, shown);
  next.tags = JSON.stringify(shown);
  // Without declared tags before or after there is no row to drop, nor one to write.
  if (!hadRow && declared.length === 0) return { write: false } as const;
  return { write: true, tags: setTags, needed: declared.length > 0 } as const;
}

export async function deleteFile(tx: Tx, actor: Actor, id: string, ifMatch?: IfMatch) {
  const { file } = await requireFile(tx, actor, id, "owner");
  checkIfMatch(ifMatch, file.etag);
  const before = await fileAudience(tx, file);
  await tx.connections.deleteForFile(id);
  await tx.versions.deleteForFile(id);
  await dropSharesOn(tx, id);
  await forgetNote(tx, file);
  await tx.themes.delete("file", id);
  await tx.files.delete(id);
  const seqs = await publishFileDeleted(tx, id, before);
  return { id, deleted: true as const, seq: seqs.get(actor.userId) };
}

export interface PlanInput {
  enabled: boolean;
  scope: "manual" | "project" | "global";
  trust: "unreviewed" | "approved";
  source?: string;
}

export async function updatePlan(tx: Tx, actor: Actor, id: string, plan: PlanInput) {
  const { file, role } = await requireFile(tx, actor, id, "owner");
  const source = checkMaxChars("source", plan.source ?? file.plan_source, LIMITS.planSourceChars);
  // Plan metadata is not part of the file's representation, so its revision and ETag stay.
  const next: FileRow = {
    ...file,
    plan_enabled: plan.enabled ? 1 : 0,
    plan_scope: plan.scope,
    plan_trust: plan.trust,
    plan_source: source,
    plan_updated_at: nowIso(),
  };
  await tx.files.update(next);
  return { file: next, role };
}

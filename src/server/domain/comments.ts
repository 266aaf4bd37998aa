// Comments on a file (TxtComment): anyone who can read the file may comment, optionally on a
// selection of its text; the author edits the body; the author, a writer or the owner resolves and
// reopens; the author or the owner deletes.
import { newId } from "../../lib/ids.ts";
import { nowIso } from "../../lib/time.ts";
import type { CommentRow, Role, UserRow } from "../../store/repos/rows.ts";
import type { Tx } from "../../store/store.ts";
import { atLeast, requireFile } from "./access.ts";
import type { Actor } from "./actor.ts";
import { checkRange } from "./anchors.ts";
import { invalid, readOnly, ServiceError } from "./errors.ts";
import { publishOnFile } from "./events.ts";

export const COMMENT_MAX_CHARS = 10_000;

export interface SelectionInput {
  selection_start?: number | null;
  selection_end?: number | null;
  selected_text?: string | null;
}

export type UserLookup = (id: string) => Promise<UserRow | undefined>;

/** Looks users up once per request. */
export function userCache(tx: Tx): UserLookup {
  const seen = new Map<string, Promise<UserRow | undefined>>();
  return (id) => {
    if (!seen.has(id)) seen.set(id, tx.users.byId(id));
    return seen.get(id)!;
  };
}

export async function toTxtComment(row: CommentRow, users: UserLookup) {
  const user = await users(row.user_id);
  return {
    id: row.id,
    file_id: row.file_id,
    user_id: row.user_id,
    user_email: user?.email ?? "",
    user_name: user?.name || null,
    body: row.body,
    selection_start: row.selection_start === null ? null : Number(row.selection_start),
    selection_end: row.selection_end === null ? null : Number(row.selection_end),
    selected_text: row.selected_text,
    resolved: Number(row.resolved) === 1,
    resolved_by: row.resolved_by,
    resolved_at: row.resolved_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
    anchor_state: row.anchor_state,
    version_number: Number(row.version_number),
    endpoint: `/api/v1/files/${row.file_id}/comments/${row.id}`,
  };
}

export type TxtComment = Awaited<ReturnType<typeof toTxtComment>>;

function checkBody(body: string): string {
  if (body.trim() === "") throw invalid("body", "must not be empty");
  if ([...body].length > COMMENT_MAX_CHARS)
    throw invalid("body", `must be at most ${COMMENT_MAX_CHARS} characters`);
  return body;
}

/** Checks a selection against the text: both ends or neither; a given selected_text must match. */
export function checkSelection(content: string, input: SelectionInput, mismatchCode: string) {
  const start = input.selection_start ?? null;
  const end = input.selection_end ?? null;
  if (start === null && end === null) {
    if (input.selected_text != null)
      throw invalid("selected_text", "needs selection_start and selection_end");
    return null;
  }
  if (start === null || end === null)
    throw invalid(
      start === null ? "selection_start" : "selection_end",
      "give both ends of the selection or neither",
    );
  const text = checkRange(content, start, end);
  if (input.selected_text != null && input.selected_text !== text) {
    throw new ServiceError(
      409,
      mismatchCode,
      `The text at ${start}..${end} is ${JSON.stringify(text.slice(0, 80))}, not the selected_text you sent: the file changed since you read it.`,
      "Re-read the file (GET /api/v1/files/:id), find your selection in the current content and send its new offsets.",
      { currentText: text },
    );
  }
  return { start, end, text };
}

async function commentOnFile(tx: Tx, actor: Actor, fileId: string, commentId: string) {
  const { file, role } = await requireFile(tx, actor, fileId, "reader");
  const row = await tx.comments.byId(commentId);
  if (!row || row.file_id !== file.id) {
    throw new ServiceError(
      404,
      "not_found",
      `File ${fileId} has no comment ${commentId}.`,
      "List the file's comments with GET /api/v1/files/:id/comments.",
    );
  }
  return { file, role, row };
}

export async function listComments(tx: Tx, actor: Actor, fileId: string, opts: { resolved?: boolean }) {
  const { file } = await requireFile(tx, actor, fileId, "reader");
  const users = userCache(tx);
  const rows = (await tx.comments.listForFile(file.id)).filter(
    (r) => opts.resolved === undefined || (Number(r.resolved) === 1) === opts.resolved,
  );
  return { fileId: file.id, comments: await Promise.all(rows.map((r) => toTxtComment(r, users))) };
}

export async function getComment(tx: Tx, actor: Actor, fileId: string, commentId: string) {
  const { row } = await commentOnFile(tx, actor, fileId, commentId);
  return toTxtComment(row, userCache(tx));
}

export async function createComment(
  tx: Tx,
  actor: Actor,
  fileId: string,
  input: SelectionInput & { body: string },
) {
  const { file } = await requireFile(tx, actor, fileId, "reader");
  const body = checkBody(input.body);
  const selection = checkSelection(file.content, input, "selection_mismatch");
  const now = nowIso();
  const row: CommentRow = {
    id: newId("cm"),
    file_id: file.id,
    user_id: actor.userId,
    selection_start: selection?.start ?? null,
    selection_end: selection?.end ?? null,
    selected_text: selection?.text ?? null,
    anchor_state: "current",
    version_number: file.version_number,
    resolved: 0,
    resolved_by: null,
    resolved_at: null,
    created_at: now,
    updated_at: now,
    body,
  };
  await tx.comments.insert(row);
  const comment = await toTxtComment(row, userCache(tx));
  const seqs = await publishOnFile(tx, "comment", row.id, file, comment);
  return { comment, seq: seqs.get(actor.userId) };
}

function mayModerate(actor: Actor, row: CommentRow, role: Role) {
  return row.user_id === actor.userId || atLeast(role, "writer");
}

export async function updateComment(
  tx: Tx,
  actor: Actor,
  fileId: string,
  commentId: string,
  patch: { body?: string; resolved?: boolean },
) {
  const { file, role, row } = await commentOnFile(tx, actor, fileId, commentId);
  const next: CommentRow = { ...row };
  if (patch.body !== undefined && patch.body !== row.body) {
    if (row.user_id !== actor.userId) {
      throw new ServiceError(
        403,
        "forbidden",
        "Only the comment's author may edit its text.",
        "Reply with a new comment instead, or ask the author to edit it.",
      );
    }
    next.body = checkBody(patch.body);
  }
  if (patch.resolved !== undefined && patch.resolved !== (Number(row.resolved) === 1)) {
    if (!mayModerate(actor, row, role))
      throw readOnly("file: only the comment's author, a writer or the owner may resolve or reopen it");
    const at = nowIso();
    next.resolved = patch.resolved ? 1 : 0;
    next.resolved_by = patch.resolved ? actor.userId : null;
    next.resolved_at = patch.resolved ? at : null;
  }
  const changed = next.body !== row.body || next.resolved !== row.resolved;
  if (!changed) return { comment: await toTxtComment(row, userCache(tx)) };
  next.updated_at = nowIso();
  await tx.comments.update(next);
  const comment = await toTxtComment(next, userCache(tx));
  const seqs = await publishOnFile(tx, "comment", row.id, file, comment);
  return { comment, seq: seqs.get(actor.userId) };
}

export async function deleteComment(tx: Tx, actor: Actor, fileId: string, commentId: string) {
  const { file, role, row } = await commentOnFile(tx, actor, fileId, commentId);
  if (row.user_id !== actor.userId && role !== "owner") {
    throw new ServiceError(
      403,
      "forbidden",
      "Only the comment's author or the file's owner may delete a comment.",
      'Resolve it instead (PATCH with {"resolved": true}), or ask the author.',
    );
  }
  await tx.comments.delete(row.id);
  const seqs = await publishOnFile(tx, "comment", row.id, file, null);
  return { id: row.id, deleted: true as const, seq: seqs.get(actor.userId) };
}

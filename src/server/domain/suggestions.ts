// Suggestions (TxtSuggestion): anyone who can read a file may propose replacing a selection of its
// text; the owner or a writer accepts (one new version, only while `original_text` still stands at
// the selection) or rejects. `pending -> accepted | rejected`, both final.
import { newId } from "../../lib/ids.ts";
import { nowIso } from "../../lib/time.ts";
import type { SuggestionRow } from "../../store/repos/rows.ts";
import type { Tx } from "../../store/store.ts";
import { requireFile } from "./access.ts";
import type { Actor } from "./actor.ts";
import { checkSelection, type UserLookup, userCache } from "./comments.ts";
import { invalid, ServiceError } from "./errors.ts";
import { publishOnFile } from "./events.ts";
import { checkIfMatch, type IfMatch, updateFile } from "./files.ts";
import { checkContent } from "./limits.ts";

export async function toTxtSuggestion(row: SuggestionRow, users: UserLookup) {
  const user = await users(row.user_id);
  return {
    id: row.id,
    file_id: row.file_id,
    user_id: row.user_id,
    user_email: user?.email ?? "",
    user_name: user?.name || null,
    original_text: row.original_text,
    suggested_text: row.suggested_text,
    selection_start: Number(row.selection_start),
    selection_end: Number(row.selection_end),
    status: row.status,
    reviewed_by: row.reviewed_by,
    reviewed_at: row.reviewed_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
    anchor_state: row.anchor_state,
    version_number: Number(row.version_number),
    endpoint: `/api/v1/files/${row.file_id}/suggestions/${row.id}`,
  };
}

const stale = (row: SuggestionRow, current: string) =>
  new ServiceError(
    409,
    "suggestion_stale",
    `The text at ${row.selection_start}..${row.selection_end} is no longer the suggestion's original_text: the file changed there since it was suggested.`,
    "Reject this suggestion and suggest again against the current content (GET /api/v1/files/:id), or edit the file directly.",
    { currentText: current },
  );

async function suggestionOnFile(
  tx: Tx,
  actor: Actor,
  fileId: string,
  id: string,
  needed: "reader" | "writer",
) {
  const { file, role } = await requireFile(tx, actor, fileId, needed);
  const row = await tx.suggestions.byId(id);
  if (!row || row.file_id !== file.id) {
    throw new ServiceError(
      404,
      "not_found",
      `File ${fileId} has no suggestion ${id}.`,
      "List the file's suggestions with GET /api/v1/files/:id/suggestions.",
    );
  }
  return { file, role, row };
}

export async function listSuggestions(
  tx: Tx,
  actor: Actor,
  fileId: string,
  status?: SuggestionRow["status"],
) {
  const { file } = await requireFile(tx, actor, fileId, "reader");
  const users = userCache(tx);
  const rows = await tx.suggestions.listForFile(file.id, status);
  return { fileId: file.id, suggestions: await Promise.all(rows.map((r) => toTxtSuggestion(r, users))) };
}

export async function getSuggestion(tx: Tx, actor: Actor, fileId: string, id: string) {
  const { row } = await suggestionOnFile(tx, actor, fileId, id, "reader");
  return toTxtSuggestion(row, userCache(tx));
}

export async function createSuggestion(
  tx: Tx,
  actor: Actor,
  fileId: string,
  input: { selection_start: number; selection_end: number; suggested_text: string; original_text?: string },
) {
  const { file } = await requireFile(tx, actor, fileId, "reader");
  const selection = checkSelection(
    file.content,
    {
      selection_start: input.selection_start,
      selection_end: input.selection_end,
      selected_text: input.original_text,
    },
    "suggestion_stale",
  )!;
  checkContent(input.suggested_text);
  if (input.suggested_text === selection.text)
    throw invalid("suggested_text", "is the same as the selected text; a suggestion must change something");
  const now = nowIso();
  const row: SuggestionRow = {
    id: newId("sg"),
    file_id: file.id,
    user_id: actor.userId,
    selection_start: selection.start,
    selection_end: selection.end,
    anchor_state: "current",
    version_number: file.version_number,
    status: "pending",
    reviewed_by: null,
    reviewed_at: null,
    created_at: now,
    updated_at: now,
    original_text: selection.text,
    suggested_text: input.suggested_text,
  };
  await tx.suggestions.insert(row);
  const suggestion = await toTxtSuggestion(row, userCache(tx));
  const seqs = await publishOnFile(tx, "suggestion", row.id, file, suggestion);
  return { suggestion, seq: seqs.get(actor.userId) };
}

function requirePending(row: SuggestionRow) {
  if (row.status !== "pending") {
    throw new ServiceError(
      409,
      "suggestion_not_pending",
      `This suggestion was already ${row.status}; accepted and rejected are final.`,
      "Create a new suggestion if the change is still wanted.",
    );
  }
}

// A review, accept or reject by any path, is guarded by the file's ETag: If-Match says "only if the
// note is still the one I read", whichever way the reviewer decides.

/** Accept: the selection is replaced as one new version (source `suggestion`), atomically. */
export async function acceptSuggestion(tx: Tx, actor: Actor, fileId: string, id: string, ifMatch?: IfMatch) {
  const { file, row } = await suggestionOnFile(tx, actor, fileId, id, "writer");
  checkIfMatch(ifMatch, file.etag);
  requirePending(row);
  const start = Number(row.selection_start);
  const end = Number(row.selection_end);
  const current = file.content.slice(start, end);
  if (row.anchor_state !== "current" || current !== row.original_text) throw stale(row, current);
  const now = nowIso();
  // Marked accepted first, so the content write's rebase leaves this suggestion alone.
  const next: SuggestionRow = {
    ...row,
    status: "accepted",
    reviewed_by: actor.userId,
    reviewed_at: now,
    updated_at: now,
  };
  await tx.suggestions.update(next);
  const content = file.content.slice(0, start) + row.suggested_text + file.content.slice(end);
  const result = await updateFile(tx, { ...actor, source: "suggestion" }, file.id, { content }, ifMatch);
  const suggestion = await toTxtSuggestion(next, userCache(tx));
  const seqs = await publishOnFile(tx, "suggestion", row.id, result.file, suggestion);
  return { suggestion, file: result.file, role: result.role, seq: seqs.get(actor.userId) };
}

export async function rejectSuggestion(tx: Tx, actor: Actor, fileId: string, id: string, ifMatch?: IfMatch) {
  const { file, row } = await suggestionOnFile(tx, actor, fileId, id, "writer");
  checkIfMatch(ifMatch, file.etag);
  requirePending(row);
  const now = nowIso();
  const next: SuggestionRow = {
    ...row,
    status: "rejected",
    reviewed_by: actor.userId,
    reviewed_at: now,
    updated_at: now,
  };
  await tx.suggestions.update(next);
  const suggestion = await toTxtSuggestion(next, userCache(tx));
  const seqs = await publishOnFile(tx, "suggestion", row.id, file, suggestion);
  return { suggestion, seq: seqs.get(actor.userId) };
}

// Reviewing proposals: accept applies one through the same domain code as a manual edit (feed
// records, versions, If-Match); a proposal whose starting value changed since (the note's context,
// tags or folder, the folder's context) is 409 `proposal_stale`; reject only records the decision.
// Pending -> accepted | rejected, once.
import { nowIso } from "../../../lib/time.ts";
import type { ProposalRow } from "../../../store/repos/brain.ts";
import type { Tx } from "../../../store/store.ts";
import { requireFile, requireFolder } from "../access.ts";
import type { Actor } from "../actor.ts";
import { connectFiles } from "../connections.ts";
import { ServiceError } from "../errors.ts";
import { updateFile } from "../files.ts";
import { createFolder, updateFolder } from "../folders.ts";
import { parseTags } from "../records.ts";

export function toProposalRecord(row: ProposalRow) {
  return {
    id: row.id,
    analysisId: row.analysis_id,
    kind: row.kind,
    target: { type: row.target_type, id: row.target_id },
    proposed: JSON.parse(row.proposed) as Record<string, unknown>,
    current: JSON.parse(row.current) as Record<string, unknown>,
    reason: row.reason,
    status: row.status,
    baseEtag: row.base_etag,
    createdAt: row.created_at,
    reviewedAt: row.reviewed_at,
    reviewedBy: row.reviewed_by,
  };
}

const proposalNotFound = (id: string) =>
  new ServiceError(
    404,
    "not_found",
    `No proposal with id ${id} is yours.`,
    "List your proposals with GET /api/me/context/proposals.",
  );

const stale = (what: string) =>
  new ServiceError(
    409,
    "proposal_stale",
    `${what} changed since the proposal was made, so it was not applied.`,
    "Reject it, or run the analysis again (POST /api/me/context) for proposals on the current version.",
  );

function requireScopeOf(actor: Actor, scope: string) {
  if (actor.scopes.has(scope)) return;
  throw new ServiceError(
    403,
    "insufficient_scope",
    `Accepting this proposal needs the ${scope} scope, which your credential does not have.`,
    `Use a key with ${scope} (and ai:use) to accept it.`,
    { requiredScopes: [scope] },
  );
}

/** Runs an edit made from a stored entity tag: a precondition failure or a vanished target is stale. */
async function fromBase<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ServiceError && (err.status === 412 || err.status === 404)) throw stale(what);
    throw err;
  }
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * Applies an accepted proposal. It is stale when the value it was made from changed since (another
 * edit, or another accepted proposal): checked in this transaction, so nothing slips in between.
 */
async function apply(tx: Tx, actor: Actor, row: ProposalRow) {
  const proposed = JSON.parse(row.proposed) as Record<string, unknown>;
  const current = JSON.parse(row.current) as Record<string, unknown>;
  const editor = { ...actor, source: "ai-proposal" };
  switch (row.kind) {
    case "file_context":
    case "file_tags":
    case "move_file": {
      requireScopeOf(actor, "files:write");
      const { file } = await fromBase("The note", () => requireFile(tx, actor, row.target_id!, "writer"));
      const now =
        row.kind === "file_context"
          ? { context: file.context }
          : row.kind === "file_tags"
            ? { tags: parseTags(file.tags) }
            : { folderId: file.folder_id };
      if (!same(now, current)) throw stale("The note");
      const patch =
        row.kind === "file_context"
          ? { context: String(proposed.context) }
          : row.kind === "file_tags"
            ? { tags: proposed.tags as string[] }
            : { folderId: String(proposed.folderId) };
      const result = await fromBase("The note", () => updateFile(tx, editor, file.id, patch, [file.etag]));
      return { fileId: result.file.id, etag: result.file.etag };
    }
    case "connect": {
      requireScopeOf(actor, "files:write");
      const result = await fromBase("A connected note", () =>
        connectFiles(tx, editor, row.target_id!, {
          targetFileId: String(proposed.targetFileId),
          reason: String(proposed.reason ?? row.reason),
        }),
      );
      return { connection: result.connection };
    }
    case "folder_context": {
      requireScopeOf(actor, "folders:write");
      const { folder } = await fromBase("The folder", () =>
        requireFolder(tx, actor, row.target_id!, "writer"),
      );
      if (folder.context !== current.context) throw stale("The folder");
      const result = await updateFolder(tx, editor, folder.id, { context: String(proposed.context) });
      return { folderId: result.folder.id };
    }
    case "new_folder": {
      requireScopeOf(actor, "folders:write");
      const moves = (current.fileFolders as Record<string, string | null> | undefined) ?? {};
      const fileIds = Object.keys(moves);
      if (fileIds.length) requireScopeOf(actor, "files:write");
      const parent = (proposed.parentFolderId as string | null) ?? null;
      const { folder } = await fromBase("The parent folder", () =>
        createFolder(tx, editor, { name: String(proposed.name), parentFolderId: parent }),
      );
      for (const id of fileIds) {
        const { file } = await fromBase("A note to move", () => requireFile(tx, actor, id, "writer"));
        if (file.folder_id !== moves[id]) throw stale("A note to move");
        await updateFile(tx, editor, id, { folderId: folder.id }, [file.etag]);
      }
      return { folderId: folder.id, movedFileIds: fileIds };
    }
    default:
      throw new ServiceError(409, "proposal_unsupported", `Unknown proposal kind ${row.kind}.`, "Reject it.");
  }
}

export async function reviewProposal(tx: Tx, actor: Actor, id: string, decision: "accepted" | "rejected") {
  const row = await tx.proposals.byId(id);
  if (!row || row.owner_id !== actor.userId) throw proposalNotFound(id);
  if (row.status !== "pending") {
    throw new ServiceError(
      409,
      "proposal_reviewed",
      `Proposal ${id} was already ${row.status}.`,
      "A proposal is reviewed once; run a new analysis for new proposals.",
    );
  }
  const applied = decision === "accepted" ? await apply(tx, actor, row) : null;
  const at = nowIso();
  await tx.proposals.review(id, decision, actor.userId, at);
  return {
    proposal: toProposalRecord({ ...row, status: decision, reviewed_at: at, reviewed_by: actor.userId }),
    applied,
  };
}

/** Many at once: each in a savepoint, so one stale proposal does not undo the others. */
export async function reviewMany(tx: Tx, actor: Actor, input: { accept?: string[]; reject?: string[] }) {
  const items = [
    ...(input.accept ?? []).map((id) => ({ id, decision: "accepted" as const })),
    ...(input.reject ?? []).map((id) => ({ id, decision: "rejected" as const })),
  ];
  const results = [];
  for (const item of items) {
    try {
      const r = await tx.savepoint(() => reviewProposal(tx, actor, item.id, item.decision));
      results.push({
        id: item.id,
        status: r.proposal.status,
        proposal: r.proposal,
        applied: r.applied,
        error: null,
      });
    } catch (err) {
      if (!(err instanceof ServiceError)) throw err;
      results.push({
        id: item.id,
        status: "failed",
        proposal: null,
        applied: null,
        error: { code: err.code, message: err.message, resolution: err.resolution, status: err.status },
      });
    }
  }
  return {
    results,
    summary: {
      accepted: results.filter((r) => r.status === "accepted").length,
      rejected: results.filter((r) => r.status === "rejected").length,
      failed: results.filter((r) => r.status === "failed").length,
    },
  };
}

export async function listProposals(tx: Tx, actor: Actor, status: string | undefined, limit: number) {
  return { proposals: (await tx.proposals.list(actor.userId, status, limit)).map(toProposalRecord) };
}

export async function getProposal(tx: Tx, actor: Actor, id: string) {
  const row = await tx.proposals.byId(id);
  if (!row || row.owner_id !== actor.userId) throw proposalNotFound(id);
  return toProposalRecord(row);
}

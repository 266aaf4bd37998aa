// POST /api/me/context: the model reads the caller's least organised notes (or those a prompt is
// about) and proposes context, tags, folder moves, new folders and connections. Proposals are stored
// for review; nothing in the workspace changes until a person accepts one (proposals.ts).
import { newId } from "../../../lib/ids.ts";
import { nowIso } from "../../../lib/time.ts";
import type { ProposalRow } from "../../../store/repos/brain.ts";
import type { FileMetaRow, FileRow, FolderRow } from "../../../store/repos/rows.ts";
import type { Tx } from "../../../store/store.ts";
import type { Actor } from "../actor.ts";
import { checkMaxChars } from "../limits.ts";
import { parseTags } from "../records.ts";
import { BRAIN_LIMITS } from "./config.ts";
import { connectedIds, organisation } from "./coverage.ts";
import { type BrainDeps, chatChecked, requireProvider } from "./deps.ts";
import { aiNotActivated } from "./errors.ts";
import { AnalysisOut, isProposalOut, type PROPOSAL_KINDS } from "./outputs.ts";
import { systemPrompt, userMessage } from "./prompts.ts";
import { toProposalRecord } from "./proposals.ts";
import { chargeQuota } from "./quota.ts";
import { cleanContext, cleanFolderName, cleanReason, cleanTags } from "./sanitize.ts";
import {
  folderNames,
  loadBodies,
  loadWorkspace,
  noteForModel,
  ownAiFiles,
  rankForText,
} from "./workspace.ts";

interface ProposalOutValue {
  kind: (typeof PROPOSAL_KINDS)[number];
  fileId: string | null;
  folderId: string | null;
  targetFileId: string | null;
  text: string | null;
  tags: string[] | null;
  folderName: string | null;
  reason: string;
}

export async function planAnalysis(deps: BrainDeps, actor: Actor, input: { prompt?: string }) {
  const prompt = checkMaxChars("prompt", input.prompt ?? "", BRAIN_LIMITS.promptChars).trim() || null;
  const read = await deps.store.read(async (tx) => {
    const cap = await deps.pool.capability(tx, actor.userId, deps.sealer);
    // The spec: workspace analysis needs the user's own key, whatever the plan.
    if (cap.source !== "user") throw aiNotActivated();
    const served = await requireProvider(tx, deps, actor);
    const ws = await loadWorkspace(tx, actor);
    const own = await ownAiFiles(tx, actor, ws);
    const byId = new Map(own.map((f) => [f.id, f]));
    let chosen: FileMetaRow[];
    if (prompt) {
      // Ranked among everything visible, then kept to the caller's own: only those it may change.
      const ranked = await rankForText(tx, ws, prompt, BRAIN_LIMITS.contextNotes * 3);
      chosen = ranked
        .map((id) => byId.get(id))
        .filter((f): f is FileMetaRow => Boolean(f))
        .slice(0, BRAIN_LIMITS.contextNotes);
    } else {
      const { ids: connected } = await connectedIds(tx, actor.userId);
      chosen = [...own]
        .sort(
          (a, b) =>
            organisation(a, connected) - organisation(b, connected) || (a.updated_at < b.updated_at ? 1 : -1),
        )
        .slice(0, BRAIN_LIMITS.contextNotes);
    }
    const bodies = await loadBodies(
      tx,
      ws,
      chosen.map((f) => f.id),
    );
    const names = await folderNames(tx, bodies);
    const vocabulary = new Set<string>();
    for (const f of own) for (const t of parseTags(f.tags)) vocabulary.add(t);
    return { served, bodies, names, folders: ws.ownFolders, vocabulary: [...vocabulary].slice(0, 200) };
  });
  const provider = read.served.cap.provider;
  const notes = read.bodies.map((f) => noteForModel(f, read.names));
  const folders = read.folders.map((f) => ({
    id: f.id,
    name: f.name,
    context: f.context,
    tags: parseTags(f.tags),
  }));
  const answer = await chatChecked<{ summary: string; proposals: unknown[] }>(
    deps,
    actor,
    "workspace analysis",
    provider,
    {
      system: systemPrompt(
        "Review how the notes in DATA are organised and propose improvements a person will review: context for notes (file_context) and folders (folder_context), tags (file_tags, reuse the vocabulary), moving a note into an existing folder (move_file), a new folder for notes that belong together (new_folder, with folderName and optionally fileId and folderId as parent), and connections between two notes (connect, fileId and targetFileId). Every proposal needs a reason. Use null for fields a kind does not use.",
      ),
      user: userMessage(prompt, { notes, folders, tagVocabulary: read.vocabulary }),
    },
    "workspace_proposals",
    AnalysisOut,
  );
  const envelope = answer.value;
  const files = new Map(read.bodies.map((f) => [f.id, f]));
  const folderMap = new Map(read.folders.map((f) => [f.id, f]));
  const rows: ProposalRow[] = [];
  const dropped: unknown[] = [];
  const analysisId = newId("an");
  const now = nowIso();
  for (const raw of envelope.proposals.slice(0, 100)) {
    const row = isProposalOut(raw) ? toRow(raw as ProposalOutValue, files, folderMap) : null;
    if (row)
      rows.push({
        ...row,
        id: newId("prop"),
        owner_id: actor.userId,
        analysis_id: analysisId,
        created_at: now,
      });
    else dropped.push(raw);
  }
  if (dropped.length) {
    deps.logger.warn(
      {
        user: actor.userId,
        dropped: dropped.length,
        kinds: dropped.map((d) => (d as { kind?: unknown })?.kind),
      },
      "model proposals outside the schema or naming notes the caller cannot change: dropped",
    );
  }
  return {
    analysisId,
    summary: envelope.summary.slice(0, 4000),
    rows,
    dropped: dropped.length,
    sent: notes.map((n) => ({ id: n.id, name: n.name })),
    provider: { host: provider.host, source: read.served.cap.source, model: answer.model },
    tokens: answer.tokens,
  };
}

type Draft = Omit<ProposalRow, "id" | "owner_id" | "analysis_id" | "created_at">;

/** A model proposal as a stored one, or null when it names something it may not change. */
function toRow(
  p: ProposalOutValue,
  files: Map<string, FileRow>,
  folders: Map<string, FolderRow>,
): Draft | null {
  const file = p.fileId ? files.get(p.fileId) : undefined;
  const folder = p.folderId ? folders.get(p.folderId) : undefined;
  const reason = cleanReason(p.reason);
  const base = { status: "pending" as const, reason, reviewed_at: null, reviewed_by: null };
  const onFile = (f: FileRow, proposed: object, current: object): Draft => ({
    ...base,
    kind: p.kind,
    target_type: "file",
    target_id: f.id,
    base_etag: f.etag,
    proposed: JSON.stringify(proposed),
    current: JSON.stringify(current),
  });
  switch (p.kind) {
    case "file_context":
      return file && p.text !== null
        ? onFile(file, { context: cleanContext(p.text) }, { context: file.context })
        : null;
    case "file_tags": {
      if (!file || !p.tags) return null;
      const tags = cleanTags(p.tags);
      return tags.length ? onFile(file, { tags }, { tags: parseTags(file.tags) }) : null;
    }
    case "move_file":
      return file && folder && folder.id !== file.folder_id
        ? onFile(file, { folderId: folder.id, folderName: folder.name }, { folderId: file.folder_id })
        : null;
    case "connect": {
      const target = p.targetFileId ? files.get(p.targetFileId) : undefined;
      if (!file || !target || target.id === file.id) return null;
      return onFile(file, { targetFileId: target.id, targetName: target.name, reason }, { connected: false });
    }
    case "folder_context":
      return folder && p.text !== null
        ? {
            ...base,
            kind: p.kind,
            target_type: "folder",
            target_id: folder.id,
            base_etag: String(folder.revision),
            proposed: JSON.stringify({ context: cleanContext(p.text) }),
            current: JSON.stringify({ context: folder.context }),
          }
        : null;
    case "new_folder": {
      const name = cleanFolderName(p.folderName);
      if (!name || (p.folderId && !folder) || (p.fileId && !file)) return null;
      return {
        ...base,
        kind: p.kind,
        target_type: "workspace",
        target_id: null,
        base_etag: null,
        proposed: JSON.stringify({
          name,
          parentFolderId: folder?.id ?? null,
          fileIds: file ? [file.id] : [],
        }),
        current: JSON.stringify({ fileFolders: file ? { [file.id]: file.folder_id } : {} }),
      };
    }
    default:
      return null;
  }
}

export async function applyAnalysis(
  tx: Tx,
  deps: BrainDeps,
  actor: Actor,
  p: Awaited<ReturnType<typeof planAnalysis>>,
) {
  for (const row of p.rows) await tx.proposals.insert(row);
  const quota = await chargeQuota(tx, actor.userId, p.tokens, deps.pool.config);
  return {
    analysisId: p.analysisId,
    summary: p.summary,
    proposals: p.rows.map(toProposalRecord),
    droppedProposals: p.dropped,
    provider: p.provider,
    sentNotes: p.sent,
    usage: { tokens: p.tokens },
    quota,
  };
}

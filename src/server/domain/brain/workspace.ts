// What the brain may read for a caller: only notes the caller can see (its own and those shared with
// it), never those in a folder kept away from the AI, ranked for a text by full-text search.
import type { FileMetaRow, FileRow, FolderRow } from "../../../store/repos/rows.ts";
import type { Tx } from "../../../store/store.ts";
import { type AccessScope, loadScope, visibleTo } from "../access.ts";
import type { Actor } from "../actor.ts";
import { parseTags } from "../records.ts";
import { BRAIN_LIMITS } from "./config.ts";
import { excludedFolders, isExcluded } from "./exclusions.ts";
import { salientTerms } from "./terms.ts";

export interface Workspace {
  scope: AccessScope;
  /** Everything the caller can see. */
  files: FileMetaRow[];
  /** Folder ids kept away from the AI. */
  excluded: ReadonlySet<string>;
  /** What may be sent to a model: visible and not excluded. */
  aiFiles: FileMetaRow[];
  aiIds: ReadonlySet<string>;
  /** The caller's own folders (where new notes and folders may go), excluded ones left out. */
  ownFolders: FolderRow[];
}

export async function loadWorkspace(tx: Tx, actor: Actor): Promise<Workspace> {
  const scope = await loadScope(tx, actor);
  const files = (await tx.files.list(visibleTo(scope))) as FileMetaRow[];
  const excluded = await excludedFolders(tx, [actor.userId, ...files.map((f) => f.owner_id)]);
  const aiFiles = files.filter((f) => !isExcluded(f, excluded));
  const ownFolders = (await tx.folders.listOwned(actor.userId)).filter((f) => !excluded.has(f.id));
  return { scope, files, excluded, aiFiles, aiIds: new Set(aiFiles.map((f) => f.id)), ownFolders };
}

export interface RankedNote {
  file: FileMetaRow;
  score: number;
}

/**
 * The caller's notes most related to `text` (full-text ranking over any of its salient words);
 * topped up with the most recently updated notes when the text says too little.
 */
export async function rankForText(
  tx: Tx,
  ws: Workspace,
  text: string,
  limit: number,
  excludeIds: readonly string[] = [],
): Promise<RankedNote[]> {
  const byId = new Map(ws.aiFiles.map((f) => [f.id, f]));
  const terms = salientTerms(text);
  const out: RankedNote[] = [];
  if (terms.length) {
    const hits = await tx.search.search(visibleTo(ws.scope), {
      terms,
      match: "any",
      limit: limit * 3,
      excludeIds,
    });
    for (const h of hits) {
      const file = byId.get(h.id);
      if (file && out.length < limit) out.push({ file, score: h.score });
    }
  }
  if (out.length < limit) {
    const taken = new Set([...out.map((r) => r.file.id), ...excludeIds]);
    const recent = ws.aiFiles
      .filter((f) => !taken.has(f.id))
      .sort((a, b) => (a.updated_at < b.updated_at ? 1 : a.updated_at > b.updated_at ? -1 : 0));
    for (const file of recent.slice(0, limit - out.length)) out.push({ file, score: 0 });
  }
  return out;
}

/** A note as the model sees it: quoted data, its body cut to an excerpt. */
export interface NoteForModel {
  id: string;
  name: string;
  folder: string | null;
  tags: string[];
  context: string;
  excerpt: string;
}

export function noteForModel(file: FileRow, folders: ReadonlyMap<string, string>): NoteForModel {
  return {
    id: file.id,
    name: file.name,
    folder: file.folder_id ? (folders.get(file.folder_id) ?? null) : null,
    tags: parseTags(file.tags),
    context: file.context,
    excerpt: file.content.slice(0, BRAIN_LIMITS.excerptChars),
  };
}

/** Loads bodies of these notes (re-checking each is still AI-visible). */
export async function loadBodies(tx: Tx, ws: Workspace, ids: readonly string[]): Promise<FileRow[]> {
  const out: FileRow[] = [];
  for (const id of ids) {
    if (!ws.aiIds.has(id)) continue;
    const row = await tx.files.byId(id);
    if (row) out.push(row);
  }
  return out;
}

export async function folderNames(tx: Tx, files: readonly FileMetaRow[]): Promise<Map<string, string>> {
  const ids = [...new Set(files.map((f) => f.folder_id).filter((id): id is string => Boolean(id)))];
  return new Map((await tx.folders.byIds(ids)).map((f) => [f.id, f.name]));
}

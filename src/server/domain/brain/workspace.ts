// What the brain may read for a caller: only notes the caller can see (its own and those shared with
// it), never those in a folder kept away from the AI, ranked for a text by full-text search. The
// database does the filtering and ranking: nothing here lists a whole account.
import type { FileMetaRow, FileRow, FolderRow } from "../../../store/repos/rows.ts";
import type { Tx } from "../../../store/store.ts";
import { type AccessScope, loadScope, visibleTo } from "../access.ts";
import type { Actor } from "../actor.ts";
import { parseTags } from "../records.ts";
import { BRAIN_LIMITS } from "./config.ts";
import { excludedFolders, isExcluded } from "./exclusions.ts";
import { refuseWhileBehind } from "./search.ts";
import { salientTerms } from "./terms.ts";

export interface Workspace {
  scope: AccessScope;
  /** Folder ids kept away from the AI (the settings and everything below them). */
  excluded: ReadonlySet<string>;
  /** The caller's own folders (where new notes and folders may go), excluded ones left out. */
  ownFolders: FolderRow[];
}

export async function loadWorkspace(tx: Tx, actor: Actor): Promise<Workspace> {
  const scope = await loadScope(tx, actor);
  // Whose folders can hold notes the caller sees: its own, and the owners of what is shared with it.
  const owners = new Set([actor.userId]);
  for (const f of await tx.folders.byIds([...scope.folderRoles.keys()])) owners.add(f.owner_id);
  for (const f of await tx.files.metaByIds([...scope.fileRoles.keys()])) owners.add(f.owner_id);
  const excluded = await excludedFolders(tx, owners);
  const ownFolders = (await tx.folders.listOwned(actor.userId)).filter((f) => !excluded.has(f.id));
  return { scope, excluded, ownFolders };
}

/** Every note of the caller's own that may go to a model (workspace analysis ranks them all). */
export async function ownAiFiles(tx: Tx, actor: Actor, ws: Workspace): Promise<FileMetaRow[]> {
  const files = (await tx.files.list({ ownerId: actor.userId })) as FileMetaRow[];
  return files.filter((f) => f.owner_id === actor.userId && !isExcluded(f, ws.excluded));
}

/**
 * Ids of the caller's notes most related to `text` (full-text ranking over any of its salient
 * words), topped up with the most recently updated notes when the text says too little.
 */
export async function rankForText(
  tx: Tx,
  ws: Workspace,
  text: string,
  limit: number,
  excludeIds: readonly string[] = [],
): Promise<string[]> {
  const filter = visibleTo(ws.scope);
  const excludeFolderIds = [...ws.excluded];
  const terms = salientTerms(text);
  const out: string[] = [];
  if (terms.length) {
    const hits = await tx.search
      .search(filter, { terms, match: "any", limit, excludeIds, excludeFolderIds })
      .catch(refuseWhileBehind);
    out.push(...hits.map((h) => h.id));
  }
  if (out.length < limit) {
    const recent = await tx.search.recent(filter, {
      limit: limit - out.length,
      excludeIds: [...excludeIds, ...out],
      excludeFolderIds,
    });
    out.push(...recent);
  }
  return out;
}

/** The tag vocabulary of what the caller may send to a model, most used first. */
export async function tagVocabulary(tx: Tx, ws: Workspace, max = 100): Promise<string[]> {
  const counts = await tx.search.tagCounts(visibleTo(ws.scope), { excludeFolderIds: [...ws.excluded] });
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, max)
    .map(([t]) => t);
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

/** Loads the bodies of these notes (ids from the access-filtered ranking), re-checking exclusion. */
export async function loadBodies(tx: Tx, ws: Workspace, ids: readonly string[]): Promise<FileRow[]> {
  const out: FileRow[] = [];
  for (const id of ids) {
    const row = await tx.files.byId(id);
    if (row && !isExcluded(row, ws.excluded)) out.push(row);
  }
  return out;
}

export async function folderNames(tx: Tx, files: readonly FileMetaRow[]): Promise<Map<string, string>> {
  const ids = [...new Set(files.map((f) => f.folder_id).filter((id): id is string => Boolean(id)))];
  return new Map((await tx.folders.byIds(ids)).map((f) => [f.id, f.name]));
}

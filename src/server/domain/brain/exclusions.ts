// "Exclude from AI": a folder setting (Smart Connections users asked for it) that keeps the folder and
// everything below it away from every AI operation. Search and related notes still see them: those
// never leave the server.
import type { FileMetaRow } from "../../../store/repos/rows.ts";
import type { Tx } from "../../../store/store.ts";
import { requireFolder } from "../access.ts";
import type { Actor } from "../actor.ts";

/** Folder ids (settings and their subtrees) of these owners that are kept away from the AI. */
export async function excludedFolders(tx: Tx, ownerIds: Iterable<string>): Promise<Set<string>> {
  const roots = (await tx.folders.aiExcludedOf([...new Set(ownerIds)])).map((r) => r.id);
  return new Set(roots.length ? await tx.folders.subtreeIds(roots) : []);
}

export function isExcluded(file: Pick<FileMetaRow, "folder_id">, excluded: ReadonlySet<string>): boolean {
  return file.folder_id !== null && excluded.has(file.folder_id);
}

/** Owner only: the setting belongs to the folder, and so to whoever owns it. */
export async function setFolderAiExcluded(tx: Tx, actor: Actor, folderId: string, excluded: boolean) {
  const { folder } = await requireFolder(tx, actor, folderId, "owner");
  await tx.folders.setAiExcluded(folder.id, excluded);
  const inherited = !excluded && (await excludedFolders(tx, [folder.owner_id])).has(folder.id);
  return { folderId: folder.id, excluded, effective: excluded || inherited };
}

export async function folderAiSetting(tx: Tx, actor: Actor, folderId: string) {
  const { folder } = await requireFolder(tx, actor, folderId, "reader");
  const effective = (await excludedFolders(tx, [folder.owner_id])).has(folder.id);
  return {
    folderId: folder.id,
    excluded: folder.ai_excluded === 1 || Number(folder.ai_excluded) === 1,
    effective,
  };
}

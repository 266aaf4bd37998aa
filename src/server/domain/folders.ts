// Folders: create, read (with bodies), update and move (no cycles), delete (children move up one level).
import { newId } from "../../lib/ids.ts";
import { nextIso, nowIso } from "../../lib/time.ts";
import type { FileRow, FolderRow, Role } from "../../store/repos/rows.ts";
import type { Tx } from "../../store/store.ts";
import { type AccessScope, folderRoleInScope, loadScope, requireFolder, roleInScope } from "./access.ts";
import type { Actor } from "./actor.ts";
import { republishAttachments } from "./attachments/feed.ts";
import { promoteAttachments } from "./attachments/writes.ts";
import { ServiceError } from "./errors.ts";
import { republishAccess } from "./events.ts";
import { folderAudience, publishFile, publishFolder, publishFolderDeleted } from "./feed.ts";
import { etagOf } from "./files.ts";
import { checkContext, checkName, checkTags } from "./limits.ts";
import { reindexFolder, reindexPlaces } from "./links/linkIndex.ts";
import { folderEndpoint, type TxtFile, type TxtFolder, toTxtFile, toTxtFolder } from "./records.ts";
import { dropSharesOn } from "./shares.ts";

export interface FolderCreateInput {
  name: string;
  context?: string;
  tags?: string[];
  parentFolderId?: string | null;
}

export type FolderPatch = Partial<FolderCreateInput>;

export interface FolderResult {
  folder: FolderRow;
  role: Role;
  seq?: number;
}

async function parentFor(tx: Tx, actor: Actor, parentId: string | null | undefined) {
  if (!parentId) return { parentId: null, ownerId: actor.userId, role: "owner" as Role };
  const { folder, role } = await requireFolder(tx, actor, parentId, "writer").catch((err) => {
    throw err instanceof ServiceError && err.status === 404
      ? new ServiceError(
          404,
          "not_found",
          `parentFolderId: no folder ${parentId} is visible to you.`,
          "Pass the id of an existing folder, or null for the root.",
        )
      : err;
  });
  return { parentId: folder.id, ownerId: folder.owner_id, role };
}

export async function createFolder(tx: Tx, actor: Actor, input: FolderCreateInput): Promise<FolderResult> {
  const name = checkName("name", input.name);
  const context = checkContext("context", input.context ?? "");
  const tags = checkTags("tags", input.tags ?? []);
  const parent = await parentFor(tx, actor, input.parentFolderId);
  const now = nowIso();
  const folder: FolderRow = {
    id: newId("d"),
    owner_id: parent.ownerId,
    parent_id: parent.parentId,
    name,
    context,
    tags: JSON.stringify(tags),
    revision: 1,
    created_at: now,
    updated_at: now,
  };
  await tx.folders.insert(folder);
  const seqs = await publishFolder(tx, folder);
  return {
    folder,
    role: parent.ownerId === actor.userId ? "owner" : parent.role,
    seq: seqs.get(actor.userId),
  };
}

export async function updateFolder(
  tx: Tx,
  actor: Actor,
  id: string,
  patch: FolderPatch,
): Promise<FolderResult> {
  const { folder, role } = await requireFolder(tx, actor, id, "writer");
  const next: FolderRow = { ...folder };
  if (patch.name !== undefined) next.name = checkName("name", patch.name);
  if (patch.context !== undefined) next.context = checkContext("context", patch.context);
  if (patch.tags !== undefined) next.tags = JSON.stringify(checkTags("tags", patch.tags));
  if (patch.parentFolderId !== undefined && patch.parentFolderId !== folder.parent_id) {
    const parent = await parentFor(tx, actor, patch.parentFolderId);
    if (parent.parentId) {
      const chain = await tx.folders.ancestry(parent.parentId);
      if (chain.some((f) => f.id === folder.id)) {
        throw new ServiceError(
          409,
          "folder_cycle",
          "parentFolderId: a folder cannot move into itself or into a folder below it.",
          "Choose a parent outside this folder's subtree.",
        );
      }
    }
    if (parent.ownerId !== folder.owner_id) {
      throw new ServiceError(
        403,
        "forbidden",
        "parentFolderId: a folder can only move between folders of its owner.",
        "Pick a parent folder owned by this folder's owner.",
      );
    }
    next.parent_id = parent.parentId;
  }
  const changed =
    next.name !== folder.name ||
    next.context !== folder.context ||
    next.tags !== folder.tags ||
    next.parent_id !== folder.parent_id;
  if (!changed) return { folder, role };
  const before = next.parent_id !== folder.parent_id ? await folderAudience(tx, folder) : undefined;
  next.revision = folder.revision + 1;
  next.updated_at = nextIso(folder.updated_at);
  await tx.folders.update(next);
  // The notes below have new paths: links by path and nearest-name ties may now resolve elsewhere.
  if (next.name !== folder.name || next.parent_id !== folder.parent_id)
    await reindexFolder(tx, folder.owner_id, [folder.id]);
  const seqs = await publishFolder(tx, next, before);
  return { folder: next, role, seq: seqs.get(actor.userId) };
}

/** Deletes a folder; its direct files and subfolders move up exactly one level, to its parent. */
export async function deleteFolder(tx: Tx, actor: Actor, id: string) {
  const { folder } = await requireFolder(tx, actor, id, "owner");
  const before = await folderAudience(tx, folder);
  const movedFiles: string[] = [];
  const movedFolders: string[] = [];
  // Children are re-parented (and published) before the folder's tombstone, so a client applying
  // the feed in order never holds an orphan.
  for (const file of await tx.files.inFolders([id], true)) {
    const next: FileRow = { ...file, folder_id: folder.parent_id, revision: file.revision + 1 };
    next.etag = etagOf(next.revision, file.content_hash);
    next.updated_at = nextIso(file.updated_at);
    await tx.files.update(next);
    await publishFile(tx, next);
    movedFiles.push(file.id);
  }
  for (const child of await tx.folders.children(id)) {
    const next: FolderRow = { ...child, parent_id: folder.parent_id, revision: child.revision + 1 };
    next.updated_at = nextIso(child.updated_at);
    await tx.folders.update(next);
    await publishFolder(tx, next);
    movedFolders.push(child.id);
  }
  // Attachments move up like notes (a name the parent holds gets " (n)": attachments' names are unique).
  const movedAttachments = await promoteAttachments(tx, id, folder.parent_id);
  const grantees = await dropSharesOn(tx, id);
  await tx.themes.delete("folder", id);
  await tx.folders.delete(id);
  await reindexPlaces(tx, folder.owner_id, movedFiles);
  await reindexFolder(tx, folder.owner_id, movedFolders);
  const seqs = await publishFolderDeleted(tx, id, before);
  // Whoever reached the children only through this folder's shares has lost them: tell them.
  for (const grantee of grantees) {
    for (const f of movedFolders) await republishAccess(tx, grantee, "folder", f);
    for (const f of movedFiles) await republishAccess(tx, grantee, "file", f);
    await republishAttachments(tx, grantee, await tx.attachments.byIds(movedAttachments));
  }
  return {
    id,
    deleted: true as const,
    movedTo: folder.parent_id,
    movedFileIds: movedFiles,
    movedFolderIds: movedFolders,
    movedAttachmentIds: movedAttachments,
    seq: seqs.get(actor.userId),
  };
}

/** Every folder visible to the actor, with direct file counts. */
export async function listFolders(tx: Tx, actor: Actor, scope?: AccessScope): Promise<TxtFolder[]> {
  const s = scope ?? (await loadScope(tx, actor));
  const owned = await tx.folders.listOwned(actor.userId);
  const shared = await tx.folders.byIds(
    [...s.folderRoles.keys()].filter((id) => !owned.some((f) => f.id === id)),
  );
  const counts = await tx.folders.fileCountsOwned(actor.userId);
  const sharedCounts = await tx.folders.fileCounts(shared.map((f) => f.id));
  return [...owned, ...shared]
    .sort((a, b) => (a.id < b.id ? -1 : 1))
    .map((f) =>
      toTxtFolder(f, folderRoleInScope(s, f) ?? "reader", counts.get(f.id) ?? sharedCounts.get(f.id) ?? 0),
    );
}

/** One folder with its direct files, bodies included (the spec's getFolder). */
export async function getFolderWithFiles(tx: Tx, actor: Actor, id: string): Promise<TxtFolder> {
  if (id === "root") {
    // The top level as a folder (as readdir names it), so a client can fetch root bodies at once.
    const files = (await tx.files.list({ ownerId: actor.userId, folderId: null }, true)) as FileRow[];
    const user = await tx.users.byId(actor.userId);
    const at = user?.created_at ?? new Date(0).toISOString();
    return {
      id: "root",
      name: "",
      context: "",
      tags: [],
      parentFolderId: null,
      fileCount: files.length,
      createdAt: at,
      updatedAt: at,
      endpoint: folderEndpoint("root"),
      access: "owner",
      role: "owner",
      files: files.map((f) => ({ ...toTxtFile(f, "owner"), content: f.content })),
    };
  }
  const { folder, role } = await requireFolder(tx, actor, id, "reader");
  const files = (await tx.files.inFolders([id], true)) as FileRow[];
  return {
    ...toTxtFolder(folder, role, files.length),
    // Files in a folder inherit its visibility, so the folder's role is theirs unless they are ours.
    files: files.map((f) => ({
      ...toTxtFile(f, f.owner_id === actor.userId ? "owner" : role),
      content: f.content,
    })),
  };
}

/** readdir: a folder (or the root) with its direct subfolders and files, never bodies. */
export async function readDirectory(tx: Tx, actor: Actor, id: string) {
  if (id === "root") {
    const folders = await tx.folders.rootFoldersOf(actor.userId);
    const files = await tx.files.list({ ownerId: actor.userId, folderId: null });
    const counts = await tx.folders.fileCounts(folders.map((f) => f.id));
    return {
      folder: null,
      folders: folders.map((f) => toTxtFolder(f, "owner", counts.get(f.id) ?? 0)),
      files: files.map((f) => toTxtFile(f, "owner")),
    };
  }
  const scope = await loadScope(tx, actor);
  const { folder, role } = await requireFolder(tx, actor, id, "reader");
  const children = await tx.folders.children(id);
  const files = await tx.files.inFolders([id], false);
  const counts = await tx.folders.fileCounts([id, ...children.map((c) => c.id)]);
  return {
    folder: toTxtFolder(folder, role, counts.get(id) ?? 0),
    folders: children.map((c) => toTxtFolder(c, folderRoleInScope(scope, c) ?? role, counts.get(c.id) ?? 0)),
    files: files.map((f): TxtFile => toTxtFile(f, roleInScope(scope, f) ?? role)),
  };
}

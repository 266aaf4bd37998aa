// Who may see and change what. Every read and write goes through here, so sharing (owner, writer,
// reader; folder shares inherited by everything below) is enforced in one place.

import { nowIso } from "../../lib/time.ts";
import type { FileMetaRow, FolderRow, Role, ShareRow } from "../../store/repos/rows.ts";
import type { Tx } from "../../store/store.ts";
import type { Actor } from "./actor.ts";
import { notFound, ownerOnly, readOnly, ServiceError } from "./errors.ts";

const RANK: Record<Role, number> = { reader: 1, writer: 2, owner: 3 };

export function maxRole(roles: Iterable<Role | undefined>): Role | null {
  let best: Role | null = null;
  for (const r of roles) if (r && (!best || RANK[r] > RANK[best])) best = r;
  return best;
}

export function atLeast(role: Role, needed: Role): boolean {
  return RANK[role] >= RANK[needed];
}

/** The actor's role on a file, or null when it is not visible to them. */
export async function fileRole(tx: Tx, actor: Actor, file: FileMetaRow): Promise<Role | null> {
  if (file.owner_id === actor.userId) return "owner";
  const above = file.folder_id ? (await tx.folders.ancestry(file.folder_id)).map((f) => f.id) : [];
  const shares = await tx.shares.activeOn([file.id, ...above], nowIso());
  return maxRole(shares.filter((s) => s.grantee_id === actor.userId).map((s) => s.role));
}

export async function folderRole(tx: Tx, actor: Actor, folder: FolderRow): Promise<Role | null> {
  if (folder.owner_id === actor.userId) return "owner";
  const above = (await tx.folders.ancestry(folder.id)).map((f) => f.id);
  const shares = await tx.shares.activeOn(above, nowIso());
  return maxRole(shares.filter((s) => s.grantee_id === actor.userId).map((s) => s.role));
}

/** Loads a file the actor can see with at least `needed`; 404 when invisible, 403 when too weak. */
export async function requireFile(tx: Tx, actor: Actor, id: string, needed: Role = "reader") {
  const file = await tx.files.byId(id);
  const role = file ? await fileRole(tx, actor, file) : null;
  if (!file || !role) throw notFound("file", id);
  if (!atLeast(role, needed)) throw needed === "owner" ? ownerOnly("do this") : readOnly("file");
  return { file, role };
}

export async function requireFolder(tx: Tx, actor: Actor, id: string, needed: Role = "reader") {
  const folder = await tx.folders.byId(id);
  const role = folder ? await folderRole(tx, actor, folder) : null;
  if (!folder || !role) throw notFound("folder", id);
  if (!atLeast(role, needed)) throw needed === "owner" ? ownerOnly("do this") : readOnly("folder");
  return { folder, role };
}

/** Everything shared with the actor, for listings: one query for shares, one to expand folders. */
export interface AccessScope {
  userId: string;
  folderRoles: Map<string, Role>;
  fileRoles: Map<string, Role>;
}

export async function loadScope(tx: Tx, actor: Actor): Promise<AccessScope> {
  const shares = await tx.shares.activeForGrantee(actor.userId, nowIso());
  const fileRoles = new Map<string, Role>();
  const folderRoles = new Map<string, Role>();
  const folderShares: ShareRow[] = [];
  for (const s of shares) {
    if (s.resource_type === "file")
      fileRoles.set(s.resource_id, maxRole([fileRoles.get(s.resource_id), s.role])!);
    else folderShares.push(s);
  }
  // A folder share reaches every folder below it; the strongest share on the way down wins.
  for (const s of folderShares) {
    for (const id of await tx.folders.subtreeIds([s.resource_id])) {
      folderRoles.set(id, maxRole([folderRoles.get(id), s.role])!);
    }
  }
  return { userId: actor.userId, folderRoles, fileRoles };
}

/** The file-list filter of everything a scope sees: the caller's own files and those shared with it. */
export function visibleTo(scope: AccessScope) {
  return {
    ownerId: scope.userId,
    sharedFolderIds: [...scope.folderRoles.keys()],
    sharedFileIds: [...scope.fileRoles.keys()],
  };
}

export function roleInScope(
  scope: AccessScope,
  file: Pick<FileMetaRow, "id" | "owner_id" | "folder_id">,
): Role | null {
  if (file.owner_id === scope.userId) return "owner";
  return maxRole([
    scope.fileRoles.get(file.id),
    file.folder_id ? scope.folderRoles.get(file.folder_id) : undefined,
  ]);
}

export function folderRoleInScope(scope: AccessScope, folder: FolderRow): Role | null {
  if (folder.owner_id === scope.userId) return "owner";
  return scope.folderRoles.get(folder.id) ?? null;
}

/** Every account that can see the item, with its role: who the change feed must tell. */
export async function audience(
  tx: Tx,
  item: { ownerId: string; fileId?: string; folderId: string | null },
): Promise<Map<string, Role>> {
  const out = new Map<string, Role>([[item.ownerId, "owner"]]);
  const above = item.folderId ? (await tx.folders.ancestry(item.folderId)).map((f) => f.id) : [];
  const ids = item.fileId ? [item.fileId, ...above] : above;
  for (const s of await tx.shares.activeOn(ids, nowIso())) {
    if (s.grantee_id && s.grantee_id !== item.ownerId) {
      out.set(s.grantee_id, maxRole([out.get(s.grantee_id), s.role])!);
    }
  }
  return out;
}

/**
 * Where a new or moved note or attachment may go: a folder the actor can write, whose owner then
 * owns it, or the actor's root.
 */
export async function writableTarget(tx: Tx, actor: Actor, folderId: string | null | undefined) {
  if (!folderId) return { folderId: null, ownerId: actor.userId, role: "owner" as Role };
  const { folder, role } = await requireFolder(tx, actor, folderId, "writer").catch((err) => {
    throw err instanceof ServiceError && err.status === 404
      ? new ServiceError(
          404,
          "not_found",
          `folderId: no folder ${folderId} is visible to you.`,
          "Pass the id of an existing folder, or null for the root.",
        )
      : err;
  });
  return { folderId: folder.id, ownerId: folder.owner_id, role };
}

// Sharing: a file or a folder (and so everything below it, present and future) shared with another
// user by email as `writer` or `reader`. Only the owner shares, changes roles and revokes; a
// grantee may also leave a share. A share to an email with no account yet is kept `pending` and
// becomes active when that account is created.
import { newId } from "../../lib/ids.ts";
import { nowIso } from "../../lib/time.ts";
import type { ShareRow, UserRow } from "../../store/repos/rows.ts";
import type { Tx } from "../../store/store.ts";
import { requireFile, requireFolder } from "./access.ts";
import type { Actor } from "./actor.ts";
import { invalid, ownerOnly, ServiceError } from "./errors.ts";
import { publishItem, republishAccess } from "./events.ts";

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$|^[^\s@]+@localhost$/;
/** Longest a share may be set to last (Google Drive's limit for expiring permissions). */
export const MAX_SHARE_DAYS = 366;

export type ShareRole = "writer" | "reader";

export interface ShareInput {
  email: string;
  role: ShareRole;
  /** ISO date-time; null or omitted = no expiry. */
  expiresAt?: string | null;
}

export interface TxtShare {
  id: string;
  resourceType: "file" | "folder";
  resourceId: string;
  role: ShareRole;
  status: "active" | "pending" | "revoked";
  grantee: { type: "user"; userId: string | null; email: string };
  ownerId: string;
  ownerEmail: string | null;
  createdBy: string;
  createdAt: string;
  updatedAt: string;
  expiresAt: string | null;
  inherited: boolean;
  inheritedFrom: string | null;
  endpoint: string;
}

export function toTxtShare(row: ShareRow, owner?: UserRow, inheritedFrom: string | null = null): TxtShare {
  return {
    id: row.id,
    resourceType: row.resource_type,
    resourceId: row.resource_id,
    role: row.role,
    status: row.status,
    grantee: { type: "user", userId: row.grantee_id, email: row.grantee_email },
    ownerId: row.owner_id,
    ownerEmail: owner?.email ?? null,
    createdBy: row.created_by,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    expiresAt: row.expires_at,
    inherited: inheritedFrom !== null,
    inheritedFrom,
    endpoint: `/api/v1/shares/${row.id}`,
  };
}

function checkEmail(email: string): string {
  const normalized = email.trim().toLowerCase();
  if (!EMAIL.test(normalized) || normalized.length > 254)
    throw invalid("email", `${JSON.stringify(email)} is not an email address`);
  return normalized;
}

function checkExpiry(expiresAt: string | null | undefined): string | null {
  if (expiresAt === undefined || expiresAt === null) return null;
  const t = Date.parse(expiresAt);
  if (!/^\d{4}-\d\d-\d\dT/.test(expiresAt) || Number.isNaN(t))
    throw invalid("expiresAt", "must be an ISO 8601 date-time such as 2030-01-31T12:00:00Z");
  if (t <= Date.now()) throw invalid("expiresAt", "must be in the future");
  if (t > Date.now() + MAX_SHARE_DAYS * 86400_000)
    throw invalid("expiresAt", `must be at most ${MAX_SHARE_DAYS} days ahead`);
  return new Date(t).toISOString();
}

/** Tells the owner and the grantee about the share itself (the share record in their feeds). */
async function publishShare(tx: Tx, row: ShareRow, owner: UserRow | undefined) {
  const accounts = new Map([[row.owner_id, "owner" as const]]);
  if (row.grantee_id) accounts.set(row.grantee_id, "owner");
  const record = row.status === "revoked" ? null : () => ({ ...toTxtShare(row, owner) });
  return publishItem(tx, "share", row.id, accounts, record, {
    ...(row.resource_type === "file" ? { fileId: row.resource_id } : {}),
    ...(record ? {} : { reason: "revoked" }),
  });
}

/** The owner's view of who can reach a resource: the resource must be theirs. */
async function ownedResource(tx: Tx, actor: Actor, type: "file" | "folder", id: string) {
  if (type === "file") {
    const { file } = await requireFile(tx, actor, id, "owner");
    return { ownerId: file.owner_id };
  }
  const { folder } = await requireFolder(tx, actor, id, "owner");
  return { ownerId: folder.owner_id };
}

export async function createShare(
  tx: Tx,
  actor: Actor,
  type: "file" | "folder",
  resourceId: string,
  input: ShareInput,
): Promise<{ share: TxtShare; created: boolean; seq?: number }> {
  const email = checkEmail(input.email);
  const expiresAt = checkExpiry(input.expiresAt);
  const { ownerId } = await ownedResource(tx, actor, type, resourceId);
  const owner = await tx.users.byId(ownerId);
  if (owner?.email === email)
    throw invalid("email", "the owner already has full access; share with someone else");
  const grantee = await tx.users.byEmail(email);
  const now = nowIso();
  const existing = await tx.shares.liveFor(resourceId, email);
  let row: ShareRow;
  if (existing) {
    row = { ...existing, role: input.role, expires_at: expiresAt, updated_at: now };
    await tx.shares.update(row);
  } else {
    row = {
      id: newId("s"),
      resource_type: type,
      resource_id: resourceId,
      owner_id: ownerId,
      grantee_id: grantee?.id ?? null,
      grantee_email: email,
      role: input.role,
      status: grantee ? "active" : "pending",
      created_by: actor.userId,
      created_at: now,
      updated_at: now,
      expires_at: expiresAt,
    };
    await tx.shares.insert(row);
  }
  // The share first: a client learns who shared before the items arrive (the mount names folders after them).
  const seqs = await publishShare(tx, row, owner);
  if (row.grantee_id) await republishAccess(tx, row.grantee_id, type, resourceId);
  return { share: toTxtShare(row, owner), created: !existing, seq: seqs.get(actor.userId) };
}

/** A share the actor is part of (its resource's owner or its grantee); 404 otherwise. */
async function involvedShare(tx: Tx, actor: Actor, id: string) {
  const row = await tx.shares.byId(id);
  if (
    !row ||
    row.status === "revoked" ||
    (row.owner_id !== actor.userId && row.grantee_id !== actor.userId)
  ) {
    throw new ServiceError(
      404,
      "not_found",
      `No share with id ${id} is visible to you.`,
      "List your shares with GET /api/v1/shares; it may have been revoked.",
    );
  }
  return row;
}

export async function getShare(tx: Tx, actor: Actor, id: string): Promise<TxtShare> {
  const row = await involvedShare(tx, actor, id);
  return toTxtShare(row, await tx.users.byId(row.owner_id));
}

export async function updateShare(
  tx: Tx,
  actor: Actor,
  id: string,
  patch: { role?: ShareRole; expiresAt?: string | null },
) {
  const row = await involvedShare(tx, actor, id);
  if (row.owner_id !== actor.userId) throw ownerOnly("change a share");
  const next: ShareRow = { ...row, updated_at: nowIso() };
  if (patch.role !== undefined) next.role = patch.role;
  if (patch.expiresAt !== undefined) next.expires_at = checkExpiry(patch.expiresAt);
  await tx.shares.update(next);
  const owner = await tx.users.byId(row.owner_id);
  const seqs = await publishShare(tx, next, owner);
  if (next.grantee_id) await republishAccess(tx, next.grantee_id, next.resource_type, next.resource_id);
  return { share: toTxtShare(next, owner), seq: seqs.get(actor.userId) };
}

/** Revokes a share: the owner takes access back, or the grantee leaves. */
export async function revokeShare(tx: Tx, actor: Actor, id: string) {
  const row = await involvedShare(tx, actor, id);
  const next: ShareRow = { ...row, status: "revoked", updated_at: nowIso() };
  await tx.shares.update(next);
  const seqs = await publishShare(tx, next, undefined);
  if (next.grantee_id) await republishAccess(tx, next.grantee_id, next.resource_type, next.resource_id);
  return { id, revoked: true as const, seq: seqs.get(actor.userId) };
}

/**
 * Lists shares. With a resource: the shares that reach it (direct ones, and those inherited from
 * folders above, marked `inherited`), for anyone who can see it. Without: every live share the
 * actor granted or received, with `direction`.
 */
export async function listShares(
  tx: Tx,
  actor: Actor,
  query: { fileId?: string; folderId?: string; direction?: "granted" | "received" },
) {
  if (query.fileId && query.folderId) throw invalid("fileId", "give at most one of fileId and folderId");
  const owners = new Map<string, UserRow | undefined>();
  const ownerOf = async (id: string) => {
    if (!owners.has(id)) owners.set(id, await tx.users.byId(id));
    return owners.get(id);
  };
  if (query.fileId || query.folderId) {
    let chain: string[];
    let selfId: string;
    if (query.fileId) {
      const { file } = await requireFile(tx, actor, query.fileId, "reader");
      selfId = file.id;
      const above = file.folder_id ? (await tx.folders.ancestry(file.folder_id)).map((f) => f.id) : [];
      chain = [file.id, ...above];
    } else {
      const { folder } = await requireFolder(tx, actor, query.folderId!, "reader");
      selfId = folder.id;
      chain = (await tx.folders.ancestry(folder.id)).map((f) => f.id);
    }
    const rows = await tx.shares.liveOn(chain);
    const shares: TxtShare[] = [];
    for (const r of rows)
      shares.push(toTxtShare(r, await ownerOf(r.owner_id), r.resource_id === selfId ? null : r.resource_id));
    return { shares };
  }
  const rows = await tx.shares.liveInvolving(actor.userId);
  const shares = [];
  for (const r of rows) {
    const direction = r.owner_id === actor.userId ? "granted" : "received";
    if (query.direction && query.direction !== direction) continue;
    // A received share only counts once the grantee can use it (pending ones have no grantee yet).
    shares.push({ ...toTxtShare(r, await ownerOf(r.owner_id)), direction });
  }
  return { shares };
}

/** A new account picks up the shares that were waiting for its email. */
export async function activatePendingShares(tx: Tx, user: UserRow): Promise<number> {
  const pending = await tx.shares.pendingForEmail(user.email);
  for (const row of pending) {
    const next: ShareRow = { ...row, grantee_id: user.id, status: "active", updated_at: nowIso() };
    await tx.shares.update(next);
    await publishShare(tx, next, await tx.users.byId(next.owner_id));
    await republishAccess(tx, user.id, next.resource_type, next.resource_id);
  }
  return pending.length;
}

/**
 * Before a shared file or folder is deleted: its shares go (their records become tombstones in
 * the owner's and grantees' feeds). Returns the grantees, who may have lost more than the item.
 */
export async function dropSharesOn(tx: Tx, resourceId: string): Promise<string[]> {
  const rows = await tx.shares.liveOn([resourceId]);
  for (const row of rows) await publishShare(tx, { ...row, status: "revoked" }, undefined);
  await tx.shares.deleteOn(resourceId);
  return rows.flatMap((r) => (r.grantee_id ? [r.grantee_id] : []));
}

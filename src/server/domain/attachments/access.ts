// Who may see and change an attachment: its owner, and whoever a share of a folder above it reaches,
// with that share's role — exactly as for the notes of that folder (domain/access.ts decides).
import type { AttachmentRow } from "../../../store/repos/attachments.ts";
import type { Role } from "../../../store/repos/rows.ts";
import type { Tx } from "../../../store/store.ts";
import { atLeast, audience, folderRole } from "../access.ts";
import type { Actor } from "../actor.ts";
import { ownerOnly, readOnly, ServiceError } from "../errors.ts";

const notFound = (id: string) =>
  new ServiceError(
    404,
    "not_found",
    `No attachment with id ${id} is visible to you.`,
    "Check the id (list attachments with GET /api/v1/attachments); it may have been deleted or never shared with you.",
  );

export async function attachmentRole(tx: Tx, actor: Actor, row: AttachmentRow): Promise<Role | null> {
  if (row.owner_id === actor.userId) return "owner";
  if (!row.folder_id) return null;
  const folder = await tx.folders.byId(row.folder_id);
  return folder ? folderRole(tx, actor, folder) : null;
}

/** Loads an attachment the actor can see with at least `needed`; 404 when invisible, 403 when too weak. */
export async function requireAttachment(tx: Tx, actor: Actor, id: string, needed: Role = "reader") {
  const row = await tx.attachments.byId(id);
  const role = row ? await attachmentRole(tx, actor, row) : null;
  if (!row || !role) throw notFound(id);
  if (!atLeast(role, needed)) throw needed === "owner" ? ownerOnly("do this") : readOnly("attachment");
  return { row, role };
}

/** Every account that sees the attachment, with its role: who its feed records go to. */
export function attachmentAudience(tx: Tx, row: AttachmentRow) {
  return audience(tx, { ownerId: row.owner_id, folderId: row.folder_id });
}

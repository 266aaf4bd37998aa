// Reading attachments: one record, a page of records, their bytes (whole or a range), their versions.
import type { AttachmentRow } from "../../../store/repos/attachments.ts";
import type { Tx } from "../../../store/store.ts";
import { loadScope, requireFolder, roleInScope } from "../access.ts";
import type { Actor } from "../actor.ts";
import { ServiceError } from "../errors.ts";
import { LIMITS } from "../limits.ts";
import { requireAttachment } from "./access.ts";
import { type TxtAttachment, toAttachmentVersion, toTxtAttachment } from "./records.ts";

export function decodeAttachmentCursor(cursor: string | undefined): string | undefined {
  if (!cursor) return undefined;
  const id = Buffer.from(cursor, "base64url").toString("utf8");
  if (!/^a_[0-9A-Z]{26}$/.test(id)) {
    throw new ServiceError(
      400,
      "invalid_cursor",
      "cursor: not a cursor returned by this listing.",
      "Pass the `nextCursor` of the previous page unchanged, or omit cursor to start over.",
    );
  }
  return id;
}

export interface AttachmentPage {
  attachments: TxtAttachment[];
  nextCursor: string | null;
  hasMore: boolean;
}

/** A page of the attachments the actor sees (or of one folder's: `root` = the top level). */
export async function listAttachments(
  tx: Tx,
  actor: Actor,
  opts: { limit?: number; cursor?: string; folderId?: string },
): Promise<AttachmentPage> {
  const limit = opts.limit ?? LIMITS.pageDefault;
  const folderId = opts.folderId === "root" ? null : opts.folderId;
  // A folder the caller cannot see is a 404, as for notes (not an empty page).
  if (folderId) await requireFolder(tx, actor, folderId);
  const scope = await loadScope(tx, actor);
  const rows = await tx.attachments.page(
    {
      ownerId: actor.userId,
      sharedFolderIds: [...scope.folderRoles.keys()],
      folderId,
      afterId: decodeAttachmentCursor(opts.cursor),
    },
    limit + 1,
  );
  const hasMore = rows.length > limit;
  const page = rows.slice(0, limit);
  return {
    attachments: page.map((r) => toTxtAttachment(r, roleOf(scope, r))),
    nextCursor: hasMore ? Buffer.from(page.at(-1)!.id).toString("base64url") : null,
    hasMore,
  };
}

const roleOf = (scope: Awaited<ReturnType<typeof loadScope>>, r: AttachmentRow) =>
  roleInScope(scope, { id: r.id, owner_id: r.owner_id, folder_id: r.folder_id }) ?? "reader";

/** The actor's attachments at its top level: GET /api/me's additive `rootAttachments`. */
export async function rootAttachments(tx: Tx, actor: Actor): Promise<TxtAttachment[]> {
  const out: TxtAttachment[] = [];
  let afterId: string | undefined;
  for (;;) {
    const rows = await tx.attachments.page(
      { ownerId: actor.userId, sharedFolderIds: [], folderId: null, afterId },
      LIMITS.pageMax,
    );
    out.push(...rows.map((r) => toTxtAttachment(r, "owner")));
    if (rows.length < LIMITS.pageMax) return out;
    afterId = rows.at(-1)!.id;
  }
}

export async function getAttachment(tx: Tx, actor: Actor, id: string) {
  return requireAttachment(tx, actor, id, "reader");
}

/** The bytes of the attachment's content (`range`: [start, end] inclusive, already satisfiable). */
export async function attachmentBytes(tx: Tx, row: AttachmentRow, range?: [number, number]): Promise<Buffer> {
  const bytes = range
    ? await tx.blobs.range(row.content_hash, range[0], range[1] - range[0] + 1)
    : await tx.blobs.get(row.content_hash);
  if (!bytes) throw new Error(`attachment ${row.id}: blob ${row.content_hash} is missing`);
  return bytes;
}

export async function listAttachmentVersions(tx: Tx, actor: Actor, id: string) {
  const { row } = await requireAttachment(tx, actor, id, "reader");
  const versions = await tx.attachments.versions(id);
  return {
    attachmentId: id,
    currentVersion: row.version_number,
    versions: versions.map((v) => toAttachmentVersion(v, row.version_number)),
  };
}

/** One version's bytes; 404 `version_not_found` for a number never made or pruned. */
export async function attachmentVersionBytes(tx: Tx, actor: Actor, id: string, versionNumber: number) {
  const { row } = await requireAttachment(tx, actor, id, "reader");
  const version = await tx.attachments.version(id, versionNumber);
  if (!version) {
    throw new ServiceError(
      404,
      "version_not_found",
      `Attachment ${id} has no version ${versionNumber} (never made, or past the retention).`,
      "List its versions (GET /api/v1/attachments/:id/versions) and pick one of those.",
    );
  }
  const bytes = await tx.blobs.get(version.content_hash);
  if (!bytes) throw new Error(`attachment ${id} v${versionNumber}: blob ${version.content_hash} is missing`);
  return { row, version, bytes };
}

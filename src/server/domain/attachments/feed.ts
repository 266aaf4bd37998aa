// Attachments in the change feed: kind `attachment`, one row per item and account at its latest seq,
// like notes. Feeds show them only to a reader that asks (`include=attachments`): the spec's
// clients know a closed set of kinds.
import type { AttachmentRow } from "../../../store/repos/attachments.ts";
import type { Role } from "../../../store/repos/rows.ts";
import type { Tx } from "../../../store/store.ts";
import { publishItem } from "../events.ts";
import { attachmentAudience } from "./access.ts";
import { toTxtAttachment } from "./records.ts";

const record = (row: AttachmentRow) => (role: Role) =>
  toTxtAttachment(row, role) as unknown as Record<string, unknown>;

/**
 * Records a created or changed attachment for everyone who sees it; `before` = its audience before
 * the change (a move can narrow it: those who lost it get an `access_revoked` tombstone).
 */
export async function publishAttachment(
  tx: Tx,
  row: AttachmentRow,
  before?: Map<string, Role>,
): Promise<Map<string, number>> {
  const after = await attachmentAudience(tx, row);
  const seqs = await publishItem(tx, "attachment", row.id, after, record(row), { etag: row.etag });
  const lost = new Map([...(before ?? new Map<string, Role>())].filter(([account]) => !after.has(account)));
  if (lost.size > 0) await publishItem(tx, "attachment", row.id, lost, null, { reason: "access_revoked" });
  return seqs;
}

export function publishAttachmentDeleted(tx: Tx, id: string, before: Map<string, Role>) {
  return publishItem(tx, "attachment", id, before, null, { reason: "deleted" });
}

/** A share reached (or stopped reaching) these attachments: re-tell one account of them. */
export async function republishAttachments(tx: Tx, accountId: string, rows: readonly AttachmentRow[]) {
  for (const row of rows) {
    const role = (await attachmentAudience(tx, row)).get(accountId);
    await publishItem(
      tx,
      "attachment",
      row.id,
      new Map([[accountId, role ?? "reader"]]),
      role ? record(row) : null,
      role ? { etag: row.etag } : { reason: "access_revoked" },
    );
  }
}

// Attachments in the change feed: kind `attachment`, one row per item and account at its latest seq,
// like notes. Feeds show them only to a reader that asks (`include=attachments`): the spec's
// clients know a closed set of kinds.

import { nowIso } from "../../../lib/time.ts";
import type { AttachmentRow } from "../../../store/repos/attachments.ts";
import type { Role } from "../../../store/repos/rows.ts";
import type { Tx } from "../../../store/store.ts";
import { publishItem } from "../events.ts";
import { enqueueEvent } from "../webhooks.ts";
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
  await tellWebhooks(tx, row.id, seqs, after, { row, created: row.revision === 1 });
  const lost = new Map([...(before ?? new Map<string, Role>())].filter(([account]) => !after.has(account)));
  if (lost.size > 0) {
    const gone = await publishItem(tx, "attachment", row.id, lost, null, { reason: "access_revoked" });
    await tellWebhooks(tx, row.id, gone, lost, { reason: "access_revoked" });
  }
  return seqs;
}

export async function publishAttachmentDeleted(tx: Tx, id: string, before: Map<string, Role>) {
  const seqs = await publishItem(tx, "attachment", id, before, null, { reason: "deleted" });
  await tellWebhooks(tx, id, seqs, before, { reason: "deleted" });
  return seqs;
}

/** The webhooks of each account hear of the change through the outbox, in the same transaction. */
async function tellWebhooks(
  tx: Tx,
  id: string,
  seqs: Map<string, number>,
  roles: Map<string, Role>,
  change: { row: AttachmentRow; created: boolean } | { reason: string },
) {
  for (const [account, seq] of seqs) {
    const fields =
      "row" in change
        ? {
            deleted: false,
            etag: change.row.etag,
            attachment: record(change.row)(roles.get(account) ?? "reader"),
          }
        : { deleted: true, reason: change.reason };
    const created = "row" in change && change.created;
    await enqueueEvent(tx, account, { seq, kind: "attachment", id, changedAt: nowIso(), ...fields }, created);
  }
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

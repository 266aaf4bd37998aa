// A name in a folder is one item's: a note may not take the name an attachment holds there (the
// mount shows both as files of one directory). Attachments check notes' names themselves (writes.ts).
import type { Tx } from "../../../store/store.ts";
import { ServiceError } from "../errors.ts";

export async function refuseAttachmentName(
  tx: Tx,
  ownerId: string,
  folderId: string | null,
  name: string,
): Promise<void> {
  // Most accounts hold none: a sync of 500 new notes then asks the database once, not 500 times.
  if (!(await tx.attachments.anyOwnedBy(ownerId))) return;
  if (!(await tx.attachments.byPlace(ownerId, folderId, name))) return;
  throw new ServiceError(
    409,
    "conflict",
    `name: ${JSON.stringify(name)} is taken in that folder by an attachment (a file that is not a note).`,
    "Pick another name, or delete or rename the attachment first (/api/v1/attachments).",
  );
}

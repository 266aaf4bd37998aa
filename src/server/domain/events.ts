// Change-feed records of collaboration items (shares, comments, suggestions, versions). They follow
// the same rules as file and folder records (feed.ts): one row per item and account at its latest
// seq, written in the changing transaction, accounts stamped in ascending order (no deadlocks).
import type { ChangeRecord } from "../../lib/apiTypes.ts";
import { nowIso } from "../../lib/time.ts";
import type { FileMetaRow, Role } from "../../store/repos/rows.ts";
import type { Tx } from "../../store/store.ts";
import { republishAttachments } from "./attachments/feed.ts";
import { appendChange, fileAudience, folderAudience } from "./feed.ts";
import { toTxtFile, toTxtFolder } from "./records.ts";

type CollabKind = ChangeRecord["kind"];

/**
 * Publishes one item to `accounts`: its record (null = a tombstone) per role. Returns each
 * account's seq.
 */
export async function publishItem(
  tx: Tx,
  kind: CollabKind,
  itemId: string,
  accounts: Map<string, Role>,
  record: ((role: Role) => Record<string, unknown>) | null,
  extra: { fileId?: string; reason?: string; etag?: string } = {},
): Promise<Map<string, number>> {
  const at = nowIso();
  const seqs = new Map<string, number>();
  const ids = [...accounts.keys()].sort();
  for (const account of ids) {
    const role = accounts.get(account)!;
    const change: Omit<ChangeRecord, "seq"> = record
      ? { kind, id: itemId, deleted: false, changedAt: at, ...extra, [kind]: record(role) }
      : { kind, id: itemId, deleted: true, reason: extra.reason ?? "deleted", changedAt: at, ...extra };
    seqs.set(account, await appendChange(tx, account, change));
  }
  tx.notify(ids);
  return seqs;
}

/** Publishes an item that belongs to a file to everyone who can see the file. */
export async function publishOnFile(
  tx: Tx,
  kind: CollabKind,
  itemId: string,
  file: FileMetaRow,
  record: Record<string, unknown> | null,
) {
  const accounts = await fileAudience(tx, file);
  return publishItem(tx, kind, itemId, accounts, record ? () => record : null, { fileId: file.id });
}

/**
 * Tells one account what a share change did to its view: every file and folder of the shared
 * resource is re-published to it with its new role, or as an `access_revoked` tombstone.
 */
export async function republishAccess(
  tx: Tx,
  accountId: string,
  resourceType: "file" | "folder",
  resourceId: string,
): Promise<void> {
  const files: FileMetaRow[] = [];
  if (resourceType === "folder") {
    // Parents before children, so a client can always place what it receives.
    const ids = await tx.folders.subtreeIds([resourceId]);
    const rows = (await Promise.all(ids.map((id) => tx.folders.byId(id)))).filter((f) => f !== undefined);
    const depth = new Map<string, number>();
    const byId = new Map(rows.map((r) => [r.id, r]));
    const depthOf = (id: string): number => {
      const known = depth.get(id);
      if (known !== undefined) return known;
      const parent = byId.get(id)?.parent_id;
      const d = parent && byId.has(parent) ? depthOf(parent) + 1 : 0;
      depth.set(id, d);
      return d;
    };
    rows.sort((a, b) => depthOf(a.id) - depthOf(b.id) || (a.id < b.id ? -1 : 1));
    for (const folder of rows) {
      const role = (await folderAudience(tx, folder)).get(accountId);
      await publishItem(
        tx,
        "folder",
        folder.id,
        new Map([[accountId, role ?? "reader"]]),
        role ? () => toTxtFolder(folder, role, 0) as unknown as Record<string, unknown> : null,
        role ? {} : { reason: "access_revoked" },
      );
    }
    files.push(...(await tx.files.inFolders(ids, false)));
    await republishAttachments(tx, accountId, await tx.attachments.inFolders(ids));
  } else {
    const file = await tx.files.metaById(resourceId);
    if (file) files.push(file);
  }
  for (const file of files) {
    const role = (await fileAudience(tx, file)).get(accountId);
    await publishItem(
      tx,
      "file",
      file.id,
      new Map([[accountId, role ?? "reader"]]),
      role ? () => toTxtFile(file, role) as unknown as Record<string, unknown> : null,
      role ? { etag: file.etag } : { reason: "access_revoked" },
    );
  }
}

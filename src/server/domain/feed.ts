// The change feed: per account, ordered, written in the same transaction as the change it records.

import type { ChangeRecord } from "../../lib/apiTypes.ts";
import { nowIso } from "../../lib/time.ts";
import type { FileMetaRow, FolderRow, Role } from "../../store/repos/rows.ts";
import type { Tx } from "../../store/store.ts";
import { audience } from "./access.ts";
import type { Actor } from "./actor.ts";
import { ServiceError } from "./errors.ts";
import { LIMITS } from "./limits.ts";
import { type TxtFile, type TxtFolder, toTxtFile, toTxtFolder } from "./records.ts";
import { enqueueEvent } from "./webhooks.ts";

export type ChangeKind = ChangeRecord["kind"];

export type { ChangeRecord };

/** Stamps one item's change into the feed of every account that sees it (or just stopped seeing it). */
async function publish(
  tx: Tx,
  kind: ChangeKind,
  itemId: string,
  visible: Map<string, Role>,
  snapshot: (role: Role) => TxtFile | TxtFolder,
  tombstoneFor: Map<string, string>,
  created = false,
): Promise<Map<string, number>> {
  const at = nowIso();
  const seqs = new Map<string, number>();
  // Ascending account order: concurrent writers lock account rows in the same order (no deadlocks).
  const accounts = [...new Set([...visible.keys(), ...tombstoneFor.keys()])].sort();
  for (const account of accounts) {
    const role = visible.get(account);
    const record: Omit<ChangeRecord, "seq"> = role
      ? { kind, id: itemId, deleted: false, changedAt: at, [kind]: snapshot(role) }
      : { kind, id: itemId, deleted: true, reason: tombstoneFor.get(account) ?? "deleted", changedAt: at };
    if (role && kind === "file") record.etag = (record.file as TxtFile).etag;
    const seq = await appendChange(tx, account, record);
    // The account's webhooks hear of it through the outbox, in this same transaction.
    await enqueueEvent(tx, account, { seq, ...record } as ChangeRecord, created && !!role);
    seqs.set(account, seq);
  }
  tx.notify(accounts);
  return seqs;
}

function revoked(before: Map<string, Role> | undefined, after: Map<string, Role>): Map<string, string> {
  const lost = new Map<string, string>();
  for (const account of before?.keys() ?? []) if (!after.has(account)) lost.set(account, "access_revoked");
  return lost;
}

export async function fileAudience(tx: Tx, file: FileMetaRow) {
  return audience(tx, { ownerId: file.owner_id, fileId: file.id, folderId: file.folder_id });
}

export async function folderAudience(tx: Tx, folder: FolderRow) {
  return audience(tx, { ownerId: folder.owner_id, folderId: folder.id });
}

/**
 * Appends one change to an account's feed at the account's next seq, in the writing transaction
 * (the row replaces the item's older one: the feed keeps each item's latest state). Returns the seq.
 */
export async function appendChange(
  tx: Tx,
  account: string,
  change: Omit<ChangeRecord, "seq">,
): Promise<number> {
  const seq = await tx.users.nextSeq(account);
  await tx.feed.upsert({
    account_id: account,
    seq,
    kind: change.kind,
    item_id: change.id,
    deleted: change.deleted ? 1 : 0,
    reason: change.reason ?? null,
    record: JSON.stringify(change),
    changed_at: change.changedAt,
  });
  return seq;
}

/** Records a created or changed file. `before` = its audience before the change (moves can narrow it). */
export async function publishFile(tx: Tx, file: FileMetaRow, before?: Map<string, Role>) {
  const after = await fileAudience(tx, file);
  return publish(
    tx,
    "file",
    file.id,
    after,
    (role) => toTxtFile(file, role),
    revoked(before, after),
    file.revision === 1,
  );
}

export async function publishFileDeleted(tx: Tx, fileId: string, before: Map<string, Role>) {
  return publish(
    tx,
    "file",
    fileId,
    new Map(),
    () => ({}) as never,
    new Map([...before.keys()].map((a) => [a, "deleted"])),
  );
}

export async function publishFolder(tx: Tx, folder: FolderRow, before?: Map<string, Role>) {
  const after = await folderAudience(tx, folder);
  // fileCount is refreshed when the feed is read, so it is never stale there.
  return publish(
    tx,
    "folder",
    folder.id,
    after,
    (role) => toTxtFolder(folder, role, 0),
    revoked(before, after),
    folder.revision === 1,
  );
}

export async function publishFolderDeleted(tx: Tx, folderId: string, before: Map<string, Role>) {
  return publish(
    tx,
    "folder",
    folderId,
    new Map(),
    () => ({}) as never,
    new Map([...before.keys()].map((a) => [a, "deleted"])),
  );
}

export interface ChangesPage {
  changes: ChangeRecord[];
  cursor: number;
  hasMore: boolean;
}

export function parseCursor(raw: string | undefined): number | "latest" {
  if (raw === undefined || raw === "") return 0;
  if (raw === "latest") return "latest";
  if (!/^\d{1,15}$/.test(raw)) {
    throw new ServiceError(
      400,
      "invalid_cursor",
      `cursor: ${JSON.stringify(raw)} is not a cursor.`,
      "Pass cursor=0 to start from the beginning, or the `cursor` value of the previous response.",
    );
  }
  return Number(raw);
}

export async function readChanges(
  tx: Tx,
  actor: Actor,
  cursorIn: number | "latest",
  limit: number = LIMITS.pageDefault,
  /** `attachments`: include their records (the spec's clients know a closed set of kinds). */
  kinds: { attachments?: boolean } = {},
): Promise<ChangesPage> {
  const user = await tx.users.byId(actor.userId);
  if (!user) throw new Error("actor has no account row");
  const head = Number(user.feed_seq);
  const cursor = cursorIn === "latest" ? head : cursorIn;
  if (cursor > head) {
    throw new ServiceError(
      400,
      "invalid_cursor",
      `cursor ${cursor} is ahead of this account's feed (at ${head}).`,
      "Use a cursor returned by this service; restart from cursor=0 if you lost it.",
    );
  }
  if (cursor !== 0 && cursor < Number(user.feed_floor)) {
    throw new ServiceError(
      410,
      "cursor_expired",
      `cursor ${cursor} is older than the retained change history (tombstones before ${user.feed_floor} were purged).`,
      "Re-list from cursor=0 and reconcile your local state with it, then follow the new cursor.",
    );
  }
  // From 0 a client has nothing to delete, so tombstones are left out (the state is what counts).
  const rows = await tx.feed.since(actor.userId, cursor, limit + 1, cursor !== 0, !kinds.attachments);
  const hasMore = rows.length > limit;
  const page = rows.slice(0, limit);
  const changes = page.map((r) => ({
    seq: Number(r.seq),
    ...(JSON.parse(r.record) as Omit<ChangeRecord, "seq">),
  }));
  const folderIds = changes.filter((c) => c.folder).map((c) => c.id);
  const counts = await tx.folders.fileCounts(folderIds);
  for (const c of changes) if (c.folder) c.folder.fileCount = counts.get(c.id) ?? 0;
  // At the end of the feed the cursor is the head: what this read left out (tombstones from 0,
  // attachments not asked for) is behind it. Otherwise it is the last seq returned.
  const last = page.at(-1);
  const next = !hasMore ? head : Number(last!.seq);
  return { changes, cursor: next, hasMore };
}

/** Drops tombstones older than the retention and raises each account's floor past them. */
export async function purgeTombstones(tx: Tx, retentionDays: number): Promise<number> {
  const before = new Date(Date.now() - retentionDays * 86400_000).toISOString();
  const floors = await tx.feed.purgeTombstones(before);
  for (const [account, seq] of floors) await tx.users.setFeedFloor(account, seq);
  return floors.size;
}

// Bursts of saves go up together: new folders and notes, edits, renames/moves and deletes, up to
// 200 per POST /api/v1/sync, instead of one request each (a shell loop writing 500 notes,
// `mv *.md`, `cp -r`, `mkdir -p`, `rm -rf`, the catch-up after being offline). A new note or folder
// inside a folder made in the same request names it by reference (`{ ref }`). Each edit carries the ETag it was based on, so the
// service never applies one over a remote change: those come back as conflicts and stay in the
// journal for the one-by-one path, which keeps both versions (and tells a metadata-only change
// from a real conflict). A rename alone never conflicts.
//
// The request carries an Idempotency-Key and is kept on disk until its answer is applied: after a
// lost answer (or a crash of the daemon) exactly the same request goes again and the service
// replays its answer, so a new note is never created twice.
import { randomUUID } from "node:crypto";
import type { FolderRef, SyncPushItem, TxtfsClient } from "../../client/api.ts";
import type { TxtFile, TxtFolder } from "../../lib/apiTypes.ts";

export const BULK_ITEMS = 200;
/**
 * Items per request while someone waits for every save to be delivered (unmount, `txtfs sync`,
 * fsync): the service's own limit (docs/api.md, 500 pushed changes), so what is left goes in one
 * request, not one after the other. A service with a lower limit refuses the request whole, and
 * the saves then go one by one (journalReplay.ts).
 */
export const DRAIN_BULK_ITEMS = 500;
const BULK_BYTES = 16 * 1024 * 1024;

export interface BulkItem {
  /** The journal key of the save (Journal.keyOf), and the entry's revision when the bulk was made. */
  key: string;
  rev?: number;
  op: SyncPushItem["op"];
  /** Updates and deletes: the item, and for notes the ETag the change is based on. */
  target?: string;
  baseEtag?: string;
  /** A rename/move only (name and folder, no content): sent without a base, it never conflicts. */
  move?: boolean;
  body?: SyncPushItem["body"];
}

/** What the service did with one item: `meta` for a note it now has; `gone` if it no longer exists. */
export interface BulkResult {
  item: BulkItem;
  status: number;
  meta?: TxtFile;
  /** folder.create: the folder made. */
  folder?: TxtFolder;
  /** The change met a newer remote version (it was not applied). */
  conflict?: boolean;
  gone?: boolean;
}

export interface Bulk {
  idempotencyKey: string;
  items: BulkItem[];
}

/**
 * Groups items into requests within the service's limits. An item referring to a folder made by
 * an item outside its request is left out: it goes in a later round, once that folder exists.
 */
export function bulksOf(items: BulkItem[], most = BULK_ITEMS): Bulk[] {
  const bulks: Bulk[] = [];
  for (let i = 0; i < items.length; ) {
    const chunk: BulkItem[] = [];
    const keys = new Set<string>();
    let bytes = 0;
    while (i < items.length && chunk.length < most) {
      const item = items[i]!;
      const size = Buffer.byteLength(item.body?.content ?? "", "utf8");
      if (chunk.length > 0 && bytes + size > BULK_BYTES) break;
      i++;
      const ref = refOf(item.body?.folderId) ?? refOf(item.body?.parentFolderId);
      if (ref !== undefined && !keys.has(ref)) continue;
      chunk.push(item);
      keys.add(item.key);
      bytes += size;
    }
    if (chunk.length) bulks.push({ idempotencyKey: `bulk-${randomUUID()}`, items: chunk });
  }
  return bulks;
}

const refOf = (f: FolderRef | undefined) => (f && typeof f === "object" ? f.ref : undefined);

/** What became of each item. Throws when the service cannot be reached. */
export async function pushBulk(client: TxtfsClient, bulk: Bulk): Promise<BulkResult[]> {
  const res = await client.sync(
    {
      cursor: "latest", // the change follower does the pulling
      push: bulk.items.map((item) => ({
        id: item.key,
        op: item.op,
        ...(item.target ? { target: item.target } : {}),
        ...(item.target && !item.move ? { baseEtag: item.baseEtag } : {}),
        body: item.body,
      })),
    },
    bulk.idempotencyKey,
  );
  return res.pushResults.map((r, n) => ({
    item: bulk.items[n]!,
    status: r.status,
    meta: r.status < 300 ? r.body?.file : undefined,
    folder: r.status < 300 ? r.body?.folder : undefined,
    conflict: r.conflict?.reason === "changed_remotely",
    gone: r.status === 404 || r.conflict?.reason === "deleted_remotely",
  }));
}

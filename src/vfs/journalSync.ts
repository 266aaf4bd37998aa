// Bursts of saves go up together: new notes, edits and renames/moves of existing ones, up to 200
// per POST /api/v1/sync, instead of one request each (a shell loop writing 500 notes, `mv *.md`,
// `cp -r`, the catch-up after being offline). Each edit carries the ETag it was based on, so the
// service never applies one over a remote change: those come back as conflicts and stay in the
// journal for the one-by-one path, which keeps both versions (and tells a metadata-only change
// from a real conflict). A rename alone never conflicts.
//
// The request carries an Idempotency-Key and is kept on disk until its answer is applied: after a
// lost answer (or a crash of the daemon) exactly the same request goes again and the service
// replays its answer, so a new note is never created twice.
import { randomUUID } from "node:crypto";
import type { TxtfsClient } from "../client/api.ts";
import type { TxtFile } from "../lib/apiTypes.ts";

export const BULK_ITEMS = 200;
const BULK_BYTES = 16 * 1024 * 1024;

export interface BulkItem {
  /** The journal key of the save (Journal.keyOf). */
  key: string;
  op: "file.create" | "file.update";
  /** file.update: the note and the ETag the edit is based on. */
  target?: string;
  baseEtag?: string;
  /** A rename/move only (name and folder, no content): sent without a base, it never conflicts. */
  move?: boolean;
  body: { content?: string; name?: string; folderId?: string | null; context?: string; tags?: string[] };
}

export interface Bulk {
  idempotencyKey: string;
  items: BulkItem[];
}

/** Groups items into requests within the service's limits (at least one item each). */
export function bulksOf(items: BulkItem[]): Bulk[] {
  const bulks: Bulk[] = [];
  for (let i = 0; i < items.length; ) {
    const chunk: BulkItem[] = [];
    let bytes = 0;
    while (i < items.length && chunk.length < BULK_ITEMS) {
      const size = Buffer.byteLength(items[i]!.body.content ?? "", "utf8");
      if (chunk.length > 0 && bytes + size > BULK_BYTES) break;
      chunk.push(items[i]!);
      bytes += size;
      i++;
    }
    bulks.push({ idempotencyKey: `bulk-${randomUUID()}`, items: chunk });
  }
  return bulks;
}

/** The items the service took, with the record each note now has. Throws when it cannot be reached. */
export async function pushBulk(
  client: TxtfsClient,
  bulk: Bulk,
): Promise<{ item: BulkItem; meta: TxtFile }[]> {
  const res = await client.sync(
    {
      cursor: "latest", // the change follower does the pulling
      push: bulk.items.map((item, n) => ({
        id: String(n),
        op: item.op,
        ...(item.target ? { target: item.target } : {}),
        ...(item.target && !item.move ? { baseEtag: item.baseEtag } : {}),
        body: item.body,
      })),
    },
    bulk.idempotencyKey,
  );
  const applied: { item: BulkItem; meta: TxtFile }[] = [];
  res.pushResults.forEach((r, n) => {
    const meta = r.body?.file;
    if ((r.status === 200 || r.status === 201) && meta) applied.push({ item: bulk.items[n]!, meta });
  });
  return applied;
}

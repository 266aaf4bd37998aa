// Catching up after being offline: the journalled edits of existing notes go up in one
// POST /api/v1/sync per 200 notes instead of one PUT each. Each carries the ETag it was based on, so
// the service never applies one over a remote change: those come back as conflicts and are left in
// the journal for the one-by-one path, which keeps both versions (and tells a metadata-only change
// from a real conflict). Creates also take that path (they carry their own Idempotency-Key).
import type { TxtfsClient } from "../client/api.ts";
import type { TxtFile } from "../lib/apiTypes.ts";
import type { JournalEntry } from "./journal.ts";

const PER_REQUEST = 200;
const BYTES_PER_REQUEST = 16 * 1024 * 1024;

/** Entries the service took, with the record each note now has. Throws when it cannot be reached. */
export async function pushJournalled(
  client: TxtfsClient,
  entries: readonly JournalEntry[],
): Promise<{ entry: JournalEntry; meta: TxtFile }[]> {
  // Renames take the one-by-one path (a name change is no content edit with a base).
  const updates = entries.filter((e) => e.fileId && e.baseEtag && e.content !== undefined && !e.move);
  const applied: { entry: JournalEntry; meta: TxtFile }[] = [];
  for (let i = 0; i < updates.length; ) {
    const chunk: JournalEntry[] = [];
    let bytes = 0;
    while (i < updates.length && chunk.length < PER_REQUEST) {
      const e = updates[i]!;
      const size = Buffer.byteLength(e.content!, "utf8");
      if (chunk.length > 0 && bytes + size > BYTES_PER_REQUEST) break;
      chunk.push(e);
      bytes += size;
      i++;
    }
    const res = await client.sync({
      cursor: "latest", // the change follower does the pulling
      push: chunk.map((e, n) => ({
        id: String(n),
        op: "file.update",
        target: e.fileId as string,
        baseEtag: e.baseEtag as string,
        body: { content: e.content! },
      })),
    });
    res.pushResults.forEach((r, n) => {
      const meta = r.body?.file;
      if (r.status === 200 && meta) applied.push({ entry: chunk[n]!, meta });
    });
  }
  return applied;
}

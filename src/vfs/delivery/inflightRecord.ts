// The bulk request on its way as it is kept on disk (journal/bulk.inflight): by reference. A body
// the journal holds (the put record of that entry at that revision) is not written a second time,
// only `{ "journal": rev }` in its place, so recording a request needs a few bytes per item, not
// the size of its bodies: a full disk does not stop the delivery of what it holds. Loading puts
// the bodies back from the log (journal.ts keeps those records while the request is on its way),
// the same bytes in the same place: the request sent again is exactly the one sent before, which
// its Idempotency-Key needs.

export interface InflightItem {
  key: string;
  rev?: number;
  body?: { content?: unknown } & Record<string, unknown>;
}

export interface InflightBulk {
  items?: InflightItem[];
}

/** A body left out of the record: the journal's put of the item's key at this revision holds it. */
interface ContentRef {
  journal: number;
}

const isRef = (c: unknown): c is ContentRef =>
  typeof c === "object" && c !== null && typeof (c as ContentRef).journal === "number";

export const pinKey = (key: string, rev: number) => `${key}\n${rev}`;

/**
 * The record to write for `bulk`: each body `holds(key, rev, content)` confirms the journal has is
 * replaced by a reference (the body object keeps its keys in their order).
 */
export function contentsOf(
  bulk: InflightBulk,
  holds: (key: string, rev: number, content: string) => boolean,
): InflightBulk {
  return {
    ...bulk,
    items: bulk.items?.map((item) => {
      const content = item.body?.content;
      if (typeof content !== "string" || item.rev === undefined || !holds(item.key, item.rev, content))
        return item;
      return { ...item, body: { ...item.body, content: { journal: item.rev } } };
    }),
  };
}

/** The (key, revision) pairs whose bodies a record read from disk refers to. */
export function pinsOf(onDisk: InflightBulk | undefined): Set<string> {
  const pins = new Set<string>();
  for (const item of onDisk?.items ?? []) {
    const content = item.body?.content;
    if (isRef(content)) pins.add(pinKey(item.key, content.journal));
  }
  return pins;
}

/** The request as it was sent: references replaced by the bodies found; `missing` counts the others. */
export function restoreContents(
  onDisk: InflightBulk,
  found: Map<string, string>,
): { bulk: InflightBulk; missing: number } {
  let missing = 0;
  const items = onDisk.items?.map((item) => {
    const content = item.body?.content;
    if (!isRef(content)) return item;
    const body = found.get(pinKey(item.key, content.journal));
    if (body === undefined) missing++;
    return { ...item, body: { ...item.body, content: body } };
  });
  return { bulk: { ...onDisk, items }, missing };
}

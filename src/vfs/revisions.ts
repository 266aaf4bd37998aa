// The order of a note's versions, read from its records: the feed and the answers to our own
// saves arrive in any order, and an older one must never be shown over a newer one.
import type { NoteMeta } from "./treeNodes.ts";

/** The revision an ETag names (`"12-9f..."`): every change of a note moves it by one. */
export const revisionOf = (etag: string) => Number(/^"?(\d+)-/.exec(etag)?.[1] ?? Number.NaN);

/**
 * Whether record `a` is an older version of the note than `b`, by revision: two versions may share
 * a millisecond of updatedAt (our save and the next one), and the feed's record of the first,
 * applied after the answer to the second, would show the older body again.
 */
export function isOlder(a: NoteMeta, b: NoteMeta): boolean {
  // A note deleted remotely and created again by our save is a new note (new id, revision 1).
  if (a.id !== b.id) return false;
  const ra = revisionOf(a.etag);
  const rb = revisionOf(b.etag);
  return Number.isFinite(ra) && Number.isFinite(rb) ? ra < rb : a.updatedAt < b.updatedAt;
}

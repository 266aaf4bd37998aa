// Text ranges of comments and suggestions: half-open [start, end) offsets in UTF-16 code units
// (JavaScript string indices, as Google Docs and LSP count), into the file's current text.
// Every content write moves the open ranges with it (rebase), or marks them `outdated` when the
// text they point at was changed: a range never silently lands on different text.
import type { Tx } from "../../store/store.ts";
import { ServiceError } from "./errors.ts";

const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff;

export const invalidRange = (message: string) =>
  new ServiceError(
    400,
    "invalid_range",
    message,
    "Send selection_start <= selection_end as UTF-16 code-unit offsets (JavaScript string indices) into the file's current content, not inside a surrogate pair; re-read the file if it changed.",
  );

function splitsPair(text: string, at: number): boolean {
  return at > 0 && at < text.length && isHigh(text.charCodeAt(at - 1)) && isLow(text.charCodeAt(at));
}

/** Checks a range against the text; returns the selected text. */
export function checkRange(text: string, start: number, end: number): string {
  if (!Number.isInteger(start) || !Number.isInteger(end) || start < 0 || end < 0)
    throw invalidRange("selection_start and selection_end must be non-negative integers.");
  if (start > end) throw invalidRange(`selection_start (${start}) is after selection_end (${end}).`);
  if (end > text.length)
    throw invalidRange(
      `selection_end (${end}) is beyond the end of the content (${text.length} UTF-16 code units).`,
    );
  if (splitsPair(text, start) || splitsPair(text, end))
    throw invalidRange("The selection splits a surrogate pair (an emoji or other astral character).");
  return text.slice(start, end);
}

export interface EditRegion {
  start: number;
  oldEnd: number;
  newEnd: number;
}

/** The one region where two texts differ (common prefix and suffix stripped). */
export function editRegion(before: string, after: string): EditRegion {
  const max = Math.min(before.length, after.length);
  let p = 0;
  while (p < max && before.charCodeAt(p) === after.charCodeAt(p)) p++;
  let s = 0;
  while (s < max - p && before.charCodeAt(before.length - 1 - s) === after.charCodeAt(after.length - 1 - s))
    s++;
  return { start: p, oldEnd: before.length - s, newEnd: after.length - s };
}

/** Where a range lands after the edit, or null when the edit touched it. */
export function mapRange(
  start: number,
  end: number,
  edit: EditRegion,
): { start: number; end: number } | null {
  if (end <= edit.start) return { start, end };
  if (start >= edit.oldEnd) {
    const delta = edit.newEnd - edit.oldEnd;
    return { start: start + delta, end: end + delta };
  }
  return null;
}

/** Moves the file's open comment anchors and pending suggestions through a content change. */
export async function rebaseAnchors(tx: Tx, fileId: string, before: string, after: string): Promise<void> {
  const comments = await tx.comments.anchoredForFile(fileId);
  const suggestions = await tx.suggestions.pendingForFile(fileId);
  if (comments.length === 0 && suggestions.length === 0) return;
  const edit = editRegion(before, after);
  for (const c of comments) {
    const moved = mapRange(Number(c.selection_start), Number(c.selection_end), edit);
    if (moved && moved.start === Number(c.selection_start)) continue;
    await tx.comments.update(
      moved
        ? { ...c, selection_start: moved.start, selection_end: moved.end }
        : { ...c, anchor_state: "outdated" },
    );
  }
  for (const s of suggestions) {
    const moved = mapRange(Number(s.selection_start), Number(s.selection_end), edit);
    if (moved && moved.start === Number(s.selection_start)) continue;
    await tx.suggestions.update(
      moved
        ? { ...s, selection_start: moved.start, selection_end: moved.end }
        : { ...s, anchor_state: "outdated" },
    );
  }
}

// A note as numbered lines, for agents that read and edit by line (the memory tool's `view` and
// `insert`, read_note's `view_range`/`head`/`tail`). Lines are split on "\n"; a final newline ends
// the last line rather than starting an empty one, as `wc -l` and editors count.
import { ServiceError } from "../domain/errors.ts";

export function splitLines(content: string): string[] {
  if (content === "") return [];
  const body = content.endsWith("\n") ? content.slice(0, -1) : content;
  return body.split("\n");
}

/** Which lines (1-based, inclusive) to show: a `[start, end]` range (end -1: to the last), or head/tail. */
export interface LineSelection {
  view_range?: [number, number];
  head?: number;
  tail?: number;
}

const badRange = (message: string) =>
  new ServiceError(
    400,
    "invalid_range",
    message,
    "Give view_range as [first, last] lines (1-based; last -1 = end).",
  );

/** The first and last line (1-based) a selection names in `count` lines. */
export function selectLines(count: number, sel: LineSelection): { first: number; last: number } {
  const given = [sel.view_range, sel.head, sel.tail].filter((x) => x !== undefined).length;
  if (given > 1) throw badRange("Give only one of view_range, head and tail.");
  if (sel.head !== undefined) return { first: 1, last: Math.min(count, sel.head) };
  if (sel.tail !== undefined) return { first: Math.max(1, count - sel.tail + 1), last: count };
  if (!sel.view_range) return { first: 1, last: count };
  const [first, end] = sel.view_range;
  const last = end === -1 ? count : end;
  if (first < 1 || (count > 0 && first > count) || last < first || last > count)
    throw badRange(`view_range [${first}, ${end}] is outside the note's ${count} lines.`);
  return { first, last };
}

/** `     3\tthe third line`, as `cat -n` numbers them. */
export function numbered(lines: readonly string[], first: number): string {
  return lines.map((line, i) => `${String(first + i).padStart(6)}\t${line}`).join("\n");
}

/** The 1-based numbers of the lines on which `needle` starts, for each occurrence. */
export function linesOf(content: string, needle: string): number[] {
  const out: number[] = [];
  for (let at = content.indexOf(needle); at !== -1; at = content.indexOf(needle, at + 1))
    out.push(content.slice(0, at).split("\n").length);
  return out;
}

// Inline #tags as Obsidian reads them: `#` after the start of a line or a space, then letters,
// digits, `_`, `-` and `/` (nested tags: #tag/sub), at least one of them not a digit (#123 is not a
// tag), never in code or front-matter (proseOf). `# Heading` is a heading: a space follows the `#`.
import { LIMITS } from "../limits.ts";
import { proseOf } from "./markdownText.ts";

const TAG_CHARS = /^[\p{L}\p{N}\p{M}_\-/]+$/u;
const INLINE = /(?<=^|\s)#([\p{L}\p{N}\p{M}_\-/]+)/gmu;

/** A tag as Obsidian keeps it (no `#`, no leading or trailing `/`), or null when it is not one. */
export function normalTag(raw: string): string | null {
  const tag = raw.normalize("NFC").replace(/^\/+|\/+$/g, "");
  if (!tag || !TAG_CHARS.test(tag) || /^[\p{N}/]+$/u.test(tag)) return null;
  if ([...tag].length > LIMITS.tagChars) return null; // the service's own limit on a tag
  return tag;
}

/** The note's inline tags in the order written, each once (case-insensitively, first spelling kept). */
export function inlineTags(note: string): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const m of proseOf(note).matchAll(INLINE)) {
    const tag = normalTag(m[1]!);
    if (!tag || seen.has(tag.toLowerCase())) continue;
    seen.add(tag.toLowerCase());
    out.push(tag);
  }
  return out;
}

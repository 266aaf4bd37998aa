// A note's tags are the ones set through the API (or an xattr) and the ones its own text declares
// (front-matter `tags:` and inline #tags). The record's `tags` shows both, the set ones first, at
// most LIMITS.tags; the note's bytes are never rewritten to add or drop a tag. docs/api.md states
// the rule: a request that changes only tags may set and remove set tags, but not remove a tag the
// text declares; a request carrying content is never refused for its tags (a save is never lost
// to metadata): the text's tags simply stay.
import { ServiceError } from "../errors.ts";
import { LIMITS } from "../limits.ts";
import { readFrontMatter } from "./frontMatter.ts";
import { inlineTags } from "./inlineTags.ts";

const key = (t: string) => t.normalize("NFC").toLowerCase();

/** Tags the note's text declares: front-matter first, then inline, each once (case-insensitively). */
export function declaredTags(note: string): string[] {
  const out: string[] = [];
  for (const tag of [...readFrontMatter(note).tags, ...inlineTags(note)])
    if (!out.some((t) => key(t) === key(tag))) out.push(tag);
  return out;
}

/** The tags a request sets that the text does not declare: what the service keeps apart. */
export function setPart(requested: readonly string[], declared: readonly string[]): string[] {
  const d = new Set(declared.map(key));
  return requested.filter((t) => !d.has(key(t)));
}

/** The record's tags: the set ones, then the declared ones not among them, at most LIMITS.tags. */
export function shownTags(set: readonly string[], declared: readonly string[]): string[] {
  const out = [...set];
  for (const tag of declared) if (!out.some((t) => key(t) === key(tag))) out.push(tag);
  return out.slice(0, LIMITS.tags);
}

/**
 * A request that sets only tags gets exactly what it asked for, or is refused: no tag it dropped
 * (shown before, not named now) is still shown, and every tag it names is. The second holds by
 * construction (set tags come first, at most LIMITS.tags of them); checked so that it cannot fail
 * silently.
 */
export function checkTagRequest(
  requested: readonly string[],
  before: readonly string[],
  after: readonly string[],
): void {
  const shown = new Set(after.map(key));
  const asked = new Set(requested.map(key));
  const kept = before.filter((t) => !asked.has(key(t)) && shown.has(key(t)));
  if (kept.length)
    throw new ServiceError(
      409,
      "tag_declared_by_note",
      `tags: ${kept.map((t) => `'${t}'`).join(", ")} ${kept.length === 1 ? "is" : "are"} declared by the note's own text (front-matter \`tags:\` or an inline #tag), so a request cannot remove ${kept.length === 1 ? "it" : "them"}.`,
      "Edit the note's text to remove the tag (or send the tags the record shows).",
      { declared: kept },
    );
  const hidden = requested.filter((t) => !shown.has(key(t)));
  if (hidden.length)
    throw new ServiceError(
      409,
      "too_many_tags",
      `tags: the note's text declares enough tags that ${hidden.map((t) => `'${t}'`).join(", ")} would not be shown (a record shows at most ${LIMITS.tags}).`,
      "Set fewer tags, or remove some from the note's text.",
      { hidden },
    );
}

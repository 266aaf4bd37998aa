// Links and embeds as Obsidian writes them: [[Note]], [[Note|alias]], [[Note#Heading]],
// [[Note#^block]], ![[embed.png]], [text](relative/path.md), [text](<path with spaces.md>) and
// ![alt](image.png). Read from the prose only (proseOf: not front-matter, not code); links to
// other sites (http:, mailto:, any scheme) and to the note itself ([[#Heading]]) are not links
// between notes.
import { proseOf } from "./markdownText.ts";

export interface NoteLink {
  /** The link as written, e.g. `[[Note#Heading|shown]]`. */
  text: string;
  /** The path it names, decoded, without `#subpath` or `|display`, e.g. `folder/Note`. */
  path: string;
  /** `#Heading` or `#^block`, as written, or "". */
  subpath: string;
  /** `![[…]]` or `![…](…)`: shows the target inside the note instead of linking to it. */
  embed: boolean;
  /** Where `text` starts in the note. */
  offset: number;
}

/** Links a note may hold before the rest are ignored: bounds the work of one save. */
export const MAX_LINKS = 2000;

const WIKI = /(!?)\[\[([^[\]\n]+?)\]\]/g;
// [text](<target with spaces> "title") or [text](target "title"); text without brackets inside.
const MARKDOWN = /(!?)\[([^[\]\n]*)\]\(\s*(<[^<>\n]+>|[^\s()<>]+)(?:\s+(?:"[^"\n]*"|'[^'\n]*'))?\s*\)/g;
const SCHEME = /^[a-z][a-z0-9+.-]*:/i;

function escaped(text: string, at: number): boolean {
  let n = 0;
  while (at - 1 - n >= 0 && text[at - 1 - n] === "\\") n++;
  return n % 2 === 1;
}

function decode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s; // a stray % is a character of the name
  }
}

/** `path#subpath` -> its two parts (the first `#` starts the subpath, as in Obsidian). */
function splitSubpath(target: string): { path: string; subpath: string } {
  const hash = target.indexOf("#");
  if (hash === -1) return { path: target.trim(), subpath: "" };
  return { path: target.slice(0, hash).trim(), subpath: target.slice(hash).trim() };
}

/** Every link and embed in the note's prose, in the order written, at most MAX_LINKS. */
export function parseLinks(note: string): NoteLink[] {
  const prose = proseOf(note);
  const found: NoteLink[] = [];
  const taken: [number, number][] = [];
  for (const m of prose.matchAll(WIKI)) {
    const at = m.index;
    if (escaped(prose, at)) continue;
    taken.push([at, at + m[0].length]);
    // In a table the pipe is escaped: [[Note\|shown]].
    const inner = m[2]!;
    const pipe = inner.search(/\\?\|/);
    const target = pipe === -1 ? inner : inner.slice(0, pipe);
    const { path, subpath } = splitSubpath(target);
    if (!path) continue; // [[#Heading]]: this note's own heading
    found.push({ text: note.slice(at, at + m[0].length), path, subpath, embed: m[1] === "!", offset: at });
  }
  for (const m of prose.matchAll(MARKDOWN)) {
    const at = m.index;
    if (escaped(prose, at) || taken.some(([s, e]) => at < e && at + m[0].length > s)) continue;
    let target = m[3]!;
    if (target.startsWith("<")) target = target.slice(1, -1);
    if (SCHEME.test(target) || target.startsWith("//")) continue; // another site
    const { path, subpath } = splitSubpath(target);
    const decoded = decode(path);
    if (!decoded) continue; // (#heading): this note
    found.push({
      text: note.slice(at, at + m[0].length),
      path: decoded,
      subpath: decode(subpath),
      embed: m[1] === "!",
      offset: at,
    });
  }
  found.sort((a, b) => a.offset - b.offset);
  return found.slice(0, MAX_LINKS);
}

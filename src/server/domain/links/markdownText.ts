// The parts of a note Obsidian reads links and tags from: the body after the YAML front-matter,
// with code (fenced blocks and inline spans) blanked out. Blanking keeps every offset, so what a
// scanner finds can be quoted from the original text.

export interface NoteParts {
  /** The YAML between the opening and closing `---` lines, or null when the note has none. */
  frontMatter: string | null;
  /** Where the body starts in the note. */
  bodyStart: number;
}

/** Front-matter is a `---` first line up to the next `---` (or `...`) line, as Obsidian reads it. */
export function splitFrontMatter(text: string): NoteParts {
  const first = /^---[ \t]*\r?\n/.exec(text);
  if (!first) return { frontMatter: null, bodyStart: 0 };
  const close = /^(?:---|\.\.\.)[ \t]*(?:\r?\n|$)/gm;
  close.lastIndex = first[0].length;
  // An empty front-matter block: the closing line follows the opening one at once.
  const end = close.exec(text);
  if (!end) return { frontMatter: null, bodyStart: 0 };
  return { frontMatter: text.slice(first[0].length, end.index), bodyStart: end.index + end[0].length };
}

const blank = (s: string) => s.replace(/[^\n]/g, " ");

/** Fenced code blocks (``` or ~~~, closed by a fence of the same kind at least as long, or the end). */
function blankFences(body: string): string {
  const lines = body.split("\n");
  let fence: { char: string; len: number } | null = null;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const m = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (fence) {
      const closes =
        m && m[1]![0] === fence.char && m[1]!.length >= fence.len && /^\s*$/.test(line.slice(m[0].length));
      lines[i] = blank(line);
      if (closes) fence = null;
    } else if (m && !(m[1]![0] === "`" && line.slice(m[0].length).includes("`"))) {
      fence = { char: m[1]![0]!, len: m[1]!.length };
      lines[i] = blank(line);
    }
  }
  return lines.join("\n");
}

/** Inline code: a run of n backticks up to the next run of exactly n (an unclosed run is text). */
function blankInlineCode(text: string): string {
  let out = "";
  let i = 0;
  while (i < text.length) {
    if (text[i] !== "`") {
      const next = text.indexOf("`", i);
      const end = next === -1 ? text.length : next;
      out += text.slice(i, end);
      i = end;
      continue;
    }
    let n = 0;
    while (text[i + n] === "`") n++;
    // A code span ends within its paragraph: the search stops at the next blank line.
    const para = /\n[ \t]*\n/g;
    para.lastIndex = i + n;
    const paraEnd = para.exec(text)?.index ?? text.length;
    const closer = new RegExp(`(?<!\`)\`{${n}}(?!\`)`, "g");
    closer.lastIndex = i + n;
    const m = closer.exec(text);
    if (!m || m.index > paraEnd) {
      out += text.slice(i, i + n);
      i += n;
      continue;
    }
    out += blank(text.slice(i, m.index + n));
    i = m.index + n;
  }
  return out;
}

/** The note's body with front-matter and code blanked: same length, same offsets as `text`. */
export function proseOf(text: string): string {
  const { bodyStart } = splitFrontMatter(text);
  return blank(text.slice(0, bodyStart)) + blankInlineCode(blankFences(text.slice(bodyStart)));
}

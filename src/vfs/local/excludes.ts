// The exclude list: which paths of the mount stay on this machine only. Patterns are read the way
// `.gitignore` reads them (what rclone's filters and git's docs define): `*` and `?` within one
// name, `[a-z]` classes, `**` across folders, a trailing `/` for folders only, a `/` at the start
// or in the middle anchors the pattern at the mount root (else it matches a name at any depth),
// `!` re-includes, `#` starts a comment, `\` escapes. The last pattern that matches decides, and
// what is inside an excluded folder stays excluded (as in git: a file cannot be re-included then).
// Pure: parsing and matching only; who reads `.txtfsignore` is mountExcludes.ts.

/** One pattern, compiled. */
export interface ExcludeRule {
  /** As written (without `!`), for `txtfs status`: "excluded by PATTERN". */
  pattern: string;
  negated: boolean;
  dirOnly: boolean;
  /** Matched against the whole path from the mount root, or against one name. */
  anchored: boolean;
  regex: RegExp;
}

export class ExcludePatternError extends Error {
  constructor(pattern: string, why: string) {
    super(`bad exclude pattern '${pattern}': ${why}`);
    this.name = "ExcludePatternError";
  }
}

/**
 * What stays local when nothing else is said: editors' swap, lock and backup files (vim's `.x.swp`
 * family, `x~` and its `4913` write probe; emacs' `#x#` and `.#x`), libfuse's `.fuse_hidden*` and
 * the folder files of macOS and Windows. Not `*.tmp`: a program's output may be named so, and an
 * editor's temporary file is renamed to its real name anyway. Folders tools keep state in (`.git`,
 * `node_modules`) are local by localDirs.ts.
 */
export const DEFAULT_EXCLUDES = [
  ".*.sw[a-px]",
  ".sw[a-px]",
  "*~",
  "4913",
  "\\#*#",
  ".#*",
  ".fuse_hidden*",
  ".DS_Store",
  "._*",
  "Thumbs.db",
  "desktop.ini",
];

/** A `.gitignore`-style line: undefined for a blank line or a comment. Throws ExcludePatternError. */
export function parseExcludeLine(line: string): ExcludeRule | undefined {
  let text = line.replace(/\r$/, "");
  if (text.startsWith("#")) return undefined;
  text = trimTrailingSpaces(text);
  if (text === "") return undefined;
  return parseExclude(text);
}

/** One pattern as given (`--exclude PATTERN`): no comment or whitespace rules. Throws ExcludePatternError. */
export function parseExclude(written: string): ExcludeRule {
  if (written.includes("\0")) throw new ExcludePatternError(written, "a NUL byte");
  let p = written;
  const negated = p.startsWith("!");
  if (negated) p = p.slice(1);
  const dirOnly = p.endsWith("/") && !p.endsWith("\\/");
  if (dirOnly) p = p.slice(0, -1);
  if (p === "" || p === "/") throw new ExcludePatternError(written, "it names no file");
  const anchored = p.includes("/");
  if (p.startsWith("/")) p = p.slice(1);
  if (p.split("/").some((part) => part === ""))
    throw new ExcludePatternError(written, "an empty folder name (//)");
  return {
    pattern: negated ? written.slice(1) : written,
    negated,
    dirOnly,
    anchored,
    regex: new RegExp(`^${globToRegex(p, written)}$`, "su"),
  };
}

/** Trailing spaces end a line unless escaped with `\`. */
function trimTrailingSpaces(text: string): string {
  let end = text.length;
  while (end > 0 && text[end - 1] === " ") {
    let slashes = 0;
    for (let i = end - 2; i >= 0 && text[i] === "\\"; i--) slashes++;
    if (slashes % 2 === 1) break;
    end--;
  }
  return text.slice(0, end);
}

// Characters a regex reads as syntax, escaped (in a class, `-` too).
const escapeChar = (c: string) => c.replace(/[.*+?^${}()|[\]\\/]/gu, "\\$&");
const escapeInClass = (c: string) => c.replace(/[\\\]^[/-]/gu, "\\$&");

/** The body of a regex for a glob whose `/`s separate folders. */
function globToRegex(glob: string, written: string): string {
  const chars = [...glob];
  let out = "";
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!;
    if (c === "\\") {
      const next = chars[++i];
      if (next === undefined) throw new ExcludePatternError(written, "it ends with a lone \\");
      out += escapeChar(next);
    } else if (c === "*") {
      const atStart = i === 0 || chars[i - 1] === "/";
      let j = i;
      while (chars[j + 1] === "*") j++;
      const double = j > i;
      const atEnd = j === chars.length - 1 || chars[j + 1] === "/";
      if (double && atStart && atEnd) {
        // `**` as a whole folder name: any number of folders, none included.
        if (j === chars.length - 1) out += ".*";
        else {
          out += "(?:[^/]*/)*";
          j++; // the `/` after it is part of what it matches
        }
      } else out += "[^/]*"; // other runs of `*` are one `*`, as in git
      i = j;
    } else if (c === "?") out += "[^/]";
    else if (c === "[") {
      const end = classEnd(chars, i);
      if (end < 0) throw new ExcludePatternError(written, "a [ without its ]");
      out += classToRegex(chars.slice(i + 1, end));
      i = end;
    } else out += escapeChar(c);
  }
  return out;
}

/** The index of the `]` closing the class opened at `start`, or -1. */
function classEnd(chars: string[], start: number): number {
  let i = start + 1;
  if (chars[i] === "!" || chars[i] === "^") i++;
  if (chars[i] === "]") i++; // a `]` first is a member
  for (; i < chars.length; i++) {
    if (chars[i] === "\\") i++;
    else if (chars[i] === "]") return i;
  }
  return -1;
}

function classToRegex(body: string[]): string {
  let i = 0;
  let out = "[";
  if (body[0] === "!" || body[0] === "^") {
    out += "^/";
    i = 1;
  }
  const first = i;
  for (; i < body.length; i++) {
    const c = body[i]!;
    if (c === "\\" && i + 1 < body.length) out += escapeInClass(body[++i]!);
    else if (c === "-" && i > first && i < body.length - 1) out += "-";
    else out += escapeInClass(c);
  }
  return `${out}]`;
}

/** Which rule decides about one path (the last that matches it), if any. */
function decidingRule(rules: readonly ExcludeRule[], path: string, isDir: boolean): ExcludeRule | undefined {
  const name = path.slice(path.lastIndexOf("/") + 1);
  for (let i = rules.length - 1; i >= 0; i--) {
    const r = rules[i]!;
    if (r.dirOnly && !isDir) continue;
    if (r.regex.test(r.anchored ? path : name)) return r;
  }
  return undefined;
}

/**
 * The rule that keeps `path` (from the mount root, no leading `/`: `a/b.md`) on this machine, or
 * undefined when none does. `isDir`: whether the path itself is a folder.
 */
export function excludedBy(
  rules: readonly ExcludeRule[],
  path: string,
  isDir: boolean,
): ExcludeRule | undefined {
  if (rules.length === 0) return undefined;
  const parts = path.split("/").filter((p) => p !== "");
  let sub = "";
  for (let i = 0; i < parts.length; i++) {
    sub = sub ? `${sub}/${parts[i]}` : parts[i]!;
    const last = i === parts.length - 1;
    const rule = decidingRule(rules, sub, last ? isDir : true);
    if (rule && !rule.negated) return rule;
  }
  return undefined;
}

// The exclude list: which paths of the mount stay on this machine only. Patterns are read the way
// `.gitignore` reads them (what rclone's filters and git's docs define): `*` and `?` within one
// name, `[a-z]` classes, `**` across folders, a trailing `/` for folders only, a `/` at the start
// or in the middle anchors the pattern at the mount root (else it matches a name at any depth),
// `!` re-includes, `#` starts a comment, `\` escapes. The last pattern that matches decides, and
// what is inside an excluded folder stays excluded (as in git: a file cannot be re-included then).
// Matching is on UTF-8 bytes, as git's wildmatch: `?` and a class match one byte, so `?` is not
// `é` (two bytes) and `[é]` is the class of its two bytes (globBytes.ts).
// Pure: parsing and matching only; who reads `.txtfsignore` is mountExcludes.ts.
import { asByteString, globBytesRegex } from "./globBytes.ts";

/** One pattern, compiled. */
export interface ExcludeRule {
  /** As written (without `!`), for `txtfs status`: "excluded by PATTERN". */
  pattern: string;
  negated: boolean;
  dirOnly: boolean;
  /** Matched against the whole path from the mount root, or against one name. */
  anchored: boolean;
  /** Whether the pattern matches `subject` (a path or a name), byte for byte as git's wildmatch. */
  matches(subject: string): boolean;
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
  const regex = globBytesRegex(p, (why) => new ExcludePatternError(written, why));
  return {
    pattern: negated ? written.slice(1) : written,
    negated,
    dirOnly,
    anchored,
    matches: (subject) => regex.test(asByteString(subject)),
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

/** Which rule decides about one path (the last that matches it), if any. */
function decidingRule(rules: readonly ExcludeRule[], path: string, isDir: boolean): ExcludeRule | undefined {
  const name = path.slice(path.lastIndexOf("/") + 1);
  for (let i = rules.length - 1; i >= 0; i--) {
    const r = rules[i]!;
    if (r.dirOnly && !isDir) continue;
    if (r.matches(r.anchored ? path : name)) return r;
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

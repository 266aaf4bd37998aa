// A `.gitignore` glob as a regex over bytes, read the way git's wildmatch (wildmatch.c, with
// WM_PATHNAME) reads it: pattern and subject are both UTF-8 bytes, so `?` and a `[...]` class match
// one byte (`?` is not `é`, two bytes; `[é]` is the class of its two bytes). The regexes match
// byte strings, one character per byte: asByteString gives one from a name or path.

/** `text`'s UTF-8 bytes as a string of one character per byte, what globBytesRegex's regexes match. */
export function asByteString(text: string): string {
  return Buffer.from(text, "utf8").toString("latin1");
}

const SLASH = 0x2f;
const STAR = 0x2a;
const QUESTION = 0x3f;
const OPEN = 0x5b;
const CLOSE = 0x5d;
const BACKSLASH = 0x5c;
const BANG = 0x21;
const CARET = 0x5e;
const DASH = 0x2d;
const COLON = 0x3a;

const hex = (byte: number) => `\\x${byte.toString(16).padStart(2, "0")}`;
const between = (lo: number, hi: number) => (b: number) => b >= lo && b <= hi;
const isUpper = between(0x41, 0x5a);
const isLower = between(0x61, 0x7a);
const isDigit = between(0x30, 0x39);
const isAlpha = (b: number) => isUpper(b) || isLower(b);

// `[:name:]` inside a class: git's own locale-free ctype (sane-ctype.h), ASCII only; its space is
// tab, newline, return and space (no vertical tab or form feed).
const CTYPE: Record<string, (b: number) => boolean> = {
  alnum: (b) => isAlpha(b) || isDigit(b),
  alpha: isAlpha,
  blank: (b) => b === 0x20 || b === 0x09,
  cntrl: (b) => b < 0x20 || b === 0x7f,
  digit: isDigit,
  graph: between(0x21, 0x7e),
  lower: isLower,
  print: between(0x20, 0x7e),
  punct: (b) => between(0x21, 0x7e)(b) && !isAlpha(b) && !isDigit(b),
  space: (b) => b === 0x09 || b === 0x0a || b === 0x0d || b === 0x20,
  upper: isUpper,
  xdigit: (b) => isDigit(b) || between(0x41, 0x46)(b) || between(0x61, 0x66)(b),
};

/**
 * The regex (anchored at both ends) for `glob`, whose `/`s separate folders. `fail(why)` makes the
 * error thrown for a pattern git could never match (a lone `\` at the end, a `[` without its `]`, an
 * unknown `[:class:]`).
 */
export function globBytesRegex(glob: string, fail: (why: string) => Error): RegExp {
  const b = Buffer.from(glob, "utf8");
  let out = "";
  for (let i = 0; i < b.length; i++) {
    const c = b[i]!;
    if (c === BACKSLASH) {
      if (i + 1 >= b.length) throw fail("it ends with a lone \\");
      out += hex(b[++i]!);
    } else if (c === STAR) {
      const atStart = i === 0 || b[i - 1] === SLASH;
      let j = i;
      while (b[j + 1] === STAR) j++;
      const next = j + 1;
      const beforeSlash = b[next] === SLASH;
      const beforeEscapedSlash = b[next] === BACKSLASH && b[next + 1] === SLASH;
      if (j > i && atStart && (next === b.length || beforeSlash || beforeEscapedSlash)) {
        // `**` as a whole folder name. Before a plain `/`: any number of folders, none included;
        // at the end, or before `\/` (which git does not shortcut to no folder): anything.
        if (beforeSlash) {
          out += "(?:[^/]*/)*";
          j++;
        } else out += ".*";
      } else out += "[^/]*"; // other runs of `*` are one `*`, as in git
      i = j;
    } else if (c === QUESTION) out += "[^/]";
    else if (c === OPEN) {
      const { members, end } = readClass(b, i, fail);
      out += membersToRegex(members);
      i = end;
    } else out += hex(c);
  }
  return new RegExp(`^${out}$`, "s");
}

/** The bytes the class opened at `start` matches, and the index of its closing `]` (wildmatch's loop). */
function readClass(
  b: Buffer,
  start: number,
  fail: (why: string) => Error,
): { members: boolean[]; end: number } {
  const unclosed = () => fail("a [ without its ]");
  const set = new Array<boolean>(256).fill(false);
  let i = start + 1;
  let c = b[i];
  const negated = c === BANG || c === CARET;
  if (negated) c = b[++i];
  let prev = 0; // no byte before (a NUL never is in a pattern): a `-` here is a member
  do {
    if (c === undefined) throw unclosed();
    if (c === BACKSLASH) {
      c = b[++i];
      if (c === undefined) throw unclosed();
      set[c] = true;
    } else if (c === DASH && prev !== 0 && b[i + 1] !== undefined && b[i + 1] !== CLOSE) {
      c = b[++i]!;
      if (c === BACKSLASH) {
        c = b[++i];
        if (c === undefined) throw unclosed();
      }
      for (let t = prev; t <= c; t++) set[t] = true;
      c = 0; // a range ends what a next `-` could extend
    } else if (c === OPEN && b[i + 1] === COLON) {
      const nameStart = i + 2;
      let j = nameStart;
      while (b[j] !== undefined && b[j] !== CLOSE) j++;
      if (b[j] === undefined) throw unclosed();
      if (j - nameStart < 1 || b[j - 1] !== COLON)
        set[OPEN] = true; // no `:]`: a plain `[`
      else {
        const name = b.subarray(nameStart, j - 1).toString("latin1");
        const inClass = Object.hasOwn(CTYPE, name) ? CTYPE[name] : undefined;
        if (!inClass) throw fail(`an unknown class [:${name}:]`);
        for (let t = 0; t < 256; t++) if (inClass(t)) set[t] = true;
        i = j;
        c = 0;
      }
    } else set[c] = true;
    prev = c;
    c = b[++i];
  } while (c !== CLOSE);
  // With WM_PATHNAME no class matches a `/`, not even `[/]` or `[!a]`.
  const members = set.map((inSet, t) => inSet !== negated && t !== SLASH);
  return { members, end: i };
}

/** A regex class of exactly the bytes marked in `members` (one that never matches when none is). */
function membersToRegex(members: boolean[]): string {
  let out = "";
  for (let t = 0; t < 256; t++) {
    if (!members[t]) continue;
    let end = t;
    while (end + 1 < 256 && members[end + 1]) end++;
    out += end === t ? hex(t) : `${hex(t)}-${hex(end)}`;
    t = end;
  }
  return out === "" ? "(?!)" : `[${out}]`;
}

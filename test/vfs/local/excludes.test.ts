// The exclude matcher (src/vfs/local/excludes.ts): examples of each rule, the defaults, bad
// patterns, and a property test against git itself: for random `.gitignore` files and random trees,
// the files `git ls-files -o -i` calls ignored are exactly the ones the matcher excludes.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  DEFAULT_EXCLUDES,
  ExcludePatternError,
  excludedBy,
  parseExclude,
  parseExcludeLine,
} from "../../../src/vfs/local/excludes.ts";

const rules = (...patterns: string[]) => patterns.map(parseExclude);
const by = (patterns: string[], path: string, isDir = false) =>
  excludedBy(rules(...patterns), path, isDir)?.pattern;

describe("exclude patterns", () => {
  it("keeps editors' swap and backup files and the folder files of macOS and Windows local by default", () => {
    const d = DEFAULT_EXCLUDES;
    for (const [path, pattern] of [
      [".note.md.swp", ".*.sw[a-px]"],
      ["a/.note.md.swo", ".*.sw[a-px]"],
      [".note.md.swx", ".*.sw[a-px]"],
      ["note.md~", "*~"],
      ["4913", "4913"],
      ["a/#note.md#", "\\#*#"],
      [".#note.md", ".#*"],
      [".fuse_hidden000a", ".fuse_hidden*"],
      ["photos/.DS_Store", ".DS_Store"],
      ["._note.md", "._*"],
      ["Thumbs.db", "Thumbs.db"],
      ["x/desktop.ini", "desktop.ini"],
    ])
      expect(by(d, path!), path).toBe(pattern);
    for (const path of ["note.md", "a/b.txt", "image.png", ".txtfsignore", "report.tmp", "a.sw", "x4913"])
      expect(by(d, path), path).toBeUndefined();
  });

  it("matches a name at any depth, or a path from the root when the pattern holds a /", () => {
    expect(by(["secret.md"], "a/b/secret.md")).toBe("secret.md");
    expect(by(["/secret.md"], "secret.md")).toBe("/secret.md");
    expect(by(["/secret.md"], "a/secret.md")).toBeUndefined();
    expect(by(["a/secret.md"], "a/secret.md")).toBe("a/secret.md");
    expect(by(["a/secret.md"], "b/a/secret.md")).toBeUndefined();
    expect(by(["*.draft.md"], "x/y.draft.md")).toBe("*.draft.md");
    expect(by(["*.md"], "a/b.md")).toBe("*.md"); // `*` within a name
    expect(by(["a/*.md"], "a/b/c.md")).toBeUndefined(); // ...never across folders
    expect(by(["?.md"], "ab.md")).toBeUndefined();
    expect(by(["[ab].md"], "b.md")).toBe("[ab].md");
    expect(by(["[!ab].md"], "b.md")).toBeUndefined();
    expect(by(["[a-c]x"], "bx")).toBe("[a-c]x");
  });

  it("reads ** as any number of folders, and a trailing / as folders only", () => {
    expect(by(["**/drafts"], "drafts/a.md")).toBe("**/drafts");
    expect(by(["**/drafts"], "x/y/drafts/a.md")).toBe("**/drafts");
    expect(by(["docs/**/secret*"], "docs/secret.md")).toBe("docs/**/secret*");
    expect(by(["docs/**/secret*"], "docs/a/b/secret2.md")).toBe("docs/**/secret*");
    expect(by(["out/**"], "out/a/b.md")).toBe("out/**");
    expect(by(["out/**"], "out", true)).toBeUndefined();
    expect(by(["build/"], "build/x.md")).toBe("build/");
    expect(by(["build/"], "a/build", true)).toBe("build/");
    expect(by(["build/"], "build")).toBeUndefined(); // a file named build
  });

  it("re-includes with !, the last match deciding; never inside an excluded folder", () => {
    expect(by(["*.md", "!keep.md"], "keep.md")).toBeUndefined();
    expect(by(["!keep.md", "*.md"], "keep.md")).toBe("*.md");
    expect(by(["private/", "!private/keep.md"], "private/keep.md")).toBe("private/");
    expect(by(["private/*", "!private/keep.md"], "private/keep.md")).toBeUndefined();
  });

  it("reads a .txtfsignore line as git does: comments, blanks, trailing spaces, escapes", () => {
    expect(parseExcludeLine("# a comment")).toBeUndefined();
    expect(parseExcludeLine("   ")).toBeUndefined();
    expect(parseExcludeLine("a.md   ")?.pattern).toBe("a.md");
    expect(parseExcludeLine("a\\ ")?.matches("a ")).toBe(true);
    expect(parseExcludeLine("\\#x")?.matches("#x")).toBe(true);
    expect(parseExcludeLine("\\!x")?.negated).toBe(false);
    expect(parseExcludeLine("x.md\r")?.pattern).toBe("x.md");
  });

  it("refuses a pattern that cannot mean anything, naming why", () => {
    for (const [bad, why] of [
      ["[abc", "a [ without its ]"],
      ["a\\", "a lone \\"],
      ["!", "names no file"],
      ["/", "names no file"],
      ["", "names no file"],
      ["a//b", "empty folder name"],
    ]) {
      expect(() => parseExclude(bad!), bad).toThrow(ExcludePatternError);
      expect(() => parseExclude(bad!), bad).toThrow(why!);
    }
  });
});

describe("exclude patterns on non-ASCII names, byte for byte as git's wildmatch", () => {
  // [pattern, path (a file), whether git ignores it]: each checked by hand against git 2.39, the
  // first two the counterexamples of issue 48. `?` and a class take one UTF-8 byte.
  const CASES: [string, string, boolean][] = [
    ["?[!a]md", "é.md/a", false],
    ["??md", "é.md", false],
    ["?.md", "é.md", false], // é: 2 bytes
    ["??.md", "é.md", true],
    ["?.md", "中.md", false], // 中: 3 bytes
    ["???.md", "中.md", true],
    ["?.md", "😀.md", false], // 😀: 4 bytes
    ["????.md", "😀.md", true],
    ["??.md", "e\u0301.md", false], // e and a combining acute: 3 bytes
    ["???.md", "e\u0301.md", true],
    ["e\u0301.md", "é.md", false], // no normalizing
    ["[!a].md", "é.md", false],
    ["[!a][!a].md", "é.md", true],
    ["[!é][!é].md", "é.md", false],
    ["[!é]?.md", "中.md", false],
    ["[é].md", "é.md", false], // [é] is the class of its two bytes
    ["[é][é].md", "é.md", true],
    ["*[é]", "aé", true],
    ["[]é]?", "é", true],
    ["[a-z].md", "é.md", false],
    ["[a-é].md", "é.md", false], // a up to é's first byte, and its second
    ["[a-é]?.md", "é.md", true],
    ["[é-é]?", "é", true],
    ["[^a]?", "é", true],
    ["*.md", "é.md", true],
    ["x/**/*.md", "x/é/é.md", true],
    ["[[:alpha:]].md", "a.md", true],
    ["[[:alpha:]].md", "é.md", false],
    ["[[:alpha:]]?", "é", false],
    ["[[:punct:]]x", "~x", true],
    ["[[:cntrl:]]x", "\u007fx", true],
    ["[[:space:]]x", "\vx", false], // git's space: no vertical tab
    ["[[:foo]x", ":x", true], // no `:]`: a plain set of [ : f o
    ["[a-c-e].md", "-.md", true],
    ["a[/]b", "a/b", false], // no class matches a /
    ["**\\/b", "x/b", true],
    ["**\\/b", "b", false],
    // Found by the property test below against the matcher that counted characters.
    ["?", "😀", false],
    ["??", "aé/b.md", false],
    ["[!a]", "😀/中a", false],
    ["[!é][a-é]*", "😀/a", true],
    ["**[!é][!é]a", "中a/a", true],
  ];

  it("agrees with git on each pinned case", () => {
    for (const [pattern, path, ignored] of CASES)
      expect(
        excludedBy(rules(pattern), path, false) !== undefined,
        `${pattern} ${JSON.stringify(path)}`,
      ).toBe(ignored);
  });

  it("pins what git itself says (each case in a folder of its own, with its own .gitignore)", () => {
    const dir = mkdtempSync(join(tmpdir(), "txtfs-excludes-"));
    try {
      execFileSync("git", ["init", "-q", dir]);
      CASES.forEach(([pattern, path], i) => {
        mkdirSync(join(dir, `c${i}`, path, ".."), { recursive: true });
        writeFileSync(join(dir, `c${i}`, ".gitignore"), `${pattern}\n`);
        writeFileSync(join(dir, `c${i}`, path), "");
      });
      const ignored = new Set(gitLsIgnored(dir));
      const disagreeing = CASES.filter(([, path, expected], i) => ignored.has(`c${i}/${path}`) !== expected);
      expect(disagreeing).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses an unknown [:class:], which git would never match", () => {
    expect(() => parseExclude("[[:word:]]")).toThrow("unknown class [:word:]");
  });
});

// ---------------------------------------------------------------- against git

// Non-ASCII often: names and pieces with 2-, 3- and 4-byte characters and a combining mark, so
// where counting characters and counting bytes part shows within the default runs.
const NAMES = [
  "a",
  "ab",
  ".a",
  "a.md",
  "b.md",
  "x y.md",
  "é.md",
  "é",
  "aé",
  "中.md",
  "😀",
  "e\u0301.md",
  "中a",
];
const PIECES = [
  "a",
  "b",
  ".",
  "md",
  "*",
  "**",
  "?",
  "??",
  "[ab]",
  "[!a]",
  "/",
  " ",
  "é",
  "中",
  "😀",
  "\u0301",
  "[é]",
  "[!é]",
  "[a-é]",
  "[[:alpha:]]",
];

const patternArb = fc
  .tuple(fc.boolean(), fc.array(fc.constantFrom(...PIECES), { minLength: 1, maxLength: 5 }), fc.boolean())
  .map(([neg, pieces, dir]) => `${neg ? "!" : ""}${pieces.join("")}${dir ? "/" : ""}`)
  .filter((p) => {
    if (p.trim() !== p || p.startsWith("#")) return false; // what a file line would read otherwise
    try {
      parseExclude(p);
      return true;
    } catch {
      return false;
    }
  });
const pathArb = fc.array(fc.constantFrom(...NAMES), { minLength: 1, maxLength: 3 }).map((p) => p.join("/"));

/** The untracked files git calls ignored in the repository at `dir`. */
function gitLsIgnored(dir: string): string[] {
  const out = execFileSync(
    "git",
    [
      "-c",
      "core.excludesFile=/dev/null",
      "-c",
      "core.quotePath=false",
      "ls-files",
      "-z",
      "-o",
      "-i",
      "--exclude-standard",
    ],
    { cwd: dir, encoding: "utf8" },
  );
  return out.split("\0").filter(Boolean);
}

/** The files git calls ignored in a tree of `files` with `patterns` as its .gitignore. */
function gitIgnored(patterns: string[], files: string[]): Set<string> {
  const dir = mkdtempSync(join(tmpdir(), "txtfs-excludes-"));
  try {
    execFileSync("git", ["init", "-q", dir]);
    writeFileSync(join(dir, ".gitignore"), `${patterns.join("\n")}\n`);
    for (const f of files) {
      mkdirSync(join(dir, f, ".."), { recursive: true });
      writeFileSync(join(dir, f), "");
    }
    return new Set(gitLsIgnored(dir));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Paths where no file is also a folder of another (a tree that can exist). */
function asTree(paths: string[]): string[] {
  const files = [...new Set(paths)];
  return files.filter((f) => !files.some((g) => g.startsWith(`${f}/`)));
}

describe("exclude patterns against git", () => {
  it("exclude exactly what git ignores, for random .gitignore files and trees", () => {
    fc.assert(
      fc.property(
        fc.array(patternArb, { minLength: 1, maxLength: 4 }),
        fc.array(pathArb, { minLength: 1, maxLength: 8 }),
        (patterns, paths) => {
          const files = asTree(paths);
          const ignored = gitIgnored(patterns, files);
          const compiled = patterns.map(parseExclude);
          for (const f of files)
            expect(excludedBy(compiled, f, false) !== undefined, `${JSON.stringify(patterns)} ${f}`).toBe(
              ignored.has(f),
            );
        },
      ),
      { numRuns: 100 },
    );
  }, 120_000);
});

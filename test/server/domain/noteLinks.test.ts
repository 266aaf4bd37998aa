// The pure half of links and tags (src/server/domain/links): what counts as a link, a tag or an
// alias in a note's text, and which note a link names. Exhaustive examples, then properties.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { readFrontMatter } from "../../../src/server/domain/links/frontMatter.ts";
import { inlineTags } from "../../../src/server/domain/links/inlineTags.ts";
import { parseLinks } from "../../../src/server/domain/links/linkSyntax.ts";
import { proseOf, splitFrontMatter } from "../../../src/server/domain/links/markdownText.ts";
import {
  checkTagRequest,
  declaredTags,
  setPart,
  shownTags,
} from "../../../src/server/domain/links/noteTags.ts";
import { type NoteAt, resolveLink } from "../../../src/server/domain/links/resolve.ts";
import { resolveByScan, type VaultNote } from "../../helpers/vaultGraph.ts";

const linksOf = (note: string) => parseLinks(note).map((l) => [l.text, l.path, l.subpath, l.embed]);

describe("link syntax", () => {
  it("reads every form Obsidian writes", () => {
    expect(
      linksOf(
        [
          "[[Note]] [[Note|shown]] [[Note#Heading]] [[Note#^block]] [[Folder/Note.md#H|x]]",
          "![[embed.png]] ![[Note]] [text](relative/path.md) [t](<path with spaces.md>)",
          "[enc](My%20Note.md#Some%20heading) ![alt](img/a%20b.png) | [[Table\\|shown]] |",
        ].join("\n"),
      ),
    ).toEqual([
      ["[[Note]]", "Note", "", false],
      ["[[Note|shown]]", "Note", "", false],
      ["[[Note#Heading]]", "Note", "#Heading", false],
      ["[[Note#^block]]", "Note", "#^block", false],
      ["[[Folder/Note.md#H|x]]", "Folder/Note.md", "#H", false],
      ["![[embed.png]]", "embed.png", "", true],
      ["![[Note]]", "Note", "", true],
      ["[text](relative/path.md)", "relative/path.md", "", false],
      ["[t](<path with spaces.md>)", "path with spaces.md", "", false],
      ["[enc](My%20Note.md#Some%20heading)", "My Note.md", "#Some heading", false],
      ["![alt](img/a%20b.png)", "img/a b.png", "", true],
      ["[[Table\\|shown]]", "Table", "", false],
    ]);
  });

  it("skips code, front-matter, other sites, the note's own headings and escaped brackets", () => {
    const note = [
      "---",
      "related: '[[In front-matter]]'",
      "---",
      "`[[inline code]]` and ``a `[[double]]` b``",
      "```md",
      "[[in a fence]]",
      "```",
      "~~~~",
      "[[tilde fence]] ~~~ still inside",
      "~~~~",
      "[site](https://example.com/a.md) [mail](mailto:a@b.c) [proto](//host/x.md) [[#Own heading]] [x](#own)",
      "\\[[escaped]] [[after]]",
    ].join("\n");
    expect(linksOf(note)).toEqual([["[[after]]", "after", "", false]]);
  });

  it("an unclosed fence runs to the end; an unclosed backtick is a character", () => {
    expect(linksOf("a ` [[one]]\n```\n[[hidden]]")).toEqual([["[[one]]", "one", "", false]]);
  });

  it("front-matter ends at the next --- line; without it there is none", () => {
    expect(splitFrontMatter("---\na: 1\n---\nbody")).toEqual({ frontMatter: "a: 1\n", bodyStart: 13 });
    expect(splitFrontMatter("---\n---\nbody").frontMatter).toBe("");
    expect(splitFrontMatter("---\nno end").frontMatter).toBeNull();
    expect(splitFrontMatter("text\n---\nx\n---").frontMatter).toBeNull();
  });
});

describe("front-matter and tags", () => {
  it("tags as a list, inline list or string; aliases likewise; invalid YAML says nothing", () => {
    expect(
      readFrontMatter("---\ntags:\n  - vault\n  - '#t1'\n  - 123\naliases: [Other name, 'Second']\n---\n"),
    ).toEqual({
      tags: ["vault", "t1"],
      aliases: ["Other name", "Second"],
    });
    expect(readFrontMatter("---\ntags: [vault, t1]\n---\n").tags).toEqual(["vault", "t1"]);
    expect(readFrontMatter("---\ntags: a, b c\nalias: One, Two\n---\n")).toEqual({
      tags: ["a", "b", "c"],
      aliases: ["One", "Two"],
    });
    expect(readFrontMatter("---\ntags: [unclosed\n---\n")).toEqual({ tags: [], aliases: [] });
    expect(readFrontMatter("---\n- a list\n---\n")).toEqual({ tags: [], aliases: [] });
    expect(readFrontMatter("no front-matter tags: [x]")).toEqual({ tags: [], aliases: [] });
  });

  it("inline #tags by Obsidian's rules", () => {
    const note = [
      "---",
      "tags: [fm]",
      "---",
      "# Heading is not a tag",
      "#tag/sub and #Tag (again) #123 #2024/01 #y2024 a#b #émoji_ok #with-dash.",
      "`#code` [x](#anchor) http://x.y/#frag",
      "```",
      "#fenced",
      "```",
    ].join("\n");
    expect(inlineTags(note)).toEqual(["tag/sub", "Tag", "y2024", "émoji_ok", "with-dash"]);
    expect(declaredTags(note)).toEqual(["fm", "tag/sub", "Tag", "y2024", "émoji_ok", "with-dash"]);
  });

  it("shown tags: set ones first, declared after, 16 at most; a request gets what it asks or is refused", () => {
    expect(shownTags(["a"], ["b", "A"])).toEqual(["a", "b"]);
    expect(setPart(["a", "B", "c"], ["b"])).toEqual(["a", "c"]);
    const many = Array.from({ length: 20 }, (_, i) => `t${i}`);
    expect(shownTags([], many)).toHaveLength(16);
    expect(() => checkTagRequest([], ["fm"], ["fm"])).toThrow(/declared by the note's own text/);
    expect(() => checkTagRequest(["x"], [], shownTags(["x"], many))).not.toThrow();
    expect(() => checkTagRequest(["t19"], [], shownTags([], many))).toThrow(/would not be shown/);
    expect(() => checkTagRequest(["fm", "x"], ["fm"], ["x", "fm"])).not.toThrow();
  });
});

const note = (id: string, path: string, aliases: string[] = []): NoteAt => {
  const parts = path.split("/");
  return { id, name: parts.at(-1)!, folders: parts.slice(0, -1), aliases };
};

describe("resolution", () => {
  const notes = [
    note("root", "Note.md"),
    note("a", "A/Note.md"),
    note("ab", "A/B/Note.md"),
    note("txt", "A/Note.txt"),
    note("c", "C/Other.md", ["Nickname", "Old/Path"]),
    note("u", "Ünïcode folder/Ça va.md"),
  ];
  const cases: [string, string, string | null][] = [
    ["Note", "", "root"], // a root note links to the root one
    ["Note", "A", "a"], // same folder wins
    ["Note", "A/B", "ab"],
    ["Note", "X", "root"], // otherwise the shortest path
    ["note", "X", "root"], // case-insensitive
    ["Note.md", "A", "a"],
    ["Note.txt", "", "txt"], // an extension names that file only
    ["B/Note", "", "ab"], // a path's tail
    ["A/Note", "A/B", "a"], // from the root...
    ["./Note", "A/B", "ab"], // ...or relative to the linking note
    ["../Note", "A/B", "a"],
    ["../../../Note", "A", null], // above the root: no note
    ["/Note", "A", "root"],
    ["Nickname", "", "c"], // aliases count as names
    ["Old/Path", "", "c"],
    ["Other", "", "c"],
    ["ça VA", "", "u"],
    ["Missing", "", null],
    ["embed.png", "", null],
  ];
  it.each(cases)("%s from %s", (path, from, want) => {
    expect(resolveLink(path, from ? from.split("/") : [], notes)).toBe(want);
  });

  it("agrees with a scan of the whole vault on random vaults and links", () => {
    const seg = fc.constantFrom("A", "a", "B", "Notes", "Ça va", "x y", "Ünï");
    const name = fc.constantFrom("Note", "note", "Other", "Ça va", "x y", "Ünï");
    const arbNote = fc.record({
      folders: fc.array(seg, { maxLength: 3 }),
      name,
      ext: fc.constantFrom(".md", ".md", ".txt"),
      aliases: fc.array(fc.constantFrom("Nick", "A/Note", "other"), { maxLength: 2 }),
    });
    const arbLink = fc.record({
      up: fc.constantFrom("", "", "./", "../", "/"),
      folders: fc.array(seg, { maxLength: 2 }),
      name: fc.oneof(name, fc.constantFrom("Nick", "Note.md", "Note.txt", "Missing")),
    });
    fc.assert(
      fc.property(
        fc.array(arbNote, { minLength: 1, maxLength: 12 }),
        fc.array(arbLink, { maxLength: 6 }),
        (raw, ls) => {
          // Paths are unique in a vault (case-insensitively, as the mount's own names are on most disks).
          const byPath = new Map<string, { path: string; aliases: string[] }>();
          for (const n of raw) {
            const path = [...n.folders, n.name + n.ext].join("/");
            if (![...byPath.keys()].some((p) => p.toLowerCase() === path.toLowerCase()))
              byPath.set(path, { path, aliases: n.aliases });
          }
          const vault: VaultNote[] = [...byPath.values()];
          const indexed = vault.map((n) => note(n.path, n.path, n.aliases));
          for (const source of vault)
            for (const l of ls) {
              const linkPath = l.up + [...l.folders, l.name].join("/");
              const from = source.path.split("/").slice(0, -1);
              expect(resolveLink(linkPath, from, indexed), `${linkPath} from ${source.path}`).toBe(
                resolveByScan(linkPath, source.path, vault),
              );
            }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("properties of the scanner", () => {
  const name = fc
    .stringMatching(/^[A-Za-z0-9 ÀÉçüñ漢字_-]{1,20}$/)
    .filter((s) => s.trim() === s && s.length > 0);
  const prose = fc.stringMatching(/^[A-Za-z0-9 .,;\n]{0,40}$/);

  it("a wikilink in prose is found with its name; in code it is not", () => {
    fc.assert(
      fc.property(prose, name, prose, (before, n, after) => {
        expect(parseLinks(`${before} [[${n}]] ${after}`).map((l) => l.path)).toEqual([n]);
        expect(parseLinks(`${before} \`[[${n}]]\` ${after}`)).toEqual([]);
        expect(parseLinks(`${before}\n\`\`\`\n[[${n}]]\n\`\`\`\n${after}`)).toEqual([]);
      }),
    );
  });

  it("a markdown link's URL-encoded or <bracketed> path decodes to the name", () => {
    fc.assert(
      fc.property(name, (n) => {
        expect(parseLinks(`[x](${encodeURI(`${n}.md`)})`).map((l) => l.path)).toEqual([`${n}.md`]);
        expect(parseLinks(`[x](<${n}.md>)`).map((l) => l.path)).toEqual([`${n}.md`]);
      }),
    );
  });

  it("never throws; every link is quoted from the note at its offset; code keeps its length", () => {
    fc.assert(
      fc.property(
        fc.string({
          unit: fc.constantFrom(
            "[",
            "]",
            "(",
            ")",
            "!",
            "`",
            "#",
            "|",
            "\n",
            "a",
            " ",
            "-",
            "<",
            ">",
            "%",
            "~",
          ),
        }),
        (s) => {
          for (const l of parseLinks(s)) expect(s.slice(l.offset, l.offset + l.text.length)).toBe(l.text);
          expect(proseOf(s)).toHaveLength(s.length);
          inlineTags(s);
          readFrontMatter(s);
        },
      ),
      { numRuns: 500 },
    );
  });
});

// The README and docs/ link only to files in the repository, and every such link resolves, down to
// its #anchor (a clone has no ../shared: the spec and the architecture are docs/spec.md and
// docs/architecture.md; a page split in two must not leave links to headings that moved).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers/cli.ts";

const pages = [
  "README.md",
  "clients/typescript/README.md",
  ...readdirSync(join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];

/** The page's text outside fenced code blocks (a `# comment` in a shell example is no heading). */
function prose(text: string): string {
  return text.replace(/^```[^\n]*\n[\s\S]*?^```[ \t]*$/gm, "");
}

/** Every `](target)` of a page's prose (an example inside an inline code span is no link). */
function links(text: string): string[] {
  const outsideCode = prose(text).replace(/`[^`\n]*`/g, "");
  return [...outsideCode.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!);
}

/**
 * The anchors a Markdown renderer gives a page's headings, as GitHub makes them: the heading's text
 * without its markup, lower-cased, every character but letters, digits, `_`, `-` and spaces
 * dropped, spaces turned into `-`; a repeated one gets `-1`, `-2`, ...
 */
function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const m of prose(text).matchAll(/^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$/gm)) {
    const words = m[1]!
      .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1") // a link shows its text
      .replace(/[`*]/g, "");
    const slug = words
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
      .replace(/ /g, "-");
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return anchors;
}

describe("documentation links", () => {
  it("makes anchors as GitHub does", () => {
    const anchors = anchorsOf(
      "# The mount\n## Errors → errno\n## `.txtfs/`: history, tags\n## Notes\n## Notes\n```sh\n# not a heading\n```\n",
    );
    expect([...anchors]).toEqual(["the-mount", "errors--errno", "txtfs-history-tags", "notes", "notes-1"]);
  });

  it("every relative link resolves inside the repository, and its #anchor names a heading there", () => {
    const broken: string[] = [];
    for (const page of pages) {
      const file = join(ROOT, page);
      for (const link of links(readFileSync(file, "utf8"))) {
        if (/^[a-z]+:/.test(link) || link.startsWith("/")) continue; // a URL (refused below), or a server path
        const [path, anchor] = link.split("#") as [string, string | undefined];
        const target = path ? resolve(dirname(file), path) : file;
        if (relative(ROOT, target).startsWith("..") || !existsSync(target)) {
          broken.push(`${page}: ${link}`);
          continue;
        }
        if (
          anchor !== undefined &&
          target.endsWith(".md") &&
          !anchorsOf(readFileSync(target, "utf8")).has(anchor)
        )
          broken.push(`${page}: ${link} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("links nowhere outside the repository", () => {
    const outside: string[] = [];
    for (const page of pages)
      for (const link of links(readFileSync(join(ROOT, page), "utf8")))
        if (/^[a-z]+:/.test(link)) outside.push(`${page}: ${link}`);
    expect(outside).toEqual([]);
  });

  it("nothing points at ../shared", () => {
    for (const page of pages)
      expect(readFileSync(join(ROOT, page), "utf8"), page).not.toMatch(
        /\.\.\/shared|\bSPEC\.md|\bDESIGN\.md/,
      );
    expect(existsSync(join(ROOT, "docs/spec.md"))).toBe(true);
    expect(existsSync(join(ROOT, "docs/architecture.md"))).toBe(true);
  });
});

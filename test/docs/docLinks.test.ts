// The README and docs/ link only to files in the repository, and every such link resolves (a clone
// has no ../shared: the spec and the architecture are docs/spec.md and docs/architecture.md).
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

describe("documentation links", () => {
  it("every relative link resolves inside the repository", () => {
    const broken: string[] = [];
    for (const page of pages) {
      const text = readFileSync(join(ROOT, page), "utf8");
      for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1]!.split("#")[0]!;
        if (!target || /^[a-z]+:/.test(target) || target.startsWith("/")) continue; // a URL, or a server path
        const file = resolve(dirname(join(ROOT, page)), target);
        if (relative(ROOT, file).startsWith("..") || !existsSync(file)) broken.push(`${page}: ${m[1]}`);
      }
    }
    expect(broken).toEqual([]);
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

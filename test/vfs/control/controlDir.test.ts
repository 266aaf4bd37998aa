// The pure parts of `.txtfs/` (src/vfs/control): names, links, the comment format.
import { describe, expect, it } from "vitest";
import { parseAppended, renderComments } from "../../../src/vfs/control/comments.ts";
import { controlParts, linkTo, rankedName, uniqueNames } from "../../../src/vfs/control/entries.ts";
import { versionName } from "../../../src/vfs/control/versions.ts";
import { VfsError } from "../../../src/vfs/errors.ts";

const version = (n: number, label: string | null) =>
  ({ version_number: n, created_at: "2026-11-20T10:12:33.000Z", label }) as never;

describe("paths", () => {
  it("only .txtfs at the root is the control directory", () => {
    expect(controlParts("/.txtfs")).toEqual([]);
    expect(controlParts("/.txtfs/versions/a b/c.md")).toEqual(["versions", "a b", "c.md"]);
    expect(controlParts("/.txtfsx")).toBeUndefined();
    expect(controlParts("/h/.txtfs/versions")).toBeUndefined();
  });

  it("links are relative to the link's folder", () => {
    expect(linkTo("/.txtfs/tags/idea/b.md", "/h/b.md")).toBe("../../../h/b.md");
    expect(linkTo("/.txtfs/related/h/a.md/01 top.md", "/top.md")).toBe("../../../../top.md");
  });

  it("ranks and same-named notes get distinct, stable names", () => {
    expect(rankedName(3, "a.md")).toBe("03 a.md");
    expect(uniqueNames([{ name: "a.md" }, { name: "b" }, { name: "a.md" }, { name: "b" }])).toEqual([
      "a.md",
      "b",
      "a (2).md",
      "b (2)",
    ]);
  });

  it("a version's name: number, UTC minute, label (no slash), the note's extension, at most 255 bytes", () => {
    expect(versionName(version(7, null), "n.md")).toBe("0007 2026-11-20T10-12.md");
    expect(versionName(version(12345, "v1/final"), "n.txt")).toBe("12345 2026-11-20T10-12 v1-final.txt");
    expect(Buffer.byteLength(versionName(version(1, "é".repeat(300)), "n.md"))).toBeLessThanOrEqual(255);
  });
});

describe("the comment format", () => {
  it("a quote, then the comment", () => {
    expect(parseAppended("> some text\nMy comment\n")).toEqual({ quote: "some text", body: "My comment" });
    expect(parseAppended("> two\n> lines\n\nBody\nmore\n")).toEqual({
      quote: "two\nlines",
      body: "Body\nmore",
    });
  });

  it("not complete yet: no comment, or no final newline", () => {
    expect(parseAppended("> quote only\n")).toBeNull();
    expect(parseAppended("> quote\nbody without newline")).toBeNull();
  });

  it("anything else is EINVAL", () => {
    for (const bad of ["no quote\n", ">no space\nbody\n", "\n> late\nbody\n", ">  \nbody\n"]) {
      expect(() => parseAppended(bad), bad).toThrow(VfsError);
    }
  });

  it("renders threads and pending suggestions", () => {
    const text = renderComments(
      "h/b.md",
      [
        {
          user_name: null,
          user_email: "a@x",
          created_at: "2026-11-20T10:12:00Z",
          selected_text: "two\nlines",
          body: "Why?",
          resolved: true,
        } as never,
      ],
      [
        {
          user_name: "Bob",
          user_email: "b@x",
          created_at: "2026-11-21T00:00:00Z",
          original_text: "old",
          suggested_text: "new",
        } as never,
      ],
    );
    expect(text).toBe(
      "# Comments on h/b.md\n\n## a@x, 2026-11-20 10:12 UTC (resolved)\n\n> two\n> lines\n\nWhy?\n\n" +
        "# Pending suggestions\n\n## Bob, 2026-11-21 00:00 UTC\n\n> old\n\nReplace with:\n\n> new\n",
    );
  });
});

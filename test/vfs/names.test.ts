import { describe, expect, it } from "vitest";
import { disambiguated, displayName, isNoteName } from "../../src/vfs/names.ts";

describe("names", () => {
  it("only .md and .txt are notes", () => {
    for (const n of ["a.md", "B.TXT", "x.y.md"]) expect(isNoteName(n)).toBe(true);
    for (const n of ["a.md~", ".a.md.swp", "4913", "sedAbC123", ".fuse_hidden0001.md", "notes.bak"]) {
      expect(isNoteName(n)).toBe(false);
    }
  });
  it("shows a remote name with its type's extension", () => {
    expect(displayName("plan", "md")).toBe("plan.md");
    expect(displayName("plan.txt", "md")).toBe("plan.txt");
    expect(disambiguated("a.md", "f_01M8ABCDEFGHJKMNPQRSTV3F9K")).toBe("a (tv3f9k).md");
  });
});

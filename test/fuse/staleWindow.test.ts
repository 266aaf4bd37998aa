import { describe, expect, it } from "vitest";
import { StaleWindow } from "../../src/fuse/kernelCache/staleWindow.ts";

describe("the stale window (opens with direct I/O)", () => {
  let now = 0;
  const window = () => new StaleWindow(1500, () => now);
  it("holds a changed path for the window, then lets it go; other paths are untouched", () => {
    now = 0;
    const w = window();
    w.changed("/a.md");
    now = 1499;
    expect(w.mayBeStale("/a.md")).toBe(true);
    expect(w.mayBeStale("/b.md")).toBe(false);
    now = 1500;
    expect(w.mayBeStale("/a.md")).toBe(false);
  });
  it("a change of anything holds every path; too many paths at once count as anything", () => {
    now = 0;
    const w = window();
    w.changed();
    expect(w.mayBeStale("/any.md")).toBe(true);
    now = 2000;
    expect(w.mayBeStale("/any.md")).toBe(false);
    for (let i = 0; i < 10_001; i++) w.changed(`/n${i}.md`);
    expect(w.mayBeStale("/never-changed.md")).toBe(true);
    now = 4000;
    w.changed("/late.md"); // the burst has passed: pruned, per path again
    expect(w.mayBeStale("/late.md")).toBe(true);
    expect(w.mayBeStale("/n5.md")).toBe(false);
  });
});

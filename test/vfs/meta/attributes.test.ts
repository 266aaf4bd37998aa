// Attributes in-process: what getattr shows when a note takes another's path.
import { describe, expect, it } from "vitest";
import { mountVfs, readAll, u, useVfsServer } from "../fixture.ts";

useVfsServer();

describe("a note that takes the path of another with the same size and time", () => {
  // The kernel keeps a note's pages while its mtime and size stay (auto_cache), by path's node: a
  // note taking the path of one whose pages it may hold must not show that one's mtime and size.
  async function twoAlike(readFirst: boolean) {
    const c = (await u.api.post("/api/v1/files", { name: "c.md", content: "start c\n" })).body.file;
    const b = (await u.api.post("/api/v1/files", { name: "b.md", content: "start b\n" })).body.file;
    const vfs = await mountVfs();
    const time = Date.parse("2026-01-01T00:00:00Z");
    for (const p of ["/b.md", "/c.md"]) await vfs.utimens(p, time, time); // touch -d: alike
    const before = await vfs.getattr("/c.md");
    if (readFirst) expect(await readAll(vfs, "/c.md")).toBe("start c\n");
    // The feed: c deleted, then b renamed onto its name.
    vfs.tree.remoteDelete(c.id);
    vfs.tree.upsertFile({ ...b, name: "c.md" });
    expect((await vfs.getxattr("/c.md", "user.txtfs.id"))?.toString()).toBe(b.id);
    const after = await vfs.getattr("/c.md");
    expect(after.size).toBe(before.size);
    return { before: before.mtime.getTime(), after: after.mtime.getTime() };
  }

  it("moves its mtime on when the other one's pages may be in the kernel (it was read)", async () => {
    const { before, after } = await twoAlike(true);
    expect(after).toBe(before + 1);
  });

  it("keeps its own mtime when the other one was only listed (no pages: nothing remembered of it)", async () => {
    const { before, after } = await twoAlike(false);
    expect(after).toBe(before);
  });
});

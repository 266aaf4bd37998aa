// The content cache as the vfs uses it: note bodies in the ring file, within the cache's bound.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cacheDir, mountVfs, readAll, u, useVfsServer } from "./fixture.ts";

useVfsServer();

describe("vfs", () => {
  it("note bodies are cached in a ring file in the cache dir; one overwritten under the daemon is downloaded again", async () => {
    const { file } = (await u.api.post("/api/v1/files", { name: "c.md", content: "cached body ✓" })).body;
    const vfs = await mountVfs({ cacheSize: 40 }); // 10 bytes in memory: the 15-byte body goes to the ring
    const ring = join(cacheDir, "bodies.ring");
    expect(await readAll(vfs, "/c.md")).toBe("cached body ✓");
    expect(readFileSync(ring, "utf8")).toBe("cached body ✓");
    const before = vfs.stats().requests;
    expect(await readAll(vfs, "/c.md")).toBe("cached body ✓"); // from the ring: no request
    expect(vfs.stats().requests).toBe(before);
    writeFileSync(ring, "garbage"); // cut short under the daemon
    expect(await readAll(vfs, "/c.md")).toBe("cached body ✓");
    expect(vfs.stats().requests).toBeGreaterThan(before);
    await u.api.put(`/api/v1/files/${file.id}`, { content: "changed remotely" });
    const { content: _content, ...changed } = (await u.api.get(`/api/v1/files/${file.id}`)).body;
    vfs.tree.upsertFile(changed); // as the change feed would
    expect(await readAll(vfs, "/c.md")).toBe("changed remotely");
    expect(await readAll(vfs, "/c.md")).toBe("changed remotely");
  });

  it("the content cache stays within its bound", async () => {
    await u.api.post("/api/v1/files/import", {
      files: Array.from({ length: 40 }, (_, i) => ({ path: `n${i}.md`, content: "x".repeat(10_000) })),
    });
    const vfs = await mountVfs({ cacheSize: 64 * 1024 });
    for (let i = 0; i < 40; i++) await readAll(vfs, `/n${i}.md`);
    expect(vfs.stats().cacheBytes).toBeLessThanOrEqual(64 * 1024);
    expect(vfs.stats().cacheEntries).toBeGreaterThan(0);
  });
});

// Folder prefetch in-process: a reader walking folder after folder.
import { beforeEach, describe, expect, it } from "vitest";
import type { Vfs } from "../../src/vfs/vfs.ts";
import { mountVfs, readAll, sleep, u, until, useVfsServer } from "./fixture.ts";

useVfsServer();

describe("folder after folder (grep -r, cat */*)", () => {
  const folderGets = (vfs: Vfs) => vfs.metrics().requests.byKind["GET /api/me/folders/:id"] ?? 0;
  const noteGets = (vfs: Vfs) => vfs.metrics().requests.byKind["GET /api/v1/files/:id"] ?? 0;

  beforeEach(async () => {
    const files = [];
    for (let f = 0; f < 5; f++)
      for (let n = 0; n < 4; n++) files.push({ path: `f${f}/n${n}.md`, content: `${f}.${n}` });
    await u.api.post("/api/v1/files/import", { files });
  });

  it("a reader walking through them finds each next folder fetched while it read the one before", async () => {
    const vfs = await mountVfs();
    for (let f = 0; f < 5; f++) {
      // Reading f(n) fetches f(n+1) ahead (from the second folder on: a walk is seen); give it time.
      if (f >= 2) await until(() => vfs.stats().cacheEntries === 4 * (f + 1), `f${f} fetched ahead`);
      const misses = vfs.metrics().cache.misses;
      for (let n = 0; n < 4; n++) expect(await readAll(vfs, `/f${f}/n${n}.md`)).toBe(`${f}.${n}`);
      expect(vfs.metrics().cache.misses - misses).toBe(f < 2 ? 1 : 0); // the first note waits for its folder
    }
    expect(folderGets(vfs)).toBe(5); // each folder once, the last one fetched by nobody ahead of it
    expect(noteGets(vfs)).toBe(0);
  });

  it("a reader jumping between folders gets no folder it did not open", async () => {
    const vfs = await mountVfs();
    expect(await readAll(vfs, "/f0/n0.md")).toBe("0.0");
    expect(await readAll(vfs, "/f3/n1.md")).toBe("3.1");
    expect(await readAll(vfs, "/f1/n2.md")).toBe("1.2");
    await sleep(100);
    expect(folderGets(vfs)).toBe(3);
  });
});

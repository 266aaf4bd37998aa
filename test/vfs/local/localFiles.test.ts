// Local (non-note) files in-process.
import { describe, expect, it } from "vitest";
import { mountVfs, readAll, remote, useVfsServer, writeFile } from "../fixture.ts";

useVfsServer();

describe("vfs", () => {
  it("non-note names stay local and survive a restart; renaming to .md uploads", async () => {
    let vfs = await mountVfs();
    await writeFile(vfs, "/draft.bak", "local only");
    expect(await remote()).toHaveLength(0);
    await vfs.stop();
    vfs = await mountVfs();
    expect(await readAll(vfs, "/draft.bak")).toBe("local only");
    await vfs.rename("/draft.bak", "/draft.md");
    expect(await vfs.drain()).toBe(0); // write-behind, like every save
    expect((await remote()).map((f) => f.name)).toEqual(["draft.md"]);
  });
});

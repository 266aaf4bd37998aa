// Conflicts in-process: a save over a remote edit keeps both versions.
import { constants as fsc } from "node:fs";
import { describe, expect, it } from "vitest";
import { mountVfs, readAll, remote, theirsStaysOursCopied, u, useVfsServer, writeFile } from "./fixture.ts";

useVfsServer();

describe("vfs", () => {
  it("keeps both versions on a conflict", async () => {
    const { file } = (await u.api.post("/api/v1/files", { name: "c.md", content: "base" })).body;
    const vfs = await mountVfs();
    const fd = await vfs.open("/c.md", fsc.O_RDWR);
    await vfs.write(fd, Buffer.from("ours"), 0);
    await u.api.put(`/api/v1/files/${file.id}`, { content: "theirs" });
    await vfs.release(fd);
    expect(await vfs.drain()).toBe(0); // write-behind: the save is delivered after release
    const files = await remote();
    expect(files).toHaveLength(2);
    expect((await u.api.get(`/api/v1/files/${file.id}`)).body.content).toBe("theirs");
    const copy = files.find((f) => f.id !== file.id)!;
    expect(copy.name).toMatch(/^c\.conflict-.+\.md$/);
    expect((await u.api.get(`/api/v1/files/${copy.id}`)).body.content).toBe("ours");
    expect(vfs.conflicts).toHaveLength(1);
  });

  it("a save that moved the note, over a remote edit made since it was read: theirs stays, ours is kept as a copy, the note is where it was moved", async () => {
    const { file } = (await u.api.post("/api/v1/files", { name: "c.md", content: "base" })).body;
    const vfs = await mountVfs();
    await vfs.mkdir("/d");
    expect(await vfs.drain()).toBe(0);
    await vfs.rename("/c.md", "/d/m.md");
    const fd = await vfs.open("/d/m.md", fsc.O_RDWR);
    await vfs.write(fd, Buffer.from("ours"), 0);
    await u.api.put(`/api/v1/files/${file.id}`, { content: "theirs" });
    await vfs.fsync(fd); // alone in the journal: one note's save, its move with it
    await vfs.release(fd);
    expect(await vfs.drain()).toBe(0);
    await theirsStaysOursCopied(file.id, {
      name: "m.md",
      folderId: (vfs.tree.lookup("/d") as { id: string }).id,
    });
    expect(vfs.conflicts).toHaveLength(1);
  });

  it.each([
    ["alone", false],
    ["in bulk (beside another save)", true],
  ])(
    "a rename delivered %s over a remote edit is no base for an edit read before it: theirs stays, ours is a copy",
    async (_, bulk) => {
      const { file } = (await u.api.post("/api/v1/files", { name: "c.md", content: "base" })).body;
      const vfs = await mountVfs();
      const fd = await vfs.open("/c.md", fsc.O_RDWR);
      expect((await vfs.read(fd, 100, 0)).toString()).toBe("base");
      await u.api.put(`/api/v1/files/${file.id}`, { content: "theirs" });
      await vfs.rename("/c.md", "/m.md");
      if (bulk) {
        const other = await vfs.create("/other.md", 0o644);
        await vfs.write(other, Buffer.from("other"), 0);
        await vfs.release(other);
      }
      expect(await vfs.drain()).toBe(0); // the rename, applied onto "theirs"
      await vfs.write(fd, Buffer.from("ours"), 0); // built on "base", what this handle read
      await vfs.release(fd);
      expect(await vfs.drain()).toBe(0);
      await theirsStaysOursCopied(file.id, { name: "m.md" });
    },
  );

  it.each([
    ["write-behind", true],
    ["write-through", false],
  ])(
    "a rename over a note whose source changed elsewhere unseen stands whole (%s): the target keeps what was moved, the source's edit shows again",
    async (_, writeBehind) => {
      // Soak seed 2801 (`printf apple > a.md`, a remote edit of b.md, `mv -T b.md a.md`): the move
      // put b's bytes on a, then its delete of b met the edit (412) and failed with ESTALE: the
      // program saw its mv fail, yet a.md no longer held its save.
      const vfs = await mountVfs({ writeBehind });
      await writeFile(vfs, "/a.md", "A");
      await writeFile(vfs, "/b.md", "B"); // written here: its body is known without asking
      expect(await vfs.drain()).toBe(0);
      const a = (await remote()).find((f) => f.name === "a.md")!;
      const b = (await remote()).find((f) => f.name === "b.md")!;
      await writeFile(vfs, "/a.md", "ours");
      await u.api.put(`/api/v1/files/${b.id}`, { content: "theirs" });
      await vfs.rename("/b.md", "/a.md");
      expect(await readAll(vfs, "/a.md")).toBe("B"); // what the program moved
      expect(await vfs.drain()).toBe(0);
      expect((await u.api.get(`/api/v1/files/${a.id}`)).body.content).toBe("B");
      expect((await u.api.get(`/api/v1/files/${b.id}`)).body).toMatchObject({
        name: "b.md",
        content: "theirs",
      });
      expect(await readAll(vfs, "/b.md")).toBe("theirs");
    },
  );

  it("a remote change of metadata only is no conflict: our content lands, their tags stay", async () => {
    const { file } = (await u.api.post("/api/v1/files", { name: "m.md", content: "base" })).body;
    const vfs = await mountVfs();
    const fd = await vfs.open("/m.md", fsc.O_RDWR);
    await vfs.write(fd, Buffer.from("ours"), 0);
    await u.api.put(`/api/v1/files/${file.id}`, { tags: ["theirs"] });
    await vfs.release(fd);
    expect(await vfs.drain()).toBe(0);
    expect(await remote()).toHaveLength(1);
    expect((await u.api.get(`/api/v1/files/${file.id}`)).body).toMatchObject({
      content: "ours",
      tags: ["theirs"],
    });
    expect(vfs.conflicts).toHaveLength(0);
  });
});

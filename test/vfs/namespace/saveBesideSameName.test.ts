// Two notes of one name in a folder (made on two devices before either heard of the other): this
// mount shows the older as `b.md` and the other as `b (xxxxxx).md`. vim saves `b.md` by renaming
// it to `b.md~`, writing a new `b.md` and removing `b.md~`: the name `b.md` it left a moment ago is
// still that note's (a create there continues it), never the other note's. Found by the
// multi-device simulation (soak seed 102): the other note took the plain name when it was left,
// got vim's bytes, and the edited note was deleted with its versions.
import { expect, it } from "vitest";
import { mountVfs, readAll, u, useVfsServer } from "../fixture.ts";

useVfsServer();

it("vim's rename-write-remove of b.md beside `b (xxxxxx).md` continues b.md and leaves the other alone", async () => {
  const older = (await u.api.post("/api/v1/files", { name: "b.md", content: "older\n" })).body.file;
  const newer = (await u.api.post("/api/v1/files", { name: "b.md", content: "newer\n" })).body.file;
  const vfs = await mountVfs();
  const shown = [...vfs.readdir("/")].sort();
  const other = shown.find((n) => n !== "b.md")!;
  expect(shown).toEqual(["b.md", other].sort());
  expect(await readAll(vfs, "/b.md")).toBe("older\n");

  await vfs.rename("/b.md", "/b.md~");
  expect([...vfs.readdir("/")].sort()).toEqual([other, "b.md~"].sort()); // b.md is free, the other keeps its name
  const fd = await vfs.create("/b.md", 0o644);
  await vfs.write(fd, Buffer.from("edited\n"), 0);
  await vfs.flush(fd);
  await vfs.release(fd);
  await vfs.unlink("/b.md~");
  expect(await vfs.drain()).toBe(0);

  expect(await readAll(vfs, "/b.md")).toBe("edited\n");
  expect(await readAll(vfs, `/${other}`)).toBe("newer\n");
  expect((await vfs.getxattr("/b.md", "user.txtfs.id"))?.toString()).toBe(older.id);
  expect((await u.api.get(`/api/v1/files/${older.id}`)).body.content).toBe("edited\n");
  expect((await u.api.get(`/api/v1/files/${newer.id}`)).body.content).toBe("newer\n");
});

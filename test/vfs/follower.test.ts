// What the change feed brings in-process: remote edits, remote deletes, and the echo of our own saves.
import { constants as fsc } from "node:fs";
import { describe, expect, it } from "vitest";
import { TxtfsClient } from "../../src/client/api.ts";
import {
  heldCreates,
  mountVfs,
  readAll,
  remote,
  sleep,
  t,
  u,
  until,
  useVfsServer,
  writeFile,
} from "./fixture.ts";

useVfsServer();

describe("vfs", () => {
  it("a note deleted remotely while a local save waits keeps showing it, and the save creates it again", async () => {
    const { file } = (await u.api.post("/api/v1/files", { name: "d.md", content: "base" })).body;
    const vfs = await mountVfs();
    const fd = await vfs.open("/d.md", fsc.O_RDWR);
    await vfs.write(fd, Buffer.from("ours"), 0);
    await vfs.flush(fd); // journalled, not delivered yet
    await u.api.delete(`/api/v1/files/${file.id}`);
    // The feed's tombstone arrives (poll wait 1 s): the pending save keeps the note in view.
    const tree = vfs.tree;
    tree.remoteDelete(file.id);
    expect(vfs.readdir("/")).toEqual(["d.md"]);
    expect((await vfs.read(fd, 100, 0)).toString()).toBe("ours");
    await vfs.release(fd);
    expect(await vfs.drain()).toBe(0);
    const files = await remote();
    expect(files.map((f) => f.name)).toEqual(["d.md"]);
    expect((await u.api.get(`/api/v1/files/${files[0]!.id}`)).body.content).toBe("ours");
  });

  it("a save made while a note deleted remotely is created again builds on it, never lost or split off", async () => {
    const { file } = (await u.api.post("/api/v1/files", { name: "d.md", content: "base" })).body;
    const h = heldCreates();
    const vfs = await mountVfs({ client: h.client });
    const fd = await vfs.open("/d.md", fsc.O_RDWR);
    expect((await vfs.read(fd, 100, 0)).toString()).toBe("base");
    await u.api.delete(`/api/v1/files/${file.id}`);
    await vfs.write(fd, Buffer.from("ours"), 0);
    await vfs.flush(fd); // delivered soon: the update finds the note gone and creates it again (held)
    while (h.held() === 0) await sleep(5);
    await vfs.write(fd, Buffer.from(" and more"), 4);
    await vfs.flush(fd); // saved while the create is on its way
    expect((await vfs.read(fd, 100, 0)).toString()).toBe("ours and more");
    h.open();
    expect(await vfs.drain()).toBe(0);
    expect((await vfs.read(fd, 100, 0)).toString()).toBe("ours and more");
    await vfs.release(fd);
    expect(await readAll(vfs, "/d.md")).toBe("ours and more");
    expect(vfs.readdir("/")).toEqual(["d.md"]);
    const files = await remote();
    expect(files.map((f) => f.name)).toEqual(["d.md"]);
    expect((await u.api.get(`/api/v1/files/${files[0]!.id}`)).body.content).toBe("ours and more");
    expect(vfs.refused).toEqual([]);
  });

  it("a note renamed here and deleted elsewhere before the rename went: the delete stands, no name is left that cannot be opened", async () => {
    // Soak seeds 2849, 2862, 2871: after `txtfs sync` the mount still listed the renamed name, and
    // opening it failed with ENOENT for good (the service answered 404 for its id), while the rename
    // was reported as a save the service refused.
    const { file } = (await u.api.post("/api/v1/files", { name: "a.md", content: "x" })).body;
    const vfs = await mountVfs();
    expect(await readAll(vfs, "/a.md")).toBe("x");
    await vfs.rename("/a.md", "/b.md"); // journalled, not delivered yet
    await u.api.delete(`/api/v1/files/${file.id}`);
    vfs.tree.remoteDelete(file.id); // the feed's tombstone, while the rename waits: kept in view
    expect(await vfs.drain()).toBe(0);
    expect(vfs.readdir("/")).toEqual([]);
    await expect(vfs.getattr("/b.md")).rejects.toMatchObject({ errno: "ENOENT" });
    expect(await remote()).toEqual([]);
    expect(vfs.refused).toEqual([]);
    // Nothing of it comes back: a new note of that name is a new note.
    await writeFile(vfs, "/b.md", "new");
    expect((await remote()).map((f) => f.name)).toEqual(["b.md"]);
    expect(await readAll(vfs, "/b.md")).toBe("new");
  });

  it("a note renamed and then saved here, deleted elsewhere meanwhile: the save creates it again under its new name", async () => {
    const { file } = (await u.api.post("/api/v1/files", { name: "a.md", content: "x" })).body;
    const vfs = await mountVfs();
    await vfs.rename("/a.md", "/b.md");
    const fd = await vfs.open("/b.md", fsc.O_WRONLY | fsc.O_TRUNC);
    await vfs.write(fd, Buffer.from("ours"), 0);
    await vfs.release(fd); // journalled with the rename
    await u.api.delete(`/api/v1/files/${file.id}`);
    vfs.tree.remoteDelete(file.id);
    expect(await vfs.drain()).toBe(0);
    expect(vfs.readdir("/")).toEqual(["b.md"]);
    expect(await readAll(vfs, "/b.md")).toBe("ours");
    const files = await remote();
    expect(files.map((f) => f.name)).toEqual(["b.md"]);
    expect((await u.api.get(`/api/v1/files/${files[0]!.id}`)).body.content).toBe("ours");
    expect(vfs.refused).toEqual([]);
  });

  it("a note found gone when it is read (its delete not seen yet) leaves the listing at once; one with a save waiting stays", async () => {
    const a = (await u.api.post("/api/v1/files", { name: "a.md", content: "x" })).body.file;
    const b = (await u.api.post("/api/v1/files", { name: "b.md", content: "y" })).body.file;
    const vfs = await mountVfs();
    (vfs as any).c.follower.stop(); // the feed never tells: only the read finds out
    await u.api.delete(`/api/v1/files/${a.id}`);
    await u.api.delete(`/api/v1/files/${b.id}`);
    await expect(readAll(vfs, "/a.md")).rejects.toMatchObject({ errno: "ENOENT" });
    expect(vfs.readdir("/")).toEqual(["b.md"]);
    const fd = await vfs.open("/b.md", fsc.O_WRONLY | fsc.O_APPEND);
    await vfs.write(fd, Buffer.from("ours"), 0);
    await vfs.release(fd); // an append waits: the note stays, and the append creates it again
    expect(await vfs.drain()).toBe(0);
    expect(vfs.readdir("/")).toEqual(["b.md"]);
    const files = await remote();
    expect(files.map((f) => f.name)).toEqual(["b.md"]);
    expect((await u.api.get(`/api/v1/files/${files[0]!.id}`)).body.content).toContain("ours");
  });

  for (const writeBehind of [true, false])
    it(`a save of the same bytes made after a remote delete this mount has not seen yet creates the note again (${writeBehind ? "write-behind" : "write-through"})`, async () => {
      // Skipping such a save as "already there" lost it (soak seed 3501: `sed -i`, a remote delete,
      // `sed -i` again leaving the text as it was): the service's copy was gone before the program saved.
      const { file } = (await u.api.post("/api/v1/files", { name: "n.md", content: "same ñ\n" })).body;
      const vfs = await mountVfs({ writeBehind });
      expect(await readAll(vfs, "/n.md")).toBe("same ñ\n"); // read (and cached) as an editor does
      (vfs as any).c.follower.stop(); // the delete is not seen before the save
      await u.api.delete(`/api/v1/files/${file.id}`);
      const fd = await vfs.open("/n.md", fsc.O_WRONLY | fsc.O_TRUNC);
      await vfs.write(fd, Buffer.from("same ñ\n"), 0);
      await vfs.release(fd);
      expect(await vfs.drain()).toBe(0);
      const files = await remote();
      expect(files.map((f) => f.name)).toEqual(["n.md"]);
      expect((await u.api.get(`/api/v1/files/${files[0]!.id}`)).body.content).toBe("same ñ\n");
    });

  it("a clean note deleted remotely goes away", async () => {
    const { file } = (await u.api.post("/api/v1/files", { name: "gone.md", content: "x" })).body;
    const vfs = await mountVfs();
    await u.api.delete(`/api/v1/files/${file.id}`);
    vfs.tree.remoteDelete(file.id);
    expect(vfs.readdir("/")).toEqual([]);
  });

  it("sees remote changes through the feed", async () => {
    const vfs = await mountVfs();
    const { file } = (await u.api.post("/api/v1/files", { name: "r.md", content: "x" })).body;
    for (let i = 0; i < 40 && !vfs.readdir("/").includes("r.md"); i++)
      await new Promise((r) => setTimeout(r, 50));
    expect(vfs.readdir("/")).toContain("r.md");
    await u.api.put(`/api/v1/files/${file.id}`, { name: "renamed.md", content: "changed" });
    for (let i = 0; i < 40 && !vfs.readdir("/").includes("renamed.md"); i++)
      await new Promise((r) => setTimeout(r, 50));
    expect(await readAll(vfs, "/renamed.md")).toBe("changed");
    await u.api.delete(`/api/v1/files/${file.id}`);
    for (let i = 0; i < 40 && vfs.readdir("/").length; i++) await new Promise((r) => setTimeout(r, 50));
    expect(vfs.readdir("/")).toEqual([]);
  });

  it("the feed's echo of our own save, come before the save's answer, is no remote change", async () => {
    // The kernel is told nothing changed behind it (no stale window: opens keep the page cache and
    // mmap; fsx once failed an mmap with ENODEV on a direct-I/O open under load).
    const client = new TxtfsClient({ url: t.url, key: u.key, source: "mount", timeoutMs: 5000 });
    let held: Promise<void> | undefined;
    for (const method of ["updateFile", "sync"] as const) {
      const real = (client[method] as (...a: unknown[]) => Promise<unknown>).bind(client);
      (client as unknown as Record<string, unknown>)[method] = async (...args: unknown[]) => {
        const answer = await real(...args);
        await held; // the service has it (and the feed): its answer comes later
        return answer;
      };
    }
    const vfs = await mountVfs({ client });
    await writeFile(vfs, "/echo.md", "one");
    const { file } = (await u.api.post("/api/v1/files", { name: "theirs.md", content: "a" })).body;
    await until(() => vfs.readdir("/").includes("theirs.md"), "the feed");
    const changed: (string | undefined)[] = [];
    vfs.onRemoteChange((path) => changed.push(path));
    let answer!: () => void;
    held = new Promise<void>((r) => (answer = r));
    try {
      const fd = await vfs.open("/echo.md", fsc.O_WRONLY | fsc.O_TRUNC);
      await vfs.write(fd, Buffer.from("two, longer"), 0);
      await vfs.release(fd);
      const rec = (await remote()).find((f) => f.name === "echo.md")!;
      const saved = async () => (await u.api.get(`/api/v1/files/${rec.id}`)).body.content === "two, longer";
      await until(saved, "the save");
      // The feed brings the echo, then another client's change (the control) after it.
      await u.api.put(`/api/v1/files/${file.id}`, { content: "b" });
      await until(() => changed.length > 0, "the feed's next change");
      expect(changed).toEqual(["/theirs.md"]);
    } finally {
      answer();
    }
    expect(await vfs.drain()).toBe(0);
    expect(await readAll(vfs, "/echo.md")).toBe("two, longer");
    expect(vfs.conflicts).toEqual([]);
    expect(changed).toEqual(["/theirs.md"]);
  });
});

// The namespace in-process: creates, renames (editors' saves among them), deletes and folders, and
// how each goes up to the service.
import { constants as fsc } from "node:fs";
import { describe, expect, it } from "vitest";
import { TxtfsClient } from "../../src/client/api.ts";
import type { Vfs } from "../../src/vfs/vfs.ts";
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
  it("creating a note is one request; the content reaches the service", async () => {
    const vfs = await mountVfs();
    const before = vfs.stats().requests;
    await writeFile(vfs, "/a.md", "hello\n");
    expect(vfs.stats().requests - before).toBe(1);
    const [file] = await remote();
    expect(file).toMatchObject({ name: "a.md", size: 6 });
    expect((await vfs.getattr("/a.md")).size).toBe(6);
  });

  it("a rename over a note keeps its id and metadata (sed -i, os.replace)", async () => {
    const { file } = (await u.api.post("/api/v1/files", { name: "n.md", content: "old", tags: ["keep"] }))
      .body;
    const vfs = await mountVfs();
    await writeFile(vfs, "/.n.md.tmp1234", "new content");
    await vfs.rename("/.n.md.tmp1234", "/n.md");
    await vfs.drain(); // saves are write-behind
    const files = await remote();
    expect(files).toHaveLength(1);
    expect(files[0]!.id).toBe(file.id);
    const now = (await u.api.get(`/api/v1/files/${file.id}`)).body;
    expect(now).toMatchObject({ content: "new content", tags: ["keep"] });
    expect(vfs.readdir("/")).toEqual(["n.md"]);
  });

  it("vim's backupcopy=no (rename away, create again) edits the same note", async () => {
    const { file } = (await u.api.post("/api/v1/files", { name: "v.md", content: "one", context: "ctx" }))
      .body;
    const vfs = await mountVfs();
    await vfs.rename("/v.md", "/v.md~");
    await writeFile(vfs, "/v.md", "two");
    await vfs.unlink("/v.md~");
    const files = await remote();
    expect(files.map((f) => f.id)).toEqual([file.id]);
    expect((await u.api.get(`/api/v1/files/${file.id}`)).body).toMatchObject({
      content: "two",
      context: "ctx",
    });
  });

  it("vim's save (rename to note~, create note, write, fsync) is one request; a real move still goes with its save", async () => {
    const { file } = (await u.api.post("/api/v1/files", { name: "v.md", content: "one" })).body;
    const client = new TxtfsClient({ url: t.url, key: u.key, source: "mount", timeoutMs: 2000 });
    const vfs = await mountVfs({ client, writeBehind: true });
    await vfs.mkdir("/d");
    expect(await vfs.drain()).toBe(0);
    const puts = () => client.requestsByKind["PUT /api/v1/files/:id"] ?? 0;
    const edit = async (from: string, to: string, text: string) => {
      await vfs.rename(from, `${from}~`);
      const fd = await vfs.create(to, 0o644);
      await vfs.write(fd, Buffer.from(text), 0);
      await vfs.fsync(fd); // on the service before fsync returns
      await vfs.release(fd);
      await vfs.unlink(`${from}~`);
    };
    const before = puts();
    await edit("/v.md", "/v.md", "two");
    // The note kept its name and folder on the service: no rename to send, only the body.
    expect(puts() - before).toBe(1);
    expect((await u.api.get(`/api/v1/files/${file.id}`)).body).toMatchObject({
      name: "v.md",
      content: "two",
    });
    // Moved here (not sent yet), then the same dance: the move goes with the save.
    await vfs.rename("/v.md", "/d/w.md");
    await edit("/d/w.md", "/d/w.md", "three");
    expect(await vfs.drain()).toBe(0);
    expect((await remote()).map((f) => f.id)).toEqual([file.id]);
    expect((await u.api.get(`/api/v1/files/${file.id}`)).body).toMatchObject({
      name: "w.md",
      content: "three",
      folderId: (vfs.tree.lookup("/d") as { id: string }).id,
    });
  });

  it("rm -rf is write-behind: deletes go up in bulk; a note removed before it left costs nothing", async () => {
    const vfs = await mountVfs();
    await vfs.mkdir("/d");
    await vfs.mkdir("/d/e");
    for (let i = 0; i < 10; i++) await writeFile(vfs, `/d/e/n${i}.md`, `note ${i}`);
    // Not the feed's long polls: on a loaded machine one may end and start again meanwhile.
    const sent = () => vfs.stats().requests - vfs.stats().feedPolls;
    let before = sent();
    for (let i = 0; i < 10; i++) await vfs.unlink(`/d/e/n${i}.md`);
    await vfs.rmdir("/d/e");
    await vfs.rmdir("/d");
    expect(vfs.readdir("/")).toEqual([]); // gone at once
    expect(await vfs.drain()).toBe(0);
    expect(sent() - before).toBe(1); // one bulk request
    expect(await remote()).toEqual([]);
    expect((await u.api.get("/api/me/folders")).body.folders).toEqual([]);

    const fd = await vfs.create("/tmp.md", 0o644);
    await vfs.write(fd, Buffer.from("short-lived"), 0);
    await vfs.release(fd);
    before = sent();
    await vfs.unlink("/tmp.md");
    expect(await vfs.drain()).toBe(0);
    expect(sent() - before).toBe(0);
    expect(await remote()).toEqual([]);
  });

  describe("a note deleted and created again (tar -x, git checkout) continues", () => {
    async function tarOver(vfs: Vfs, path: string, text: string, pauseMs = 0) {
      await vfs.unlink(path);
      if (pauseMs) await sleep(pauseMs);
      await writeFile(vfs, path, text);
    }

    it("while a delivery of other saves is on its way", async () => {
      const { file } = (await u.api.post("/api/v1/files", { name: "a.md", content: "one", tags: ["t"] }))
        .body;
      const h = heldCreates();
      const vfs = await mountVfs({ client: h.client });
      const fd = await vfs.create("/other.md", 0o644);
      await vfs.write(fd, Buffer.from("other"), 0);
      await vfs.release(fd);
      while (h.held() === 0) await sleep(5); // the round taking other.md's create is on its way
      const unlinked = vfs.unlink("/a.md").then(() => {
        const again = vfs.create("/a.md", 0o644);
        return again.then(async (fd2) => {
          await vfs.write(fd2, Buffer.from("two"), 0);
          await vfs.release(fd2);
        });
      });
      await unlinked;
      h.open();
      expect(await vfs.drain()).toBe(0);
      const files = await remote();
      expect(files.map((f) => f.name).sort()).toEqual(["a.md", "other.md"]);
      expect(files.find((f) => f.name === "a.md")!.id).toBe(file.id);
      expect((await u.api.get(`/api/v1/files/${file.id}`)).body).toMatchObject({
        content: "two",
        tags: ["t"],
      });
    });

    it("when a delivery would start between the delete and the create", async () => {
      const { file } = (await u.api.post("/api/v1/files", { name: "a.md", content: "one", tags: ["t"] }))
        .body;
      const vfs = await mountVfs();
      // Longer than the quiet moment after which a delivery starts (20 ms), within the delete's grace.
      await tarOver(vfs, "/a.md", "two", 60);
      const files = await remote();
      expect(files.map((f) => f.id)).toEqual([file.id]);
      expect((await u.api.get(`/api/v1/files/${file.id}`)).body).toMatchObject({
        content: "two",
        tags: ["t"],
      });
    });

    it("a delete with nothing after it still leaves on its own; `txtfs sync` takes it at once", async () => {
      await u.api.post("/api/v1/files", { name: "a.md", content: "one" });
      await u.api.post("/api/v1/files", { name: "b.md", content: "two" });
      const vfs = await mountVfs();
      await vfs.unlink("/a.md");
      const deadline = Date.now() + 5000;
      while ((await remote()).length > 1 && Date.now() < deadline) await sleep(20);
      expect((await remote()).map((f) => f.name)).toEqual(["b.md"]);
      await vfs.unlink("/b.md");
      expect(await vfs.drain()).toBe(0);
      expect(await remote()).toEqual([]);
    });
  });

  it("mkdir is write-behind: a new tree with notes inside goes up in one request, in order", async () => {
    const vfs = await mountVfs();
    let before = vfs.stats().requests;
    await vfs.mkdir("/a");
    await vfs.mkdir("/a/b");
    await vfs.mkdir("/a/b/c");
    for (const [path, text] of [
      ["/a/top.md", "top"],
      ["/a/b/c/deep.md", "deep"],
    ]) {
      const fd = await vfs.create(path!, 0o644);
      await vfs.write(fd, Buffer.from(text!), 0);
      await vfs.release(fd);
    }
    expect(vfs.readdir("/a").sort()).toEqual(["b", "top.md"]); // shown at once
    expect((await vfs.getattr("/a/b/c")).mode & 0o170000).toBe(0o040000);
    expect(await vfs.drain()).toBe(0);
    expect(vfs.stats().requests - before).toBe(1);
    const { folders } = (await u.api.get("/api/me/folders")).body as {
      folders: { id: string; name: string; parentFolderId: string | null }[];
    };
    const byName = new Map(folders.map((f) => [f.name, f]));
    expect(byName.get("a")!.parentFolderId).toBeNull();
    expect(byName.get("b")!.parentFolderId).toBe(byName.get("a")!.id);
    expect(byName.get("c")!.parentFolderId).toBe(byName.get("b")!.id);
    const files = (await u.api.get("/api/me/files")).body.files as { name: string; folderId: string }[];
    expect(files.find((f) => f.name === "deep.md")!.folderId).toBe(byName.get("c")!.id);
    expect(files.find((f) => f.name === "top.md")!.folderId).toBe(byName.get("a")!.id);
    expect(await readAll(vfs, "/a/b/c/deep.md")).toBe("deep");

    // A tree made and removed before it left costs nothing; a new folder renamed at once keeps its name.
    before = vfs.stats().requests;
    await vfs.mkdir("/x");
    await vfs.mkdir("/x/y");
    await vfs.rmdir("/x/y");
    await vfs.rmdir("/x");
    expect(await vfs.drain()).toBe(0);
    expect(vfs.stats().requests - before).toBe(0);
    await vfs.mkdir("/r");
    await vfs.rename("/r", "/r2");
    expect(await vfs.drain()).toBe(0);
    const names = ((await u.api.get("/api/me/folders")).body.folders as { name: string }[]).map(
      (f) => f.name,
    );
    expect(names.sort()).toEqual(["a", "b", "c", "r2"]);
  });

  it("write-behind: renaming or deleting a note still on its way waits for it", async () => {
    const vfs = await mountVfs();
    for (const name of ["a", "b"]) {
      const fd = await vfs.create(`/${name}.md`, 0o644);
      await vfs.write(fd, Buffer.from(name), 0);
      await vfs.release(fd);
    }
    await vfs.rename("/a.md", "/a2.md");
    await vfs.unlink("/b.md");
    expect(await vfs.drain()).toBe(0);
    const files = await remote();
    expect(files.map((f) => f.name)).toEqual(["a2.md"]);
    expect((await u.api.get(`/api/v1/files/${files[0]!.id}`)).body.content).toBe("a");
  });

  it("write-behind: a rename is shown at once, sent later keeping the note, and never undone by the feed", async () => {
    const { file } = (await u.api.post("/api/v1/files", { name: "r.md", content: "r", tags: ["t"] })).body;
    const vfs = await mountVfs();
    // Not the feed's polls: another client's change below makes it answer and poll again, once or
    // twice depending on the machine's load.
    const sent = () => vfs.stats().requests - vfs.stats().feedPolls;
    const before = sent();
    await vfs.rename("/r.md", "/r2.md");
    expect(vfs.readdir("/")).toEqual(["r2.md"]);
    // Another client changes the note meanwhile: the feed brings its old name back, which must not
    // undo our rename while it is on its way.
    await u.api.put(`/api/v1/files/${file.id}`, { tags: ["t", "theirs"] });
    await sleep(300);
    expect(vfs.readdir("/")).toEqual(["r2.md"]);
    expect(await vfs.drain()).toBe(0);
    expect((await u.api.get(`/api/v1/files/${file.id}`)).body).toMatchObject({
      name: "r2.md",
      tags: ["t", "theirs"],
      content: "r",
    });
    // A rename and an edit of the same note: the edit lands on the renamed note, no conflict.
    await vfs.rename("/r2.md", "/r3.md");
    const fd = await vfs.open("/r3.md", fsc.O_WRONLY | fsc.O_APPEND);
    await vfs.write(fd, Buffer.from("+more"), 1);
    await vfs.release(fd);
    expect(await vfs.drain()).toBe(0);
    expect((await u.api.get(`/api/v1/files/${file.id}`)).body).toMatchObject({
      name: "r3.md",
      content: "r+more",
    });
    expect(vfs.conflicts).toEqual([]);
    expect((await remote()).map((f) => f.name)).toEqual(["r3.md"]);
    expect(sent() - before).toBeLessThanOrEqual(5);
  });
});

describe("a rename on its way is never undone by what comes back meanwhile", () => {
  const remoteNote = async (id: string) => (await u.api.get(`/api/v1/files/${id}`)).body;

  /** A client whose writes wait at a gate: `held()` of them are waiting; `open()` lets them all go. */
  function gatedWrites() {
    const client = new TxtfsClient({ url: t.url, key: u.key, source: "mount", timeoutMs: 5000 });
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    let held = 0;
    for (const m of ["sync", "createFolder", "createFile", "updateFile"] as const) {
      const call = (client[m] as (...a: unknown[]) => Promise<unknown>).bind(client);
      (client as unknown as Record<string, unknown>)[m] = async (...a: unknown[]) => {
        held++;
        await gate;
        return call(...a);
      };
    }
    return { client, open, held: () => held };
  }

  it("into a folder made here that the service has not got yet: the feed's record of its old place", async () => {
    const { file } = (await u.api.post("/api/v1/files", { name: "r.md", content: "r" })).body;
    const gated = gatedWrites();
    const vfs = await mountVfs({ client: gated.client });
    try {
      await vfs.mkdir("/d");
      await vfs.rename("/r.md", "/d/r2.md");
      // Another client tags the note: the feed brings its record, still at the root as r.md.
      const cursor = vfs.stats().cursor;
      await u.api.put(`/api/v1/files/${file.id}`, { tags: ["theirs"] });
      await until(() => vfs.stats().cursor !== cursor, "the feed");
      expect(vfs.readdir("/")).toEqual(["d"]);
      expect(vfs.readdir("/d")).toEqual(["r2.md"]);
    } finally {
      gated.open();
    }
    expect(await vfs.drain()).toBe(0);
    const folders = (await u.api.get("/api/me/folders")).body.folders as { id: string; name: string }[];
    expect(await remoteNote(file.id)).toMatchObject({
      name: "r2.md",
      folderId: folders.find((f) => f.name === "d")!.id,
      content: "r",
      tags: ["theirs"],
    });
  });

  it.each([
    ["a save", "r2"],
    ["a rename", "r"],
  ])(
    "while its journal entry waits for the journal (an fdatasync): the answer to %s before it",
    async (before, content) => {
      const a = (await u.api.post("/api/v1/folders", { name: "a" })).body.folder;
      const b = (await u.api.post("/api/v1/folders", { name: "b" })).body.folder;
      const { file } = (await u.api.post("/api/v1/files", { name: "r.md", content: "r", folderId: a.id }))
        .body;
      const gated = gatedWrites();
      const vfs = await mountVfs({ client: gated.client });
      if (before === "a save") {
        const fd = await vfs.open("/a/r.md", fsc.O_WRONLY | fsc.O_TRUNC);
        await vfs.write(fd, Buffer.from("r2"), 0);
        await vfs.release(fd);
      } else {
        await vfs.rename("/a/r.md", "/r.md");
        await vfs.rename("/r.md", "/a/r.md");
      }
      await until(() => gated.held() > 0, `${before} on its way`);
      // The journal is busy (as during a durable write's fdatasync): the rename is shown at once, its
      // entry waits. The answer to what was on its way comes back meanwhile.
      // The journal's lock, held from outside to open the window.
      const lock = (vfs as any).c.journal.lock as { run(fn: () => Promise<void>): Promise<void> };
      let release!: () => void;
      const busy = lock.run(() => new Promise<void>((r) => (release = r)));
      const renaming = vfs.rename("/a/r.md", "/b/r.md");
      try {
        gated.open();
        await until(async () => (await remoteNote(file.id)).content === content, `${before} on the service`);
        await sleep(50); // its answer applied
        expect(vfs.readdir("/a")).toEqual([]);
        expect(vfs.readdir("/b")).toEqual(["r.md"]);
      } finally {
        release();
      }
      await busy;
      await renaming;
      expect(await vfs.drain()).toBe(0);
      expect(vfs.readdir("/b")).toEqual(["r.md"]);
      expect(await remoteNote(file.id)).toMatchObject({ name: "r.md", folderId: b.id, content });
    },
  );
});

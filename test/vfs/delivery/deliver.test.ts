// Delivery in-process: write-behind, the journal across restarts and outages, answers lost, saves refused.
import { randomUUID } from "node:crypto";
import { constants as fsc, rmSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { NetworkError, TxtfsClient } from "../../../src/client/api.ts";
import { Journal } from "../../../src/vfs/delivery/journal.ts";
import type { Vfs } from "../../../src/vfs/vfs.ts";
import {
  cacheDir,
  mountVfs,
  readAll,
  remote,
  restartService,
  sleep,
  t,
  u,
  useVfsServer,
  writeFile,
} from "../fixture.ts";

useVfsServer();

describe("vfs", () => {
  it("a save whose empty first step reached the service with its answer lost goes on top of it, not beside it (`echo x > note`, kill -9)", async () => {
    // CI found it: bash's `>` flushes the truncate alone; on a busy machine that empty step went
    // up alone, the daemon was killed before it recorded the answer, and the save that replaced
    // the step in the journal met our own empty version as if it were an edit made elsewhere.
    const { file } = (await u.api.post("/api/v1/files", { name: "n.md", content: "v1\n" })).body;
    const client = new TxtfsClient({ url: t.url, key: u.key, source: "mount", timeoutMs: 2000 });
    const update = client.updateFile.bind(client);
    let lost = 0;
    client.updateFile = async (...args: Parameters<TxtfsClient["updateFile"]>) => {
      const done = await update(...args);
      if (args[1].content === "" && lost++ === 0) throw new NetworkError("PUT: the answer was lost");
      return done;
    };
    const vfs = await mountVfs({ client, writeBehind: true });
    expect(await readAll(vfs, "/n.md")).toBe("v1\n");
    const fd = await vfs.open("/n.md", fsc.O_WRONLY);
    await vfs.ftruncate(fd, 0);
    await vfs.flush(fd); // the empty first step, journalled
    expect(await vfs.drain()).toBe(1); // it went up alone; its answer was lost: still waiting
    expect((await u.api.get(`/api/v1/files/${file.id}`)).body.content).toBe("");
    await vfs.write(fd, Buffer.from("x\n"), 0);
    await vfs.release(fd);
    expect(await vfs.drain()).toBe(0);
    expect((await u.api.get(`/api/v1/files/${file.id}`)).body.content).toBe("x\n");
    expect((await remote()).map((f) => f.name)).toEqual(["n.md"]);
  });

  it("a save the service refuses (share downgraded meanwhile) is reported once and its bytes kept in a local file", async () => {
    const alice = await t.user();
    const team = (await alice.api.post("/api/v1/folders", { name: "Team" })).body.folder;
    const plan = (
      await alice.api.post("/api/v1/files", { name: "plan.md", content: "v1", folderId: team.id })
    ).body.file;
    const share = (
      await alice.api.post(`/api/v1/folders/${team.id}/share`, { email: u.email, role: "writer" })
    ).body.share;
    const vfs = await mountVfs();
    const dir = `/Shared with me/${alice.email}/Team`;
    const fd = await vfs.open(`${dir}/plan.md`, fsc.O_RDWR);
    await vfs.write(fd, Buffer.from("bob's edit"), 0);
    await vfs.flush(fd); // journalled; delivered a moment later
    expect(
      (await alice.api.request("PATCH", `/api/v1/shares/${share.id}`, { json: { role: "reader" } })).status,
    ).toBe(200);
    await vfs.release(fd);
    expect(await vfs.drain()).toBe(0);
    expect((await alice.api.get(`/api/v1/files/${plan.id}`)).body.content).toBe("v1");
    const [refused] = vfs.takeRefused();
    expect(refused).toMatchObject({ path: `${dir}/plan.md`, keptAs: `${dir}/plan.md.unsent` });
    expect(vfs.takeRefused()).toEqual([]); // reported once
    expect(vfs.refused).toHaveLength(1); // still listed by status
    expect(await readAll(vfs, `${dir}/plan.md.unsent`)).toBe("bob's edit");
    expect(vfs.localOnly().map((l) => l.path)).toContain(`${dir}/plan.md.unsent`);
  });

  it("journals writes while the service is unreachable and replays them in order", async () => {
    const { file } = (await u.api.post("/api/v1/files", { name: "j.md", content: "v1" })).body;
    const moved = (await u.api.post("/api/v1/files", { name: "k.md", content: "k", tags: ["kept"] })).body
      .file;
    const vfs = await mountVfs();
    expect(await readAll(vfs, "/j.md")).toBe("v1"); // now cached
    const port = new URL(t.url).port;
    await t.server.close(); // the service goes away (store closed; data stays on disk)
    await writeFile(vfs, "/j.md", "v2 offline");
    await writeFile(vfs, "/new.md", "made offline");
    await vfs.rename("/k.md", "/k2.md"); // a rename of a note is journalled too
    expect(await readAll(vfs, "/j.md")).toBe("v2 offline");
    expect(vfs.readdir("/").sort()).toEqual(["j.md", "k2.md", "new.md"]);
    expect(vfs.stats().dirty).toBe(3);
    await vfs.stop(); // the daemon stops with the writes still journalled
    // The service comes back on the same port and data; a new daemon delivers the journal.
    const again = await restartService(port);
    try {
      const vfs2 = await mountVfs();
      expect(vfs2.readdir("/").sort()).toEqual(["j.md", "k2.md", "new.md"]); // restored before delivery
      expect(await vfs2.drain()).toBe(0);
      const files = await remote();
      expect(files.map((f) => f.name).sort()).toEqual(["j.md", "k2.md", "new.md"]);
      expect((await u.api.get(`/api/v1/files/${moved.id}`)).body).toMatchObject({
        name: "k2.md",
        tags: ["kept"],
      });
      expect((await u.api.get(`/api/v1/files/${file.id}`)).body.content).toBe("v2 offline");
      await vfs2.stop();
    } finally {
      await again.close();
    }
  });

  it("the cache dir's journal removed from under the daemon: it goes on, delivers everything, and a restart still finds what was pending", async () => {
    const vfs = await mountVfs({ writeBehind: true });
    const save = async (v: Vfs, path: string, text: string) => {
      const fd = await v.create(path, 0o644);
      await v.write(fd, Buffer.from(text), 0);
      await v.release(fd);
    };
    // A burst (a bulk request, whose copy on its way is written into the journal's dir) whose
    // journal goes away while it waits: the delivery must not take the daemon down.
    for (let i = 0; i < 30; i++) await save(vfs, `/a${i}.md`, `a ${i}\n`);
    rmSync(join(cacheDir, "journal"), { recursive: true, force: true });
    for (let i = 0; i < 30; i++) await save(vfs, `/b${i}.md`, `b ${i}\n`);
    expect(await vfs.drain()).toBe(0);
    expect((await remote()).length).toBe(60);

    // Again with the service away: what is pending is written to a new log, which a restart reads.
    const port = new URL(t.url).port;
    await t.server.close();
    await save(vfs, "/c.md", "c before\n");
    rmSync(join(cacheDir, "journal"), { recursive: true, force: true });
    await save(vfs, "/d.md", "d after\n");
    await vfs.stop();
    const again = await restartService(port);
    try {
      const vfs2 = await mountVfs();
      expect(await vfs2.drain()).toBe(0);
      const names = (await remote()).map((f) => f.name);
      expect(names).toContain("c.md");
      expect(names).toContain("d.md");
      expect(await readAll(vfs2, "/c.md")).toBe("c before\n");
      expect(await readAll(vfs2, "/d.md")).toBe("d after\n");
      await vfs2.stop();
    } finally {
      await again.close();
    }
  });

  it("a single save whose answer was lost goes again and finds its bytes there: no conflict copy", async () => {
    const created = await u.api.post("/api/v1/files", { name: "lost.md", content: "v1\n" });
    const note = created.body.file;
    const journal = new Journal(cacheDir);
    await journal.load();
    await journal.put({
      fileId: note.id,
      createKey: randomUUID(),
      name: "lost.md",
      folderId: null,
      content: "v2\n",
      baseEtag: note.etag,
      baseHash: note.contentHash,
      path: "/lost.md",
    });
    journal.close();
    // The service applied it (If-Match v1), but the daemon died before it heard the answer.
    const client = new TxtfsClient({ url: t.url, key: u.key, source: "mount" });
    await client.updateFile(note.id, { content: "v2\n" }, { ifMatch: note.etag });

    const vfs = await mountVfs(); // the journal sends v2 again, based on v1: a 412
    expect(await vfs.drain()).toBe(0);
    const files = await remote();
    expect(files.map((f) => f.name)).toEqual(["lost.md"]);
    expect((await u.api.get(`/api/v1/files/${note.id}`)).body.content).toBe("v2\n");
    expect(vfs.conflicts).toEqual([]);
  });

  it("deletes made offline are delivered later; one over a note changed remotely meanwhile is not applied", async () => {
    const kept = (await u.api.post("/api/v1/files", { name: "kept.md", content: "v1" })).body.file;
    await u.api.post("/api/v1/files", { name: "gone.md", content: "bye" });
    const vfs = await mountVfs();
    const port = new URL(t.url).port;
    await t.server.close();
    await vfs.unlink("/kept.md");
    await vfs.unlink("/gone.md");
    expect(vfs.readdir("/")).toEqual([]);
    await vfs.stop(); // both deletes still journalled
    const again = await restartService(port);
    try {
      // Someone edits kept.md before the deletes arrive: that edit must not be lost.
      await u.api.put(`/api/v1/files/${kept.id}`, { content: "v2 remote" });
      const vfs2 = await mountVfs();
      expect(vfs2.readdir("/")).toEqual([]); // restored as deleted
      expect(await vfs2.drain()).toBe(0);
      expect((await remote()).map((f) => f.name)).toEqual(["kept.md"]);
      expect(vfs2.readdir("/")).toEqual(["kept.md"]); // shows again
      expect(await readAll(vfs2, "/kept.md")).toBe("v2 remote");
      await vfs2.stop();
    } finally {
      await again.close();
    }
  });

  it("a folder made offline, with a note inside, survives a restart of the daemon and is delivered", async () => {
    const vfs = await mountVfs();
    const port = new URL(t.url).port;
    await t.server.close();
    await vfs.mkdir("/off");
    await writeFile(vfs, "/off/n.md", "made offline");
    await vfs.stop();
    const again = await restartService(port);
    try {
      const vfs2 = await mountVfs();
      expect(vfs2.readdir("/off")).toEqual(["n.md"]); // restored before delivery
      expect(await vfs2.drain()).toBe(0);
      const { folders } = (await u.api.get("/api/me/folders")).body as {
        folders: { id: string; name: string }[];
      };
      expect(folders.map((f) => f.name)).toEqual(["off"]);
      const files = (await u.api.get("/api/me/files")).body.files as { name: string; folderId: string }[];
      expect(files).toMatchObject([{ name: "n.md", folderId: folders[0]!.id }]);
      expect(vfs2.readdir("/off")).toEqual(["n.md"]);
      await vfs2.stop();
    } finally {
      await again.close();
    }
  });

  it("write-behind: a save returns before delivery, reads see it, drain delivers it once", async () => {
    const vfs = await mountVfs();
    const before = vfs.stats().requests;
    const fd = await vfs.create("/wb.md", 0o644);
    await vfs.write(fd, Buffer.from("draft"), 0);
    await vfs.release(fd);
    expect(await readAll(vfs, "/wb.md")).toBe("draft");
    expect(await vfs.drain()).toBe(0);
    expect(vfs.stats().requests - before).toBe(1);
    expect((await remote()).map((f) => f.name)).toEqual(["wb.md"]);
    expect((await u.api.get(`/api/v1/files/${(await remote())[0]!.id}`)).body.content).toBe("draft");
  });

  it("write-behind: saves of one note in quick succession land in order, never as conflicts", async () => {
    const vfs = await mountVfs();
    await writeFile(vfs, "/seq.md", "0\n");
    for (let i = 1; i <= 30; i++) {
      // Alternate appends and truncating rewrites, without waiting for delivery in between.
      const fd = await vfs.open("/seq.md", fsc.O_WRONLY | (i % 3 === 0 ? 0 : fsc.O_APPEND));
      if (i % 3 === 0) await vfs.ftruncate(fd, 0);
      await vfs.write(fd, Buffer.from(`${i}\n`), i % 3 === 0 ? 0 : 1 << 20);
      await vfs.flush(fd);
      await vfs.release(fd);
      if (i % 7 === 0) await sleep(5); // let some deliveries land between saves
    }
    expect(await vfs.drain()).toBe(0);
    const files = await remote();
    expect(files.map((f) => f.name)).toEqual(["seq.md"]);
    expect(vfs.conflicts).toEqual([]);
    expect((await u.api.get(`/api/v1/files/${files[0]!.id}`)).body.content).toBe("30\n");
    expect(await readAll(vfs, "/seq.md")).toBe("30\n");
  });
});

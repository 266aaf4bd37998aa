// Bulk delivery in-process: bursts of saves in few requests, a bulk whose answer was lost.
import { randomUUID } from "node:crypto";
import { constants as fsc } from "node:fs";
import { describe, expect, it } from "vitest";
import { TxtfsClient } from "../../../src/client/api.ts";
import { type BulkItem, bulksOf, pushBulk } from "../../../src/vfs/delivery/bulk.ts";
import { Journal } from "../../../src/vfs/delivery/journal.ts";
import { cacheDir, mountVfs, readAll, remote, restartService, t, u, useVfsServer } from "../fixture.ts";

useVfsServer();

describe("vfs", () => {
  it("a drain (unmount, txtfs sync, fsync) sends what waits in one request, up to the service's 500", async () => {
    const client = new TxtfsClient({ url: t.url, key: u.key, source: "mount", timeoutMs: 2000 });
    const vfs = await mountVfs({ client, writeBehind: true });
    const port = new URL(t.url).port;
    await t.server.close(); // the saves wait in the journal
    for (let i = 0; i < 450; i++) {
      const fd = await vfs.create(`/w${i}.md`, 0o644);
      await vfs.write(fd, Buffer.from(`w ${i}\n`), 0);
      await vfs.release(fd);
    }
    const again = await restartService(port);
    try {
      const syncs = () => client.requestsByKind["POST /api/v1/sync"] ?? 0;
      const before = syncs();
      expect(await vfs.drain()).toBe(0);
      expect(syncs() - before).toBe(1); // 200 at a time (bursts) would be three, one after the other
      const files = await remote();
      expect(files.length).toBe(450);
      expect(
        (await u.api.get(`/api/v1/files/${files.find((f) => f.name === "w449.md")!.id}`)).body.content,
      ).toBe("w 449\n");
      await vfs.stop();
    } finally {
      await again.close();
    }
  });

  it("a burst of saves goes up in bulk: 60 new notes, 60 appends and 20 moves in a few requests", async () => {
    const vfs = await mountVfs();
    await vfs.mkdir("/to");
    let before = vfs.stats().requests;
    for (let i = 0; i < 60; i++) {
      const fd = await vfs.create(`/n${i}.md`, 0o644);
      await vfs.write(fd, Buffer.from(`note ${i}\n`), 0);
      await vfs.release(fd);
    }
    expect(await vfs.drain()).toBe(0);
    expect(vfs.stats().requests - before).toBeLessThanOrEqual(3);
    let files = await remote();
    expect(files.map((f) => f.name).sort()).toEqual(Array.from({ length: 60 }, (_, i) => `n${i}.md`).sort());

    before = vfs.stats().requests;
    for (let i = 0; i < 60; i++) {
      const fd = await vfs.open(`/n${i}.md`, fsc.O_WRONLY | fsc.O_APPEND);
      await vfs.write(fd, Buffer.from(`more ${i}\n`), 0);
      await vfs.release(fd);
    }
    for (let i = 0; i < 20; i++) await vfs.rename(`/n${i}.md`, `/to/m${i}.md`);
    expect(await vfs.drain()).toBe(0);
    expect(vfs.stats().requests - before).toBeLessThanOrEqual(4);
    files = await remote();
    expect(files).toHaveLength(60);
    const byName = new Map(files.map((f) => [f.name, f]));
    for (const i of [0, 19, 20, 59]) {
      const f = byName.get(i < 20 ? `m${i}.md` : `n${i}.md`)!;
      expect((await u.api.get(`/api/v1/files/${f.id}`)).body.content).toBe(`note ${i}\nmore ${i}\n`);
    }
    expect(vfs.readdir("/to")).toHaveLength(20);
  });

  it("a long burst goes up while it goes on, never waiting for a pause (there is none)", async () => {
    const client = new TxtfsClient({ url: t.url, key: u.key, source: "mount", timeoutMs: 5000 });
    let saves = 0;
    let firstRoundAt: number | undefined;
    const sync = client.sync.bind(client);
    client.sync = (...args: Parameters<TxtfsClient["sync"]>) => {
      firstRoundAt ??= saves;
      return sync(...args);
    };
    const create = client.createFile.bind(client); // a round of one note
    client.createFile = (...args: Parameters<TxtfsClient["createFile"]>) => {
      firstRoundAt ??= saves;
      return create(...args);
    };
    const vfs = await mountVfs({ client, writeBehind: true });
    for (; saves < 300; saves++) {
      const fd = await vfs.create(`/b${saves}.md`, 0o644);
      await vfs.write(fd, Buffer.from(`burst ${saves}\n`), 0);
      await vfs.release(fd);
      await new Promise(setImmediate); // the next save is the next FUSE call: timers due run between
    }
    // The first round went once a bulk request's worth (200) was waiting, not at the end (a 0 ms
    // timer, put off by every save of the loop, never fired while it went on).
    expect(firstRoundAt).toBeGreaterThanOrEqual(1);
    expect(firstRoundAt).toBeLessThanOrEqual(201);
    expect(await vfs.drain()).toBe(0);
    const files = await remote();
    expect(files).toHaveLength(300);
    for (const f of files.filter((x) => ["b0.md", "b64.md", "b299.md"].includes(x.name)))
      expect((await u.api.get(`/api/v1/files/${f.id}`)).body.content).toBe(`burst ${f.name.slice(1, -3)}\n`);
  });

  it("a bulk delivery whose answer was lost goes again unchanged: no note is created twice", async () => {
    const journal = new Journal(cacheDir);
    await journal.load();
    const items: BulkItem[] = [];
    for (const name of ["p.md", "q.md"]) {
      const body = { name, content: `${name} body\n`, folderId: null };
      const entry = await journal.put({
        fileId: null,
        createKey: randomUUID(),
        baseEtag: null,
        path: `/${name}`,
        ...body,
      });
      items.push({ key: Journal.keyOf(entry), op: "file.create", body });
    }
    const [bulk] = bulksOf(items);
    journal.setInflightBulk(bulk);
    journal.close();
    // The service applied it, but its answer never arrived: the daemon died meanwhile.
    const client = new TxtfsClient({ url: t.url, key: u.key, source: "mount" });
    expect(await pushBulk(client, bulk!)).toHaveLength(2);

    const vfs = await mountVfs(); // finds the journal and the bulk on its way
    expect(await vfs.drain()).toBe(0);
    const files = await remote();
    expect(files.map((f) => f.name).sort()).toEqual(["p.md", "q.md"]);
    expect(vfs.readdir("/").sort()).toEqual(["p.md", "q.md"]);
    expect(await readAll(vfs, "/q.md")).toBe("q.md body\n");
  });
});

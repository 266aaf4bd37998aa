// Saves through open files in-process (src/vfs/open/saves.ts): writes through several handles, flush, fsync, release, reads.
import { constants as fsc } from "node:fs";
import { describe, expect, it } from "vitest";
import { TxtfsClient } from "../../../src/client/api.ts";
import type { Journal } from "../../../src/vfs/delivery/journal.ts";
import { mountVfs, readAll, remote, t, u, useVfsServer } from "../fixture.ts";

useVfsServer();

describe("vfs", () => {
  it("a write through another handle while a flush waits for the journal is saved by its own flush, never dropped", async () => {
    // Two programs with one note open: A's flush waits for the journal (its lock held by a
    // delivery's answer); B writes meanwhile. A's save, once recorded, must not mark B's bytes
    // as saved: they were lost at B's close (the note showed A's save again).
    const { file } = (await u.api.post("/api/v1/files", { name: "w.md", content: "base\n" })).body;
    const vfs = await mountVfs({ writeBehind: true });
    const a = await vfs.open("/w.md", fsc.O_RDWR);
    const b = await vfs.open("/w.md", fsc.O_RDWR);
    await vfs.write(a, Buffer.from("A"), 0);
    let unlock!: () => void;
    const journal = (vfs as any).c.journal as Journal;
    const held = (journal as any).lock.run(() => new Promise<void>((r) => (unlock = r)));
    const flushA = vfs.flush(a); // waits for the journal
    await new Promise((r) => setTimeout(r, 20));
    await vfs.write(b, Buffer.from("B"), 1); // "ABse\n"
    unlock();
    await held;
    await flushA;
    await vfs.flush(b);
    await vfs.release(a);
    await vfs.release(b);
    expect(await readAll(vfs, "/w.md")).toBe("ABse\n");
    expect(await vfs.drain()).toBe(0);
    expect((await u.api.get(`/api/v1/files/${file.id}`)).body.content).toBe("ABse\n");
  });

  for (const writeBehind of [true, false])
    it(`two handles writing a note whose body is still being fetched: both writes are kept (${writeBehind ? "write-behind" : "write-through"})`, async () => {
      // Each write loaded the body into the shared buffer; the second load replaced the buffer the
      // first write had gone into (and a truncate meanwhile was undone the same way).
      const { file } = (await u.api.post("/api/v1/files", { name: "w.md", content: "0123456789\n" })).body;
      const vfs = await mountVfs({ writeBehind });
      const a = await vfs.open("/w.md", fsc.O_RDWR);
      const b = await vfs.open("/w.md", fsc.O_RDWR);
      await Promise.all([vfs.write(a, Buffer.from("A"), 1), vfs.write(b, Buffer.from("B"), 5)]);
      expect(await readAll(vfs, "/w.md")).toBe("0A234B6789\n");
      await vfs.release(a);
      await vfs.release(b);
      expect(await vfs.drain()).toBe(0);
      expect((await u.api.get(`/api/v1/files/${file.id}`)).body.content).toBe("0A234B6789\n");
    });

  it("with --write-through, a write through another handle while a save's request is on its way stays, and its flush sends it", async () => {
    // The answer used to replace the buffer with what was sent: B's bytes vanished from the mount too.
    const { file } = (await u.api.post("/api/v1/files", { name: "w.md", content: "base\n" })).body;
    const client = new TxtfsClient({ url: t.url, key: u.key, source: "mount", timeoutMs: 2000 });
    const update = client.updateFile.bind(client);
    let gate: Promise<void> | undefined;
    client.updateFile = async (...args: Parameters<TxtfsClient["updateFile"]>) => {
      const done = await update(...args);
      await gate;
      return done;
    };
    const vfs = await mountVfs({ client, writeBehind: false });
    const a = await vfs.open("/w.md", fsc.O_RDWR);
    const b = await vfs.open("/w.md", fsc.O_RDWR);
    await vfs.write(a, Buffer.from("A"), 0);
    let open!: () => void;
    gate = new Promise<void>((r) => (open = r));
    const flushA = vfs.flush(a); // its PUT is answered, the answer held back
    await new Promise((r) => setTimeout(r, 50));
    await vfs.write(b, Buffer.from("B"), 1);
    open();
    await flushA;
    gate = undefined;
    expect(await readAll(vfs, "/w.md")).toBe("ABse\n");
    await vfs.flush(b);
    await vfs.release(a);
    await vfs.release(b);
    expect((await u.api.get(`/api/v1/files/${file.id}`)).body.content).toBe("ABse\n");
    expect((await remote()).map((f) => f.name)).toEqual(["w.md"]); // built on A's save: no conflict copy
  });

  it("an uncached read with the service down fails with EIO, fast", async () => {
    await u.api.post("/api/v1/files", { name: "x.md", content: "never read" });
    const vfs = await mountVfs();
    await t.server.close();
    const started = Date.now();
    await expect(readAll(vfs, "/x.md")).rejects.toMatchObject({ errno: "EIO" });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("write-through (--write-through): release returns after the service has the save", async () => {
    const vfs = await mountVfs({ writeBehind: false });
    const fd = await vfs.create("/wt.md", 0o644);
    await vfs.write(fd, Buffer.from("now"), 0);
    await vfs.release(fd);
    const files = await remote();
    expect(files.map((f) => f.name)).toEqual(["wt.md"]);
    expect((await u.api.get(`/api/v1/files/${files[0]!.id}`)).body.content).toBe("now");
  });

  it("fsync delivers the save before it returns", async () => {
    const vfs = await mountVfs();
    const fd = await vfs.create("/fs.md", 0o644);
    await vfs.write(fd, Buffer.from("synced"), 0);
    await vfs.fsync(fd);
    expect((await remote()).map((f) => f.name)).toEqual(["fs.md"]); // before release
    await vfs.release(fd);
  });
});

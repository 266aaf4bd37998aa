// A note kept local (a write split a character) and made text again by the next write goes up at
// that write's release. close(2) returns at FLUSH, before the kernel sends RELEASE: a kill -9
// between the two must not leave the text on this device only. The next start sends it.
import { cpSync, constants as fsc } from "node:fs";
import { expect, it } from "vitest";
import { TxtfsClient } from "../../../src/client/api.ts";
import {
  cacheDir,
  deviceOn,
  mountVfs,
  readAll,
  remote,
  scratchDir,
  t,
  u,
  until,
  useVfsServer,
  writeFile,
} from "../fixture.ts";

useVfsServer();

it("a kept note written back to text and killed between its flush and its release is sent at the next start", async () => {
  const vfs = await mountVfs();
  await writeFile(vfs, "/b.md", "aañejo");
  const split = await vfs.open("/b.md", fsc.O_RDWR);
  await vfs.write(split, Buffer.from("x"), 2); // cuts "ñ" in two: not UTF-8, kept local
  await vfs.release(split);
  expect(vfs.tree.lookup("/b.md")?.kind).toBe("local");

  const mended = await vfs.open("/b.md", fsc.O_RDWR);
  await vfs.write(mended, Buffer.from("y"), 3); // "aaxyejo": text again
  await vfs.flush(mended); // what close(2) waited for; the release never comes
  const killed = scratchDir("txtfs-killed-");
  cpSync(cacheDir, killed, { recursive: true }); // the cache dir as a kill -9 leaves it

  const next = deviceOn(t.url, killed);
  await next.start();
  expect(await readAll(next, "/b.md")).toBe("aaxyejo");
  await next.drain();
  const notes = await remote();
  expect(notes.map((n) => n.name)).toEqual(["b.md"]); // the same note, not a second one
  expect((await u.api.get(`/api/v1/files/${notes[0]!.id}`)).body.content).toBe("aaxyejo");
});

// Model test, mode 0 (1 run in 5 on a loaded machine): the note's previous save was on its way when
// the split kept it local. Its landing is what the kept file now builds on, also after a kill -9:
// the text again is that note's next version, not a conflict copy beside the save before it.
it("a kept note whose previous save landed after the split builds on that save after a kill -9", async () => {
  const client = new TxtfsClient({ url: t.url, key: u.key, source: "mount", timeoutMs: 5000 });
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  let holding = false;
  let held = 0;
  const update = client.updateFile.bind(client);
  client.updateFile = async (...args: Parameters<TxtfsClient["updateFile"]>) => {
    if (holding) {
      held++;
      await gate;
    }
    return update(...args);
  };
  const vfs = await mountVfs({ client, writeBehind: true });
  await writeFile(vfs, "/b.md", "first");
  holding = true;
  const save = await vfs.open("/b.md", fsc.O_RDWR);
  await vfs.truncate("/b.md", 0);
  await vfs.write(save, Buffer.from("aañejo"), 0);
  await vfs.release(save);
  const delivering = vfs.drain();
  await until(() => held > 0, "the save to be on its way");

  const split = await vfs.open("/b.md", fsc.O_RDWR);
  await vfs.write(split, Buffer.from("x"), 2); // cuts "ñ" in two: not UTF-8, kept local
  await vfs.release(split);
  expect(vfs.tree.lookup("/b.md")?.kind).toBe("local");
  open();
  await delivering;
  expect(await vfs.drain()).toBe(0);
  const [note] = await remote();
  expect((await u.api.get(`/api/v1/files/${note!.id}`)).body.content).toBe("aañejo");

  const mended = await vfs.open("/b.md", fsc.O_RDWR);
  await vfs.write(mended, Buffer.from("y"), 3); // "aaxyejo": text again
  await vfs.flush(mended); // the release never comes
  const killed = scratchDir("txtfs-killed-");
  cpSync(cacheDir, killed, { recursive: true });

  const next = deviceOn(t.url, killed);
  await next.start();
  expect(await next.drain()).toBe(0);
  expect(await readAll(next, "/b.md")).toBe("aaxyejo");
  const notes = await remote();
  expect(notes.map((n) => n.name)).toEqual(["b.md"]); // no conflict copy
  expect((await u.api.get(`/api/v1/files/${note!.id}`)).body.content).toBe("aaxyejo");
});

// Model soak seed 9827: a file opened while an append of ours waited, written after it landed with
// bytes that are not UTF-8. The kept file's claim named the version the open began on; our append's
// version replaced it only in memory, so after a kill -9 an `rm` met a 412 and the note stayed.
it("a note kept local from a file opened before our append landed builds on that append after a kill -9", async () => {
  const vfs = await mountVfs();
  await writeFile(vfs, "/a.md", "one\n");
  const appender = await vfs.open("/a.md", fsc.O_WRONLY | fsc.O_APPEND); // `>>`: the bytes go alone
  await vfs.write(appender, Buffer.from("two\n"), 4);
  await vfs.flush(appender);
  await vfs.release(appender);
  const held = await vfs.open("/a.md", fsc.O_WRONLY); // `dd conv=notrunc` while the append waits
  await vfs.drain();
  const [note] = await remote();
  expect((await u.api.get(`/api/v1/files/${note!.id}`)).body.content).toBe("one\ntwo\n");
  await vfs.write(held, Buffer.from([0xff]), 0); // not UTF-8 now: kept local
  await vfs.flush(held);
  await vfs.release(held);
  expect(vfs.tree.lookup("/a.md")?.kind).toBe("local");
  const killed = scratchDir("txtfs-killed-");
  cpSync(cacheDir, killed, { recursive: true }); // the cache dir as a kill -9 leaves it

  const next = deviceOn(t.url, killed);
  await next.start();
  await next.unlink("/a.md");
  await next.drain();
  expect(await remote()).toEqual([]);
});

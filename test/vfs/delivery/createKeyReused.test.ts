// A create sent again under its Idempotency-Key with other bytes than the first time is another
// request to the service (422 idempotency_key_reused). It happens when the first answer was lost
// and the note was saved again before the retry, or when a power cut took the cache dir back to a
// journal that held the create with older bytes. What the key made is ours: the note binds to it
// and the bytes here go on top, never refused and kept aside as `.unsent` (sim seed 411).
import { cpSync } from "node:fs";
import { expect, it } from "vitest";
import { TxtfsClient } from "../../../src/client/api.ts";
import { startFaultProxy } from "../../helpers/faultProxy.ts";
import { deviceOn, readAll, scratchDir, t, u, until, useVfsServer } from "../fixture.ts";

useVfsServer();

async function save(vfs: ReturnType<typeof deviceOn>, path: string, text: string) {
  const fd = await vfs.create(path, 0o644);
  await vfs.write(fd, Buffer.from(text), 0);
  await vfs.release(fd);
}

async function notesOnService(): Promise<{ id: string; name: string }[]> {
  return (await u.api.get("/api/v1/files")).body.files;
}

async function textOf(id: string): Promise<string> {
  return (await u.api.get(`/api/v1/files/${id}`)).body.content;
}

/** Every text the note had: its current one and each version's. */
async function textsOf(id: string): Promise<string[]> {
  const { versions } = (await u.api.get(`/api/v1/files/${id}/versions`)).body;
  const texts: string[] = [];
  for (const v of versions as { version_number: number }[])
    texts.push((await u.api.get(`/api/v1/files/${id}/versions/${v.version_number}`)).body.version.content);
  return texts;
}

it("a create whose answer was lost, saved again before the retry, lands once with the newest bytes", async () => {
  const proxy = await startFaultProxy(t.url, { random: () => 0 });
  const here = deviceOn(proxy.url, scratchDir("txtfs-vfs-k-"));
  await here.start();
  proxy.set({ loseAnswer: 1 }); // the create reaches the service; its answer never comes back
  await save(here, "/b.md", "first");
  expect(await here.drain()).toBe(1);
  await save(here, "/b.md", "second, newer");
  proxy.set({ loseAnswer: 0 });
  expect(await here.drain()).toBe(0);

  const notes = await notesOnService();
  expect(notes.map((n) => n.name)).toEqual(["b.md"]);
  expect(await textOf(notes[0]!.id)).toBe("second, newer");
  expect(await here.readdir("/")).not.toContain("b.md.unsent");
  expect(here.refused).toEqual([]);
  expect(await readAll(here, "/b.md")).toBe("second, newer");
  await proxy.close();
});

it("a power cut taking the journal back to the create's first bytes: the note the key made is shown and kept", async () => {
  const dir = scratchDir("txtfs-vfs-k-");
  const proxy = await startFaultProxy(t.url, { random: () => 0 });
  const here = deviceOn(proxy.url, dir);
  await here.start();
  proxy.set({ cut: true });
  await save(here, "/a.md", "apple");
  expect(await here.drain()).toBe(1);
  const snapshot = scratchDir("txtfs-vfs-k2-"); // the cache dir as a power cut leaves it
  cpSync(dir, snapshot, { recursive: true });
  await save(here, "/a.md", "appleapple"); // acknowledged, and then delivered
  proxy.set({ cut: false });
  expect(await here.drain()).toBe(0);
  await here.stop();
  await proxy.close();

  const again = deviceOn(t.url, snapshot);
  await again.start();
  expect(await again.drain()).toBe(0);
  const notes = await notesOnService();
  expect(notes.map((n) => n.name)).toEqual(["a.md"]);
  expect(await again.readdir("/")).toEqual(["a.md"]);
  expect(again.refused).toEqual([]);
  // The device and the service agree, and the save acknowledged before the cut is kept.
  const text = await textOf(notes[0]!.id);
  await until(async () => (await readAll(again, "/a.md")) === text, "the device to show the service's a.md");
  expect(await textsOf(notes[0]!.id)).toContain("appleapple");
});

it("an attachment's create answered lost, saved again before the retry: one attachment, the newest bytes", async () => {
  const proxy = await startFaultProxy(t.url, { random: () => 0 });
  const here = deviceOn(proxy.url, scratchDir("txtfs-vfs-k-"));
  await here.start();
  proxy.set({ loseAnswer: 1 });
  await save(here, "/p.png", "\x89PNG first");
  expect(await here.drain()).toBe(1);
  await save(here, "/p.png", "\x89PNG second, newer");
  proxy.set({ loseAnswer: 0 });
  expect(await here.drain()).toBe(0);

  const client = new TxtfsClient({ url: t.url, key: u.key, source: "test", timeoutMs: 5000 });
  const all = await client.attachments.all();
  expect(all.map((a) => a.name)).toEqual(["p.png"]);
  expect((await client.attachments.read(all[0]!.id))!.bytes.toString()).toBe("\x89PNG second, newer");
  expect(here.refused).toEqual([]);
  expect((await here.readdir("/")).sort()).toEqual(["p.png"]);
  await proxy.close();
});

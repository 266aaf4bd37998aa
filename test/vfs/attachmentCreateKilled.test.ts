// A kill -9 right after an attachment's create landed on the service: the restart must know the
// listed file is the one made here, not "made here and elsewhere while unmounted" (a conflict copy
// of our own bytes beside it: model soak seed 10000). Whether the answer came back (and was
// applied) before the kill, or was cut off with the kill.
import { cpSync } from "node:fs";
import { expect, it } from "vitest";
import { TxtfsClient } from "../../src/client/api.ts";
import { startFaultProxy } from "../helpers/faultProxy.ts";
import { bytesOf, deviceOn, scratchDir, t, u, useVfsServer } from "./fixture.ts";

useVfsServer();

const api = () => new TxtfsClient({ url: t.url, key: u.key, source: "test", timeoutMs: 5000 });
const png = Buffer.concat([Buffer.alloc(398), Buffer.from([0x3e, 0x6d, 0x8a, 0x64])]);

async function put(vfs: ReturnType<typeof deviceOn>, path: string, bytes: Buffer) {
  const fd = await vfs.create(path, 0o644);
  await vfs.write(fd, bytes, 0);
  await vfs.flush(fd);
  await vfs.release(fd);
}

/** The cache dir as a kill -9 leaves it now, started again against the service. */
async function killedAndStarted(dir: string) {
  const copy = scratchDir("txtfs-vfs-killed-");
  cpSync(dir, copy, { recursive: true });
  const again = deviceOn(t.url, copy);
  await again.start();
  expect(await again.drain()).toBe(0);
  return again;
}

async function expectOneFile(again: ReturnType<typeof deviceOn>) {
  expect((await again.readdir("/")).sort()).toEqual(["p.png"]);
  expect(await bytesOf(again, "/p.png")).toEqual(png);
  const all = await api().attachments.all();
  expect(all.map((a) => a.name)).toEqual(["p.png"]);
  expect(again.metrics().saves.conflicts).toBe(0);
}

it("killed just after the create's answer was applied: the file is the listed one", async () => {
  const dir = scratchDir("txtfs-vfs-a-");
  const here = deviceOn(t.url, dir);
  await here.start();
  await put(here, "/p.png", png);
  expect(await here.drain()).toBe(0);
  await expectOneFile(await killedAndStarted(dir));
});

/** p.png made on a device whose create reached the service and whose answer was lost. */
async function createdUnanswered() {
  const dir = scratchDir("txtfs-vfs-a-");
  const proxy = await startFaultProxy(t.url, { random: () => 0 });
  const here = deviceOn(proxy.url, dir);
  await here.start();
  proxy.set({ loseAnswer: 1 });
  await put(here, "/p.png", png);
  expect(await here.drain()).toBe(1);
  return { dir, proxy, here };
}

it("killed with the create landed and its answer cut off: the file is the listed one", async () => {
  const { dir, proxy } = await createdUnanswered();
  await expectOneFile(await killedAndStarted(dir));
  await proxy.close();
});

it("killed with the create landed unanswered and the file saved again since: both kept, each with its bytes", async () => {
  const { dir, proxy, here } = await createdUnanswered();
  proxy.set({ cut: true });
  const newer = Buffer.concat([png, Buffer.from("more")]);
  await put(here, "/p.png", newer);
  expect(await here.drain()).toBe(1);
  await proxy.close();

  // Listed at its name with the first bytes, ours apart with the newer ones (as the restart says).
  const again = await killedAndStarted(dir);
  const names = (await again.readdir("/")).sort();
  expect(names).toHaveLength(2);
  expect(names[1]).toBe("p.png");
  expect(await bytesOf(again, "/p.png")).toEqual(png);
  expect(await bytesOf(again, `/${names[0]}`)).toEqual(newer);
  const remote = new Map<string, Buffer>();
  for (const a of await api().attachments.all())
    remote.set(a.name, (await api().attachments.read(a.id))!.bytes);
  expect(remote).toEqual(
    new Map([
      [names[0]!, newer],
      ["p.png", png],
    ]),
  );
  expect(again.refused).toEqual([]);
});

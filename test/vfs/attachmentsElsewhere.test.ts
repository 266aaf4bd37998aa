// Attachments changed elsewhere while this mount has not heard yet (its change feed held back), found
// by the multi-device simulation (test/vfs/sim/, attachments): a file made in a folder another device
// removed meanwhile, and a rename answered with a version another device wrote meanwhile.
import { constants as fsc } from "node:fs";
import { expect, it } from "vitest";
import { TxtfsClient } from "../../src/client/api.ts";
import type { Vfs } from "../../src/vfs/vfs.ts";
import { startFaultProxy } from "../helpers/faultProxy.ts";
import { bytesOf, deviceOn, mountVfs, scratchDir, t, u, until, useVfsServer } from "./fixture.ts";

useVfsServer();

/** What a program does: open (creating it, or truncating it), write, close. */
async function put(vfs: Vfs, path: string, bytes: Buffer): Promise<void> {
  const made = await vfs.getattr(path).then(
    () => false,
    () => true,
  );
  const fd = made ? await vfs.create(path, 0o644) : await vfs.open(path, fsc.O_WRONLY);
  if (!made) await vfs.truncate(path, 0);
  await vfs.write(fd, bytes, 0);
  await vfs.flush(fd); // close(2) returns here
  await vfs.release(fd);
}

/** A device whose change feed can be held: from `hold()` on, no page reaches it until `open()`. */
async function heldDevice() {
  const client = new TxtfsClient({ url: t.url, key: u.key, source: "mount", timeoutMs: 5000 });
  let gate: Promise<void> | undefined;
  let open = () => {};
  const changes = client.changes.bind(client);
  client.changes = async (...args: Parameters<typeof changes>) => {
    const page = await changes(...args);
    if (!gate) return page;
    await gate;
    return changes(...args); // the page held back is asked again
  };
  const vfs = await mountVfs({ client });
  return {
    vfs,
    hold: () => {
      gate = new Promise<void>((r) => {
        open = r;
      });
    },
    open: () => {
      gate = undefined;
      open();
    },
  };
}

const listed = async () => {
  const client = new TxtfsClient({ url: t.url, key: u.key, source: "test", timeoutMs: 5000 });
  return Promise.all(
    (await client.attachments.all()).map(async (a) => ({
      name: a.name,
      folderId: a.folderId,
      bytes: (await client.attachments.read(a.id))!.bytes,
    })),
  );
};

// Soak seed 201: dev2 wrote d2/s.csv, dev1 (which had not heard of it: a new attachment's create
// waits 1 s) removed d2 by `rm -rf`; dev2's create then met a 404 for the folder, and the file was
// refused and kept on dev2 only (`txtfs status`: local-only), the program told its save succeeded.
it("an attachment made in a folder removed elsewhere meanwhile goes a level up, as the service moved the rest", async () => {
  const here = await heldDevice();
  const other = await mountVfs();
  await here.vfs.mkdir("/top", 0o755);
  await here.vfs.mkdir("/top/d", 0o755);
  expect(await here.vfs.drain()).toBe(0);
  await until(() => other.readdir("/").includes("top") && other.readdir("/top").includes("d"), "top/d there");
  here.hold();
  await other.rmdir("/top/d");
  expect(await other.drain()).toBe(0);
  const bytes = Buffer.from([0x77, 0, 0xff, 0xfe]);
  await put(here.vfs, "/top/d/s.csv", bytes);
  expect(await here.vfs.drain()).toBe(0);
  expect(here.vfs.refused).toEqual([]);
  expect(here.vfs.localOnly()).toEqual([]);
  expect([...here.vfs.readdir("/top")]).toEqual(["s.csv"]);
  const top = (await here.vfs.getxattr("/top", "user.txtfs.id"))?.toString();
  expect(await listed()).toEqual([{ name: "s.csv", folderId: top, bytes }]);
  here.open();
  await until(() => other.readdir("/top").includes("s.csv"), "the other device to show top/s.csv");
  expect(await bytesOf(other, "/top/s.csv")).toEqual(bytes);
});

// Soak seed 200: dev0 renamed p.png to d2/s.csv while dev2's write of it was on its way; the feed
// brought dev2's version while the rename waited (not applied: ours waited), then the rename's answer
// (which carries dev2's version) bound the file to it with dev0's older bytes: dev0 showed them for
// good, every other device dev2's.
it("a rename answered with a version written elsewhere meanwhile shows that version, not the bytes here", async () => {
  const here = await heldDevice();
  const other = await mountVfs();
  await here.vfs.mkdir("/d2", 0o755);
  await put(here.vfs, "/p.png", Buffer.from("one"));
  expect(await here.vfs.drain()).toBe(0);
  await until(() => other.readdir("/").includes("p.png") && other.readdir("/").includes("d2"), "p.png there");
  expect(await bytesOf(other, "/p.png")).toEqual(Buffer.from("one"));
  here.hold();
  const theirs = Buffer.from([0, 0xff, 0x74, 0x77, 0x6f]);
  await put(other, "/p.png", theirs);
  expect(await other.drain()).toBe(0);
  await here.vfs.rename("/p.png", "/d2/s.csv");
  expect(await here.vfs.drain()).toBe(0);
  expect(here.vfs.refused).toEqual([]);
  expect(await listed()).toEqual([
    { name: "s.csv", folderId: (await here.vfs.getxattr("/d2", "user.txtfs.id"))?.toString(), bytes: theirs },
  ]);
  expect(await bytesOf(here.vfs, "/d2/s.csv")).toEqual(theirs);
  here.open();
  await until(() => other.readdir("/d2").includes("s.csv"), "the other device to show d2/s.csv");
  expect(await bytesOf(other, "/d2/s.csv")).toEqual(theirs);
  // Still so once this mount has heard everything (the feed's echo of the rename changes nothing).
  await here.vfs.drain();
  expect(await bytesOf(here.vfs, "/d2/s.csv")).toEqual(theirs);
});

it("an attachment made in a folder renamed right after: the feed brings the file before its folder, and it shows once the folder does", async () => {
  const proxy = await startFaultProxy(t.url, { random: () => 0 });
  const vfs = deviceOn(proxy.url, scratchDir("txtfs-vfs-af-"));
  await vfs.start();
  proxy.set({ cut: true }); // away while it all happens: the feed is read afterwards, from its cursor
  const client = new TxtfsClient({ url: t.url, key: u.key, source: "test", timeoutMs: 5000 });
  const folder = (await u.api.post("/api/v1/folders", { name: "d1" })).body.folder;
  await client.attachments.create("s.csv", folder.id, Buffer.from("a,b\n"));
  // The folder's record moves past the file's in the feed: the file comes first, for a folder not known yet.
  await u.api.put(`/api/v1/folders/${folder.id}`, { name: "d2" });
  proxy.set({ cut: false });
  await until(() => vfs.tree.lookup("/d2") !== undefined, "d2 to show");
  await until(() => vfs.tree.lookup("/d2/s.csv") !== undefined, "d2/s.csv to show");
  expect((await bytesOf(vfs, "/d2/s.csv")).toString()).toBe("a,b\n");
  expect(vfs.readdir("/")).toEqual(["d2"]);
  await proxy.close();
});

// A folder made here and still in the journal at a kill -9, while another device made a folder of
// the same name: after the restart both show here (one under a suffixed name), each with its
// notes, as on every other device. Found by the multi-device simulation (soak seed 2028, step 57:
// the restarted device showed only its own `d1`, never the notes of the other). The restart put
// its journalled folder over the listed folder of that name, which then had no name in its parent
// (the folders' form of restartSameName.test.ts).
import { cpSync } from "node:fs";
import { expect, it } from "vitest";
import { startSlowProxy } from "../../helpers/slowProxy.ts";
import { deviceOn, mountVfs, readAll, scratchDir, t, u, until, useVfsServer, writeFile } from "../fixture.ts";

useVfsServer();

it("a folder journalled at a kill -9 and a folder of its name made elsewhere: both show after the restart, with their notes", async () => {
  let cut = true;
  const proxy = await startSlowProxy(t.url, () => (cut ? -1 : 0));
  const dir = scratchDir("txtfs-vfs-d-");
  const here = deviceOn(proxy.url, dir);
  cut = false;
  await here.start();
  const other = await mountVfs();
  cut = true; // this device is off the network from now on: its folder stays in the journal
  await here.mkdir("/d1", 0o755);
  const fd = await here.create("/d1/a.md", 0o644);
  await here.write(fd, Buffer.from("made here\n"), 0);
  await here.release(fd);
  await other.mkdir("/d1", 0o755);
  await writeFile(other, "/d1/b.md", "made there\n");

  // kill -9: a new Vfs on the cache dir as it is now, the network back.
  const copy = scratchDir("txtfs-vfs-d2-");
  cpSync(dir, copy, { recursive: true });
  const again = deviceOn(t.url, copy);
  await again.start();
  expect(await again.drain()).toBe(0);

  const { folders } = (await u.api.get("/api/me/files")).body as { folders: { id: string; name: string }[] };
  expect(folders.filter((f) => f.name === "d1")).toHaveLength(2);
  const shown = (vfs: typeof again) => vfs.readdir("/").filter((n) => n.startsWith("d1"));
  await until(() => shown(other).length === 2, "the other device to show both folders");
  expect(shown(again)).toHaveLength(2);
  const notes = (
    await Promise.all(
      shown(again).map(async (d) =>
        Promise.all(again.readdir(`/${d}`).map((n) => readAll(again, `/${d}/${n}`))),
      ),
    )
  ).flat();
  expect(notes.sort()).toEqual(["made here\n", "made there\n"]);
  await proxy.close();
});

it("the folder journalled at a kill -9 removed before it went: the folder of its name made elsewhere shows again", async () => {
  let cut = true;
  const proxy = await startSlowProxy(t.url, () => (cut ? -1 : 0));
  const dir = scratchDir("txtfs-vfs-d-");
  const here = deviceOn(proxy.url, dir);
  cut = false;
  await here.start();
  const other = await mountVfs();
  cut = true;
  await here.mkdir("/d1", 0o755);
  await other.mkdir("/d1", 0o755);
  await writeFile(other, "/d1/b.md", "made there\n");

  const copy = scratchDir("txtfs-vfs-d2-");
  cpSync(dir, copy, { recursive: true });
  const again = deviceOn(proxy.url, copy);
  cut = false;
  await again.start(); // the listing, then off the network again: the folder stays journalled
  cut = true;
  expect(await again.drain()).toBe(1);
  expect(again.readdir("/d1")).toEqual([]); // ours, over the listed one
  await again.rmdir("/d1");
  expect(again.readdir("/")).toContain("d1");
  expect(again.readdir("/d1")).toEqual(["b.md"]);
  cut = false;
  expect(await readAll(again, "/d1/b.md")).toBe("made there\n");
  await proxy.close();
});

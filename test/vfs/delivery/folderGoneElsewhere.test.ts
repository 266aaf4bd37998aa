// A note made here in a folder another device removed meanwhile (it was empty there), before this
// mount heard of the removal: the service moves what a removed folder held up a level, and so does
// the save — the note is made in the folder above, never refused and kept aside as `n.md.unsent`
// (its bytes then on this device only, the program told its save succeeded). Found by the
// multi-device simulation (seed 1 of a CI run, 2 replays in 8); here the device's feed is held back.
import { expect, it } from "vitest";
import { TxtfsClient } from "../../../src/client/api.ts";
import { startSlowProxy } from "../../helpers/slowProxy.ts";
import { mountVfs, readAll, t, u, until, useVfsServer, writeFile } from "../fixture.ts";

useVfsServer();

it("a note saved into a folder removed elsewhere is made a level up, as the service moved the rest", async () => {
  let holdFeed = false;
  const proxy = await startSlowProxy(t.url, (method, path) =>
    holdFeed && method === "GET" && path === "/api/v1/changes" ? 4000 : 0,
  );
  const here = await mountVfs({
    client: new TxtfsClient({ url: proxy.url, key: u.key, source: "mount", timeoutMs: 20_000 }),
  });
  const other = await mountVfs();
  await here.mkdir("/top", 0o755);
  await here.mkdir("/top/d", 0o755);
  await here.drain();
  await until(() => other.readdir("/top").includes("d"), "the other device to show top/d");
  holdFeed = true; // this device hears of nothing from now on, for a while
  await other.rmdir("/top/d");
  expect(await other.drain()).toBe(0);
  await writeFile(here, "/top/d/n.md", "saved here\n");
  expect(await here.drain()).toBe(0);
  expect(here.refused).toEqual([]);

  const { files } = (await u.api.get("/api/me/files")).body as { files: { id: string; name: string }[] };
  const made = files.filter((f) => f.name === "n.md");
  expect(made).toHaveLength(1);
  expect((await u.api.get(`/api/v1/files/${made[0]!.id}`)).body.content).toBe("saved here\n");
  expect(await readAll(here, "/top/n.md")).toBe("saved here\n");
  holdFeed = false;
  await until(() => other.readdir("/top").includes("n.md"), "the other device to show top/n.md");
  expect(await readAll(other, "/top/n.md")).toBe("saved here\n");
  await proxy.close();
});

// The simulation's seed 1 again (1 run in 5 on a loaded machine): the folder's delete came by the
// feed while the create was on its way, so the note had moved up a level when the create's answer
// (404: no such folder) came. The folder the note is in now is not the one that is gone: removing
// it here moved the whole shared folder's content to the top of the mount on that device only.
it("a create refused for a folder removed meanwhile removes that folder only, never the one the note moved up to", async () => {
  const client = new TxtfsClient({ url: t.url, key: u.key, source: "mount", timeoutMs: 5000 });
  let feedOpen!: () => void;
  let feedGate: Promise<void> | undefined;
  const changes = client.changes.bind(client);
  client.changes = async (...args: Parameters<typeof changes>) => {
    const page = await changes(...args);
    if (!feedGate) return page;
    await feedGate;
    return changes(...args);
  };
  const here = await mountVfs({ client });
  const create = client.createFile.bind(client);
  client.createFile = async (...args: Parameters<typeof create>) => {
    const answer = await create(...args).catch((e: Error) => e);
    if (answer instanceof Error && feedGate) {
      // The feed's delete of the folder is applied before this answer is.
      feedOpen();
      await until(() => !here.readdir("/top").includes("d"), "the feed to remove top/d here");
    }
    if (answer instanceof Error) throw answer;
    return answer;
  };
  const other = await mountVfs();
  await here.mkdir("/top", 0o755);
  await here.mkdir("/top/d", 0o755);
  await writeFile(here, "/top/kept.md", "stays in top\n");
  await until(
    () => other.readdir("/").includes("top") && other.readdir("/top").includes("d"),
    "the other device to show top/d",
  );
  feedGate = new Promise<void>((r) => (feedOpen = r));
  await other.rmdir("/top/d");
  expect(await other.drain()).toBe(0);
  await writeFile(here, "/top/d/n.md", "saved here\n");
  expect(await here.drain()).toBe(0);
  expect(here.refused).toEqual([]);
  expect([...here.readdir("/")]).toEqual(["top"]);
  expect([...here.readdir("/top")].sort()).toEqual(["kept.md", "n.md"]);
  const { files } = (await u.api.get("/api/me/files")).body as {
    files: { name: string; folderId: string }[];
  };
  const top = (await here.getxattr("/top", "user.txtfs.id"))?.toString();
  expect(files.map((f) => [f.name, f.folderId]).sort()).toEqual([
    ["kept.md", top],
    ["n.md", top],
  ]);
});

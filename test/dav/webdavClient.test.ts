// The `webdav` npm client (what Node and browser apps use) against a real `txtfs dav`: it writes,
// lists, stats, copies, moves, locks and deletes; every result checked through the service's API.

import { afterAll, beforeAll, expect, it } from "vitest";
import { createClient } from "webdav";
import { type RunningDav, startDav } from "../helpers/dav.ts";
import {
  contentAt,
  findByPath,
  type MountDirs,
  makeMountDirs,
  noteAt,
  removeMountDirs,
} from "../helpers/mount.ts";

let dirs: MountDirs;
let dav: RunningDav;
beforeAll(async () => {
  dirs = makeMountDirs("txtfs-dav-npm-");
  dav = await startDav(dirs);
});
afterAll(async () => {
  await dav?.stop();
  if (dirs) await removeMountDirs(dirs);
});

it("writes, lists, stats, copies, moves, locks and deletes", async () => {
  const client = createClient(dav.url, { username: "txtfs", password: dav.key });
  await client.createDirectory("/inbox");
  await client.putFileContents("/inbox/idea.md", "an idea\n");
  await client.putFileContents("/inbox/photo.jpg", Buffer.from([0xff, 0xd8, 0xff, 0, 1]));
  const listing = (await client.getDirectoryContents("/inbox")) as {
    basename: string;
    type: string;
    size: number;
  }[];
  expect(listing.map((e) => `${e.basename} ${e.type} ${e.size}`).sort()).toEqual([
    "idea.md file 8",
    "photo.jpg file 5",
  ]);
  const stat = (await client.stat("/inbox/idea.md")) as { etag: string | null; mime?: string };
  expect(stat.etag).toBeTruthy();
  expect(await client.getFileContents("/inbox/idea.md", { format: "text" })).toBe("an idea\n");
  await expect.poll(() => contentAt(dav.api, "inbox/idea.md"), { timeout: 15_000 }).toBe("an idea\n");
  const id = (await noteAt(dav.api, "inbox/idea.md")).id;

  await client.copyFile("/inbox/idea.md", "/inbox/copy.md");
  await client.moveFile("/inbox/idea.md", "/idea.md");
  const lock = await client.lock("/idea.md");
  await client.putFileContents("/idea.md", "a better idea\n", { headers: { If: `(<${lock.token}>)` } });
  await client.unlock("/idea.md", lock.token);
  await client.deleteFile("/inbox/photo.jpg");

  await expect.poll(() => contentAt(dav.api, "idea.md"), { timeout: 15_000 }).toBe("a better idea\n");
  expect((await noteAt(dav.api, "idea.md")).id).toBe(id); // moved and rewritten, still the same note
  expect(await contentAt(dav.api, "inbox/copy.md")).toBe("an idea\n");
  expect(await findByPath(dav.api, "inbox/idea.md")).toBeUndefined();
  expect(await client.exists("/inbox/photo.jpg")).toBe(false);
});

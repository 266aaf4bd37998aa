// A PUT that `txtfs dav` answered is never lost: with the service down the save waits in the
// journal; a kill -9 of `txtfs dav` right after the answer, then a restart once the service is
// back, and the bytes are on the service.
import { afterEach, expect, it } from "vitest";
import { type ServeProcess, spawnServeWithKey } from "../helpers/cli.ts";
import { type RunningDav, startDav } from "../helpers/dav.ts";
import { contentAt, type MountDirs, makeMountDirs, removeMountDirs } from "../helpers/mount.ts";
import { Api } from "../helpers/server.ts";

const running: (ServeProcess | RunningDav)[] = [];
let dirs: MountDirs | undefined;
afterEach(async () => {
  for (const p of running.splice(0).reverse()) await p.stop();
  if (dirs) await removeMountDirs(dirs);
});

it("delivers a PUT answered 201 after a kill -9 and a restart", { timeout: 90_000 }, async () => {
  dirs = makeMountDirs("txtfs-dav-kill-");
  const first = await spawnServeWithKey(dirs.data);
  running.push(first);
  const port = new URL(first.url).port;
  const service = { url: first.url, key: first.key };
  const dav = await startDav(dirs, { service });
  running.push(dav);
  // The service goes away: the save can only be in the journal when PUT answers.
  await first.stop();
  const text = "written while the service was down\n";
  const put = await dav.dav("PUT", "/kept.md", { body: text });
  expect(put.status).toBe(201);
  await dav.kill();

  const again = await spawnServeWithKey(dirs.data, port);
  running.push(again);
  const api = new Api(service.url, service.key);
  expect(await contentAt(api, "kept.md")).toBeUndefined(); // not delivered before the kill
  const restarted = await startDav(dirs, { service });
  running.push(restarted);
  await expect.poll(() => contentAt(api, "kept.md"), { timeout: 30_000 }).toBe(text);
  expect((await restarted.dav("GET", "/kept.md")).text).toBe(text);
});

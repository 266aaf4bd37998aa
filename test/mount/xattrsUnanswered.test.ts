// A metadata write through a real mount whose link to the service is black-holed (connections
// accepted, nothing ever answered) while the note's create is on its way: `setfattr` is told
// "Input/output error" after a read deadline (10 s) instead of hanging for the write's minute,
// the tag is not set, and the note still goes once the link is back.
import { expect, it } from "vitest";
import { spawnServeWithKey } from "../helpers/cli.ts";
import { startFaultProxy } from "../helpers/faultProxy.ts";
import {
  contentAt,
  makeMountDirs,
  noteAt,
  removeMountDirs,
  sh,
  startMount,
  undoAfterEach,
} from "../helpers/mount.ts";
import { Api } from "../helpers/server.ts";

const later = undoAfterEach();

/** Waits until `check` holds, polling (the link's recovery and a delivery take their time). */
async function until(check: () => Promise<boolean>, what: string, ms = 30_000) {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

it("setfattr on a note whose create is black-holed fails with EIO, and the note arrives once the link is back", async () => {
  const dirs = makeMountDirs();
  later(() => removeMountDirs(dirs));
  const s = await spawnServeWithKey(`${dirs.base}/service`, "0");
  later(() => s.stop());
  const proxy = await startFaultProxy(s.url, { random: () => 0 });
  later(() => proxy.close());
  const m = await startMount(dirs, { service: { url: proxy.url, key: s.key } });
  later(() => m.stop());
  const api = new Api(s.url, s.key);

  proxy.set({ paused: true });
  const r = await sh("echo note > n.md && setfattr -n user.txtfs.tags -v a n.md", {
    cwd: m.mnt,
    timeoutMs: 45_000,
  });
  expect(r.stderr).toMatch(/Input\/output error/);
  expect(r.code).not.toBe(0);
  expect(await contentAt(api, "n.md")).toBeUndefined(); // nothing went through meanwhile

  proxy.set({ paused: false });
  await until(async () => (await contentAt(api, "n.md")) === "note\n", "the note on the service");
  expect((await noteAt(api, "n.md")).tags).toEqual([]); // the tag the user was told failed is not set
  const again = await sh(
    "setfattr -n user.txtfs.tags -v a n.md && getfattr --only-values -n user.txtfs.tags n.md",
    {
      cwd: m.mnt,
    },
  );
  expect(again.stderr).toBe("");
  expect(again.stdout).toBe("a");
  expect((await noteAt(api, "n.md")).tags).toEqual(["a"]);
}, 120_000);

// Saves that wait for the service are never invisible: `txtfs status` shows them the moment the
// save returns, `txtfs unmount` says how many it leaves behind and where (and exits 1),
// `txtfs status` and `txtfs sync` still account for them once nothing is mounted (the journal on
// disk, found through the cache dirs mounts recorded, or in the default cache root), and the next
// mount of that service delivers them. Real `txtfs serve`, real mounts, the real CLI.
import { rmSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runTxtfs, spawnServeWithKey } from "../helpers/cli.ts";
import {
  contentAt,
  isMounted,
  type MountDirs,
  type MountOptions,
  makeMountDirs,
  type RunningMount,
  removeMountDirs,
  sh,
  startMount,
  txtfsEnv,
  undoAfterEach,
} from "../helpers/mount.ts";
import { Api } from "../helpers/server.ts";

const later = undoAfterEach();

async function service(data: string, port = "0") {
  const s = await spawnServeWithKey(data, port);
  later(() => s.stop());
  return s;
}

async function mount(dirs: MountDirs, opts: MountOptions): Promise<RunningMount> {
  const m = await startMount(dirs, opts);
  later(() => m.stop());
  return m;
}

const literal = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

describe("saves waiting for the service", () => {
  it("status counts them as soon as they return; unmount says how many wait and where, exit 1; status and sync still see them; the next mount sends them", async () => {
    const dirs = makeMountDirs("txtfs-waiting-");
    later(() => removeMountDirs(dirs));
    const data = `${dirs.base}/service`;
    const first = await service(data);
    const port = new URL(first.url).port;
    // The mount's own --cache-dir (dirs.cache); the CLI's default cache root is elsewhere, so only
    // what the mount recorded in the config dir can lead status and sync to it.
    const env = { ...txtfsEnv(dirs), TXTFS_CACHE: join(dirs.base, "default-cache") };
    const m = await mount(dirs, { service: { url: first.url, key: first.key } });
    expect((await sh("echo before > a.md", { cwd: m.mnt })).code).toBe(0);
    expect((await runTxtfs(["sync", m.mnt], env)).code).toBe(0);

    expect(await first.stop()).toBe(0);
    const saved = await sh("for i in 1 2 3; do echo offline $i > n$i.md; done", { cwd: m.mnt });
    expect(saved.code, saved.stderr).toBe(0);
    // No lag: the three saves returned, status says 3 (its record is only rewritten every 2 s).
    const status = await runTxtfs(["status"], env);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/pending uploads 3,/);

    const un = await runTxtfs(["unmount", m.mnt], env);
    expect(un.code, un.stdout + un.stderr).toBe(1);
    expect(un.stdout).toBe("");
    expect(un.stderr).toMatch(
      new RegExp(
        `^txtfs: ${literal(m.mnt)} is unmounted, but 3 saves for ${literal(first.url)} wait in ${literal(dirs.cache)}; they are sent when it is mounted again \\(txtfs status lists them\\)\n$`,
      ),
    );
    expect(await m.exited).toBe(0);
    expect(isMounted(m.mnt)).toBe(false);
    // Asked again, with nothing mounted there: the same answer, not "not a txtfs mount".
    const twice = await runTxtfs(["unmount", m.mnt], env);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toBe(un.stderr);

    const after = await runTxtfs(["status"], env);
    expect(after.code, after.stderr).toBe(0);
    expect(after.stdout).toContain(
      `${m.mnt} (not mounted)  <- ${first.url}\n  3 saves wait in ${dirs.cache}; mount it again to send them\n`,
    );
    const json = JSON.parse((await runTxtfs(["status", "--json"], env)).stdout);
    expect(json).toEqual([
      expect.objectContaining({ mounted: false, mountpoint: m.mnt, cacheDir: dirs.cache, waitingSaves: 3 }),
    ]);
    const waitingLine = `3 saves for ${first.url} wait in ${dirs.cache}; mount ${m.mnt} again to send them`;
    for (const args of [["sync"], ["sync", m.mnt]]) {
      const sync = await runTxtfs(args, env);
      expect(sync.code, `${args.join(" ")}: ${sync.stdout}${sync.stderr}`).toBe(1);
      expect(sync.stdout).toBe(`${m.mnt}: ${waitingLine}\n`);
    }

    // Nothing was lost or sent meanwhile; the service returns and the next mount delivers them.
    const second = await service(data, port);
    const api = new Api(second.url, first.key);
    expect(await contentAt(api, "n1.md")).toBeUndefined();
    const again = await mount(dirs, { service: { url: second.url, key: first.key } });
    const sync = await runTxtfs(["sync", again.mnt], env);
    expect(sync.code, sync.stdout + sync.stderr).toBe(0);
    expect(sync.stdout).toBe(`${again.mnt}: every save is on the service\n`);
    for (const i of [1, 2, 3]) expect(await contentAt(api, `n${i}.md`)).toBe(`offline ${i}\n`);
    expect((await runTxtfs(["status"], env)).stdout).not.toMatch(/not mounted|wait in/);
    const un2 = await runTxtfs(["unmount", again.mnt], env);
    expect(un2.code, un2.stderr).toBe(0);
    expect(un2.stderr).toBe("");
    expect((await runTxtfs(["status"], env)).stdout).toBe("no txtfs mounts\n");
  }, 120_000);

  it("a journal in the default cache root is found without any record; unmount --wait N keeps trying until the service returns", async () => {
    const dirs = makeMountDirs("txtfs-waiting-");
    later(() => removeMountDirs(dirs));
    const data = `${dirs.base}/service`;
    const first = await service(data);
    const port = new URL(first.url).port;
    const env = txtfsEnv(dirs);
    let m = await mount(dirs, { service: { url: first.url, key: first.key }, defaultCacheDir: true });
    expect(await first.stop()).toBe(0);
    expect((await sh("echo one > w1.md && echo two > w2.md", { cwd: m.mnt })).code).toBe(0);
    const un = await runTxtfs(["unmount", m.mnt], env);
    expect(un.code).toBe(1);
    const cache = new RegExp(
      `2 saves for ${literal(first.url)} wait in (${literal(dirs.cache)}/[0-9a-f]{16});`,
    ).exec(un.stderr)?.[1];
    expect(cache, un.stderr).toBeDefined();
    // As an older txtfs left it: no record of the cache dir in the config dir.
    rmSync(join(dirs.config, "caches"), { recursive: true, force: true });
    const status = await runTxtfs(["status"], env);
    expect(status.stdout).toContain(
      `${m.mnt} (not mounted)\n  2 saves wait in ${cache}; mount it again to send them\n`,
    );
    const sync = await runTxtfs(["sync"], env);
    expect(sync.code).toBe(1);
    expect(sync.stdout).toBe(`${m.mnt}: 2 saves wait in ${cache}; mount ${m.mnt} again to send them\n`);

    // Mounted again (the service up), then down again with one more save: `unmount --wait 60`
    // delivers everything once it is back, unmounts and exits 0.
    let second = await service(data, port);
    m = await mount(dirs, { service: { url: second.url, key: first.key }, defaultCacheDir: true });
    expect((await runTxtfs(["sync", m.mnt, "--timeout", "30"], env)).code).toBe(0);
    expect(await second.stop()).toBe(0);
    expect((await sh("echo three > w3.md", { cwd: m.mnt })).code).toBe(0);
    // The service comes back while the unmount is waiting for it (starting one takes a while).
    const waiting = runTxtfs(["unmount", m.mnt, "--wait", "60"], env);
    second = await service(data, port);
    const done = await waiting;
    expect(done.code, done.stdout + done.stderr).toBe(0);
    expect(done.stderr).toBe("");
    expect(await m.exited).toBe(0);
    const api = new Api(second.url, first.key);
    expect(await contentAt(api, "w1.md")).toBe("one\n");
    expect(await contentAt(api, "w3.md")).toBe("three\n");
    expect((await runTxtfs(["status"], env)).stdout).toBe("no txtfs mounts\n");
    expect((await runTxtfs(["unmount", m.mnt, "--wait", "soon"], env)).code).toBe(2);
  }, 120_000);
});

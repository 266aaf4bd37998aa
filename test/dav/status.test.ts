// `txtfs dav` is known to `txtfs status`, `sync` and `unmount` as a mount is, by the URL it
// serves: its record in the registry (its own TXTFS_CONFIG here), its control socket in the cache
// dir. Real processes: `txtfs dav`, `txtfs serve`, and each CLI command.
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { runTxtfs, type ServeProcess, spawnServeWithKey } from "../helpers/cli.ts";
import { type RunningDav, startDav } from "../helpers/dav.ts";
import { contentAt, type MountDirs, makeMountDirs, removeMountDirs, txtfsEnv } from "../helpers/mount.ts";
import { Api } from "../helpers/server.ts";

const running: (ServeProcess | RunningDav)[] = [];
let dirs: MountDirs | undefined;
afterEach(async () => {
  for (const p of running.splice(0).reverse()) await p.stop();
  if (dirs) await removeMountDirs(dirs);
  dirs = undefined;
});

/** The records in the test's own mount registry. */
const records = (d: MountDirs) => {
  const dir = join(d.config, "mounts");
  return existsSync(dir) ? readdirSync(dir).filter((n) => n.endsWith(".json")) : [];
};

it("status, sync and status --json show a txtfs dav by its URL; unmount refuses it; SIGTERM removes its record", {
  timeout: 90_000,
}, async () => {
  const d = makeMountDirs("txtfs-dav-status-");
  dirs = d;
  const env = txtfsEnv(d);
  const dav = await startDav(d);
  running.push(dav);
  expect(dav.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
  expect((await dav.dav("PUT", "/hello.md", { body: "# Hello\n" })).status).toBe(201);
  expect((await dav.dav("PUT", "/.DS_Store", { body: "finder" })).status).toBe(201);

  // Every save on the service: sync says so by the server's name, and exits 0.
  const sync = await runTxtfs(["sync"], env);
  expect(sync).toMatchObject({ code: 0, stderr: "" });
  expect(sync.stdout).toBe(`WebDAV ${dav.url}: every save is on the service\n`);
  // Named by its URL, with or without the last "/".
  const named = await runTxtfs(["sync", dav.url.replace(/\/$/, "")], env);
  expect(named).toMatchObject({ code: 0, stdout: `WebDAV ${dav.url}: every save is on the service\n` });
  expect(await contentAt(dav.api, "hello.md")).toBe("# Hello\n");

  const status = await runTxtfs(["status"], env);
  expect(status.code).toBe(0);
  const lines = status.stdout.split("\n");
  expect(lines[0]).toMatch(
    new RegExp(
      `^WebDAV ${dav.url.replace(/[./]/g, "\\$&")}  <- ${dav.serviceUrl}  \\(pid ${dav.child.pid}, since `,
    ),
  );
  expect(lines[1]).toBe("  notes 1, folders 0, pending uploads 0, local-only files 1, conflicts 0");
  expect(lines[2]).toMatch(/^ {2}cache \d+\.\d MiB in \d+ notes, requests \d+, feed cursor \d+$/);
  expect(status.stdout).toContain("  local-only: /.DS_Store (");

  const json = JSON.parse((await runTxtfs(["status", "--json"], env)).stdout);
  expect(json).toHaveLength(1);
  expect(json[0]).toMatchObject({
    mounted: true,
    kind: "dav",
    pid: dav.child.pid,
    mountpoint: dav.url,
    url: dav.serviceUrl,
    cacheDir: d.cache,
    live: { kind: "dav", mountpoint: dav.url, stats: { notes: 1, dirty: 0, localFiles: 1 } },
  });

  // Not a mount: unmount refuses it in one line (exit 2), signals nothing, runs no fusermount.
  for (const arg of [dav.url, dav.url.replace(/\/$/, "")]) {
    const unmount = await runTxtfs(["unmount", arg], env);
    expect(unmount.code).toBe(2);
    expect(unmount.stdout).toBe("");
    expect(unmount.stderr).toBe(
      `txtfs: ${dav.url} is served by txtfs dav (pid ${dav.child.pid}), not mounted: stop that process (Ctrl-C, or kill ${dav.child.pid}) and it delivers its saves first\n`,
    );
  }
  expect(dav.child.exitCode).toBeNull();
  expect((await dav.dav("GET", "/hello.md")).text).toBe("# Hello\n");
  expect(records(d)).toEqual([`${dav.child.pid}.json`]);
  // A URL no dav server serves: the same kind of refusal, never a path under the working dir.
  const none = await runTxtfs(["unmount", "http://127.0.0.1:1/"], env);
  expect(none).toMatchObject({
    code: 2,
    stderr: "txtfs: http://127.0.0.1:1/ is not a running txtfs dav server (txtfs status lists them)\n",
  });
  expect((await runTxtfs(["sync", "http://127.0.0.1:1/"], env)).stderr).toBe(
    "txtfs: http://127.0.0.1:1/ is not a txtfs mount or txtfs dav server\n",
  );

  // A clean stop removes the record: status sees nothing any more.
  expect(await dav.stop()).toBe(0);
  expect(records(d)).toEqual([]);
  expect(existsSync(join(d.cache, "control.sock"))).toBe(false);
  expect(await runTxtfs(["status"], env)).toMatchObject({ code: 0, stdout: "no txtfs mounts\n" });
});

it("a save waiting for the service: status counts it, sync names the dav server and exits 1, then delivers it", {
  timeout: 90_000,
}, async () => {
  const d = makeMountDirs("txtfs-dav-status-wait-");
  dirs = d;
  const env = txtfsEnv(d);
  const first = await spawnServeWithKey(d.data);
  running.push(first);
  const port = new URL(first.url).port;
  const service = { url: first.url, key: first.key };
  const dav = await startDav(d, { service });
  running.push(dav);
  await first.stop(); // the service goes away: the save can only wait in the journal
  expect((await dav.dav("PUT", "/kept.md", { body: "kept\n" })).status).toBe(201);

  const status = await runTxtfs(["status"], env);
  expect(status.stdout.split("\n")[0]).toContain(`WebDAV ${dav.url}  <- ${service.url}`);
  expect(status.stdout).toContain(", pending uploads 1, ");
  const json = JSON.parse((await runTxtfs(["status", "--json"], env)).stdout);
  expect(json[0]).toMatchObject({ kind: "dav", mountpoint: dav.url, live: { saves: { pending: 1 } } });

  const waiting = await runTxtfs(["sync", dav.url], env);
  expect(waiting.code).toBe(1);
  expect(waiting.stdout).toMatch(new RegExp(`^WebDAV ${dav.url.replace(/[./]/g, "\\$&")}: 1 save`));

  const again = await spawnServeWithKey(d.data, port);
  running.push(again);
  const delivered = await runTxtfs(["sync", dav.url, "--timeout", "30"], env);
  expect(delivered).toMatchObject({ code: 0, stdout: `WebDAV ${dav.url}: every save is on the service\n` });
  expect(await contentAt(new Api(service.url, service.key), "kept.md")).toBe("kept\n");
  expect(await dav.stop()).toBe(0);
  expect(records(d)).toEqual([]);
});

it("a txtfs dav killed with a save waiting: status, sync and unmount name its cache dir by its URL and say to start it again", {
  timeout: 90_000,
}, async () => {
  const d = makeMountDirs("txtfs-dav-status-stopped-");
  dirs = d;
  // The CLI's default cache root is elsewhere: only what the dav server recorded leads to its cache dir.
  const env = { ...txtfsEnv(d), TXTFS_CACHE: join(d.base, "default-cache") };
  const first = await spawnServeWithKey(d.data);
  running.push(first);
  const port = new URL(first.url).port;
  const service = { url: first.url, key: first.key };
  const dav = await startDav(d, { service });
  running.push(dav);
  await first.stop(); // the service goes away: the save can only wait in the journal
  expect((await dav.dav("PUT", "/kept.md", { body: "kept\n" })).status).toBe(201);
  await dav.kill();

  const hint = `start txtfs dav again with --cache-dir ${d.cache} to send it`;
  const status = await runTxtfs(["status"], env);
  expect(status).toMatchObject({
    code: 0,
    stdout: `WebDAV ${dav.url} (not running)  <- ${service.url}\n  1 save waits in ${d.cache}; ${hint}\n`,
  });
  expect(records(d)).toEqual([]); // its record was dropped (its pid is gone): the cache dir's own record names it
  const json = JSON.parse((await runTxtfs(["status", "--json"], env)).stdout);
  expect(json).toEqual([
    {
      mounted: false,
      kind: "dav",
      mountpoint: dav.url,
      url: service.url,
      cacheDir: d.cache,
      waitingSaves: 1,
      unsent: [],
      refusals: [],
    },
  ]);
  const waitingLine = `WebDAV ${dav.url}: 1 save for ${service.url} waits in ${d.cache}; ${hint}\n`;
  for (const args of [["sync"], ["sync", dav.url], ["sync", dav.url.replace(/\/$/, "")]])
    expect(await runTxtfs(args, env)).toMatchObject({ code: 1, stdout: waitingLine, stderr: "" });
  for (const arg of [dav.url, dav.url.replace(/\/$/, "")])
    expect(await runTxtfs(["unmount", arg], env)).toMatchObject({
      code: 1,
      stdout: "",
      stderr: `txtfs: WebDAV ${dav.url} is not running, but 1 save for ${service.url} waits in ${d.cache}; ${hint} (txtfs status lists them)\n`,
    });

  // Started again as the hint says, with the service back: the save goes, nothing is left to name.
  const again = await spawnServeWithKey(d.data, port);
  running.push(again);
  const restarted = await startDav(d, { service });
  running.push(restarted);
  const delivered = await runTxtfs(["sync", restarted.url, "--timeout", "30"], env);
  expect(delivered).toMatchObject({
    code: 0,
    stdout: `WebDAV ${restarted.url}: every save is on the service\n`,
  });
  expect(await contentAt(new Api(service.url, service.key), "kept.md")).toBe("kept\n");
  expect(await restarted.stop()).toBe(0);
  expect(await runTxtfs(["status"], env)).toMatchObject({ code: 0, stdout: "no txtfs mounts\n" });
});

it("a txtfs dav stopped (SIGTERM) with a save waiting says where it waits, and status names its cache dir by its URL", {
  timeout: 90_000,
}, async () => {
  const d = makeMountDirs("txtfs-dav-status-term-");
  dirs = d;
  const env = { ...txtfsEnv(d), TXTFS_CACHE: join(d.base, "default-cache") };
  const first = await spawnServeWithKey(d.data);
  running.push(first);
  const service = { url: first.url, key: first.key };
  const dav = await startDav(d, { service });
  running.push(dav);
  await first.stop();
  expect((await dav.dav("PUT", "/kept.md", { body: "kept\n" })).status).toBe(201);
  expect(await dav.stop()).toBe(0);
  expect(dav.stderr()).toContain(
    `txtfs: 1 save for ${service.url} waits in ${d.cache}; it is sent when txtfs dav is started again with --cache-dir ${d.cache} (txtfs status lists them)\n`,
  );
  expect(records(d)).toEqual([]);
  const status = await runTxtfs(["status"], env);
  expect(status.stdout).toBe(
    `WebDAV ${dav.url} (not running)  <- ${service.url}\n  1 save waits in ${d.cache}; start txtfs dav again with --cache-dir ${d.cache} to send it\n`,
  );
});

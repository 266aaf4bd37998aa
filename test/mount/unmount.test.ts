// `txtfs unmount DIR` of a mount whose daemon was killed -9: its FUSE connection is aborted first
// (a killed daemon can stay a zombie holding /dev/fuse, and every program on the mount would wait
// for good, even after a lazy unmount), then it is unmounted, and what its cache dir still holds is
// said. Only a connection that a record names as a gone txtfs daemon's is ever aborted. A daemon
// that runs is asked to stop, as before. Real `txtfs serve`, real mounts, the real CLI, each in a
// child process: the test process never touches a mount.
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isDeadOrDying } from "../../src/lib/processLiveness.ts";
import { BIN, runTxtfs, spawnServeWithKey } from "../helpers/cli.ts";
import {
  contentAt,
  isMounted,
  type MountDirs,
  makeMountDirs,
  q,
  type RunningMount,
  removeMountDirs,
  sh,
  startMount,
  txtfsEnv,
  undoAfterEach,
} from "../helpers/mount.ts";

const later = undoAfterEach();

const literal = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The records in the test's own mount registry. */
const records = (d: MountDirs) => {
  const dir = join(d.config, "mounts");
  return existsSync(dir) ? readdirSync(dir).filter((n) => n.endsWith(".json")) : [];
};

/** The device ("MAJOR:MINOR") of the mount on `dir`, from /proc/self/mountinfo (never touching it). */
const deviceOf = (dir: string) =>
  readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .map((l) => l.split(" "))
    .filter((f) => f[4] === dir)
    .at(-1)?.[2];

async function setup(prefix: string) {
  const dirs = makeMountDirs(prefix);
  later(() => removeMountDirs(dirs));
  const data = `${dirs.base}/service`;
  const service = await spawnServeWithKey(data);
  later(() => service.stop());
  // The CLI's default cache root is elsewhere: only what the mount recorded leads to its cache dir.
  const env = { ...txtfsEnv(dirs), TXTFS_CACHE: join(dirs.base, "default-cache") };
  return { dirs, data, service, env };
}

async function mount(dirs: MountDirs, service: { url: string; key: string }): Promise<RunningMount> {
  const m = await startMount(dirs, { service });
  later(() => m.stop());
  return m;
}

// What a killed daemon's thread blocked in a FUSE invalidation does (it keeps the process a
// zombie): /dev/fuse and the socket auto_unmount's fusermount3 watches stay open after the kill.
// Here a process of the test holds them (copies taken with pidfd_getfd), so the kill -9 itself is
// plain: the connection stays up with no one to answer, and fusermount3 never unmounts the mount.
const HOLD = `
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
pid = int(sys.argv[1])
fuse = sys.argv[2] == "fuse"
unix = set()
with open("/proc/net/unix") as f:
    for line in f.readlines()[1:]:
        unix.add(line.split()[6])
pidfd = os.pidfd_open(pid)
held = []
for name in os.listdir(f"/proc/{pid}/fd"):
    try:
        link = os.readlink(f"/proc/{pid}/fd/{name}")
    except OSError:
        continue
    if (fuse and link == "/dev/fuse") or (link.startswith("socket:[") and link[8:-1] in unix):
        fd = libc.syscall(438, pidfd, int(name), 0)
        if fd >= 0:
            held.append(link)
print("held", " ".join(sorted(set(held))), flush=True)
sys.stdin.read()
`;

/**
 * Starts the holder of `pid`'s FUSE descriptors; resolves once it holds them. Stopped after the
 * test. `sockets`: not /dev/fuse, so the kill ends the connection (ENOTCONN) but not the mount.
 */
async function holdFuse(pid: number, what: "fuse" | "sockets" = "fuse"): Promise<void> {
  const holder = spawn("python3", ["-c", HOLD, String(pid), what], { stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise((r) => holder.once("exit", r));
  later(async () => {
    holder.kill("SIGKILL");
    await exited;
  });
  const line = await new Promise<string>((resolve, reject) => {
    let out = "";
    holder.stdout!.on("data", (d) => {
      out += d;
      if (out.includes("\n")) resolve(out);
    });
    void exited.then(() => reject(new Error(`the holder exited: ${out}`)));
  });
  expect(line).toMatch(what === "fuse" ? /^held .*\/dev\/fuse/ : /^held socket:/);
}

/** The requests waiting on FUSE connection `n`, as fusectl counts them. */
const waiting = (n: string) => Number(readFileSync(`/sys/fs/fuse/connections/${n}/waiting`, "utf8"));

/**
 * kill -9 of the daemon, and nothing else (no abort, no unmount from here); resolves once it is
 * reaped: its files are closed by then (a dying process may still hold them), and nothing of it
 * runs. Its record must count it as gone from then on.
 */
async function kill9(m: RunningMount): Promise<void> {
  process.kill(m.pid, "SIGKILL");
  await m.exited;
  expect(isDeadOrDying(m.pid)).toBe(true);
}

describe("txtfs unmount", () => {
  it("a daemon killed -9: its FUSE connection is aborted, the mount goes, a stat of DIR answers, what waits is said; the next mount sends it", {
    timeout: 120_000,
  }, async () => {
    const { dirs, data, service, env } = await setup("txtfs-unmount-killed-");
    const m = await mount(dirs, { url: service.url, key: service.key });
    // The record names the mount's FUSE connection by its device, as mountinfo says.
    const device = deviceOf(m.mnt);
    expect(device).toMatch(/^0:\d+$/);
    expect(JSON.parse(readFileSync(join(dirs.config, "mounts", `${m.pid}.json`), "utf8")).device).toBe(
      device,
    );
    const connection = device!.split(":")[1]!;

    expect((await sh("echo sent > a.md", { cwd: m.mnt })).code).toBe(0);
    expect((await runTxtfs(["sync", m.mnt], env)).code).toBe(0);
    const port = new URL(service.url).port;
    expect(await service.stop()).toBe(0); // the next save can only wait in the journal
    const offline = await sh("echo waiting > b.md", { cwd: m.mnt });
    expect(offline.code, offline.stderr).toBe(0);

    // kill -9, and nothing else: no abort, no unmount from here.
    await holdFuse(m.pid);
    await kill9(m);
    expect(isMounted(m.mnt)).toBe(true);
    // A program that looks in the mount now waits: no daemon will ever answer.
    const blocked = sh(`ls ${q(m.mnt)}/never-looked-up.md`, { cwd: "/", timeoutMs: 60_000 });
    await expect.poll(() => waiting(connection), { timeout: 15_000, interval: 20 }).toBeGreaterThan(0);
    // status names it as a killed daemon's mount, with what waits in its cache dir (it answers at
    // once: it never looks at the mount); its record is kept for unmount.
    expect(await runTxtfs(["status"], env)).toMatchObject({
      code: 0,
      stdout:
        `${m.mnt} (its daemon, pid ${m.pid}, is gone: programs on it get no answer; txtfs unmount ${m.mnt} ends it)  <- ${service.url}\n` +
        `  1 save waits in ${dirs.cache}; mount it again to send them\n`,
    });
    const json = JSON.parse((await runTxtfs(["status", "--json"], env)).stdout);
    expect(json).toMatchObject([
      { mounted: false, daemonGone: { pid: m.pid }, mountpoint: m.mnt, waitingSaves: 1 },
    ]);
    expect(records(dirs)).toEqual([`${m.pid}.json`]);

    const un = await runTxtfs(["unmount", m.mnt], env);
    expect(un.code, un.stdout + un.stderr).toBe(1);
    expect(un.stdout).toBe("");
    expect(un.stderr).toBe(
      `txtfs: the daemon of ${m.mnt} (pid ${m.pid}) is gone: its FUSE connection ${connection} is aborted\n` +
        `txtfs: ${m.mnt} is unmounted, but 1 save for ${service.url} waits in ${dirs.cache}; it is sent when it is mounted again (txtfs status lists them)\n`,
    );
    expect(isMounted(m.mnt)).toBe(false);
    expect(records(dirs)).toEqual([]);
    // The waiting program got its answer (the connection's end), long before its own timeout.
    const ended = await blocked;
    expect(ended.code).not.toBe(0);
    expect(ended.stderr).toMatch(/Transport endpoint is not connected|Software caused connection abort/);
    // A program looking at DIR gets an answer at once: the empty directory under the mount.
    const stat = await sh(`stat -c %F ${q(m.mnt)} && ls -A ${q(m.mnt)} | wc -l`, {
      cwd: "/",
      timeoutMs: 10_000,
    });
    expect(stat).toMatchObject({ code: 0, stdout: "directory\n0\n" });
    // Asked again: nothing mounted, the same saves named, no abort.
    const twice = await runTxtfs(["unmount", m.mnt], env);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toMatch(new RegExp(`^txtfs: ${literal(m.mnt)} is unmounted, but 1 save for `));

    // The service back on its port, the same cache dir mounted again: both notes, the waiting one sent.
    const again = await spawnServeWithKey(data, port);
    later(() => again.stop());
    const m2 = await mount(dirs, { url: again.url, key: service.key });
    const cat = await sh("cat a.md b.md", { cwd: m2.mnt });
    expect(cat).toMatchObject({ code: 0, stdout: "sent\nwaiting\n" });
    expect((await runTxtfs(["sync", m2.mnt], env)).code).toBe(0);
    expect(await contentAt(m2.api, "b.md")).toBe("waiting\n");
    expect(await m2.stop()).toBe(0);
  });

  it("run from inside the dead mount (`txtfs unmount .`), with nothing waiting: exit 0", {
    timeout: 90_000,
  }, async () => {
    const { dirs, service, env } = await setup("txtfs-unmount-cwd-");
    const m = await mount(dirs, { url: service.url, key: service.key });
    expect((await sh("echo a > a.md", { cwd: m.mnt })).code).toBe(0);
    expect((await runTxtfs(["sync", m.mnt], env)).code).toBe(0);
    // A shell whose working directory is the mount, waiting for its cue to run the unmount there.
    const script = `read go; ${q(process.execPath)} ${q(BIN)} unmount .; echo "exit $?"`;
    const shell = spawn("bash", ["-c", script], {
      cwd: m.mnt,
      env: { ...env, PWD: m.mnt },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    shell.stdout!.on("data", (d) => {
      out += d;
    });
    shell.stderr!.on("data", (d) => {
      err += d;
    });
    const done = new Promise<number | null>((r) => shell.once("exit", r));
    later(async () => {
      shell.kill("SIGKILL");
      await done;
    });
    await holdFuse(m.pid);
    await kill9(m);
    shell.stdin!.end("go\n");
    expect(await done).toBe(0);
    expect(err).toMatch(
      new RegExp(
        `^txtfs: the daemon of ${literal(m.mnt)} \\(pid ${m.pid}\\) is gone: its FUSE connection \\d+ is aborted\n$`,
      ),
    );
    expect(out).toBe("exit 0\n");
    expect(isMounted(m.mnt)).toBe(false);
  });

  it("a killed daemon's connection ended but its mount left (Transport endpoint is not connected): unmounted, exit 0", {
    timeout: 90_000,
  }, async () => {
    const { dirs, service, env } = await setup("txtfs-unmount-enotconn-");
    const m = await mount(dirs, { url: service.url, key: service.key });
    expect((await sh("echo a > a.md", { cwd: m.mnt })).code).toBe(0);
    expect((await runTxtfs(["sync", m.mnt], env)).code).toBe(0);
    await holdFuse(m.pid, "sockets");
    await kill9(m);
    expect(isMounted(m.mnt)).toBe(true);
    const before = await sh(`stat ${q(m.mnt)}`, { cwd: "/", timeoutMs: 10_000 });
    expect(before.stderr).toContain("Transport endpoint is not connected");
    const un = await runTxtfs(["unmount", m.mnt], env);
    expect(un.code, un.stderr).toBe(0);
    expect(un.stdout).toBe("");
    expect(un.stderr).toMatch(
      new RegExp(
        `^txtfs: the daemon of ${literal(m.mnt)} \\(pid ${m.pid}\\) is gone: its FUSE connection \\d+ is aborted\n$`,
      ),
    );
    expect(isMounted(m.mnt)).toBe(false);
    expect(await sh(`stat -c %F ${q(m.mnt)}`, { cwd: "/", timeoutMs: 10_000 })).toMatchObject({
      code: 0,
      stdout: "directory\n",
    });
    expect(records(dirs)).toEqual([]);
  });

  it("txtfs mount on a killed daemon's mount that still waits aborts its connection, cleans it and mounts", {
    timeout: 90_000,
  }, async () => {
    const { dirs, service, env } = await setup("txtfs-unmount-remount-");
    const m = await mount(dirs, { url: service.url, key: service.key });
    const connection = deviceOf(m.mnt)!.split(":")[1]!;
    expect((await sh("echo a > a.md", { cwd: m.mnt })).code).toBe(0);
    expect((await runTxtfs(["sync", m.mnt], env)).code).toBe(0);
    await holdFuse(m.pid);
    await kill9(m);
    const blocked = sh(`ls ${q(m.mnt)}/never-looked-up.md`, { cwd: "/", timeoutMs: 60_000 });
    await expect.poll(() => waiting(connection), { timeout: 15_000, interval: 20 }).toBeGreaterThan(0);

    const m2 = await mount(dirs, { url: service.url, key: service.key });
    expect(m2.stderr()).toContain(
      `txtfs: the daemon of ${m.mnt} (pid ${m.pid}) is gone: its FUSE connection ${connection} is aborted\n`,
    );
    expect((await blocked).stderr).toMatch(
      /Transport endpoint is not connected|Software caused connection abort/,
    );
    expect(await sh("cat a.md", { cwd: m2.mnt })).toMatchObject({ code: 0, stdout: "a\n" });
    // The dead daemon's record goes once a running one mounts there (its device may be the same
    // number again): status names only the new mount.
    const status = await runTxtfs(["status"], env);
    expect(status.stdout).toMatch(new RegExp(`^${literal(m.mnt)}  <- .*\\(pid ${m2.pid}, `));
    expect(status.stdout).not.toContain("is gone");
    expect(records(dirs)).toEqual([`${m2.pid}.json`]);
    expect(await m2.stop()).toBe(0);
  });

  it("a daemon that runs is asked to stop: it delivers, unmounts and exits 0; nothing is aborted", {
    timeout: 90_000,
  }, async () => {
    const { dirs, service, env } = await setup("txtfs-unmount-alive-");
    const m = await mount(dirs, { url: service.url, key: service.key });
    expect((await sh("echo alive > a.md", { cwd: m.mnt })).code).toBe(0);
    const un = await runTxtfs(["unmount", m.mnt], env);
    expect(un).toMatchObject({ code: 0, stdout: "", stderr: "" });
    expect(await m.exited).toBe(0);
    expect(isMounted(m.mnt)).toBe(false);
    expect(records(dirs)).toEqual([]);
    expect(await contentAt(m.api, "a.md")).toBe("alive\n");
  });

  it("no record names the mount (another config dir): it is unmounted, never aborted, and its daemon delivers and exits 0", {
    timeout: 90_000,
  }, async () => {
    const { dirs, service, env } = await setup("txtfs-unmount-unknown-");
    const m = await mount(dirs, { url: service.url, key: service.key });
    expect((await sh("echo kept > a.md", { cwd: m.mnt })).code).toBe(0);
    const un = await runTxtfs(["unmount", m.mnt], { ...env, TXTFS_CONFIG: join(dirs.base, "other-config") });
    expect(un).toMatchObject({ code: 0, stdout: "", stderr: "" });
    // Unmounted from outside: the daemon sends what is pending and exits as at SIGTERM.
    expect(await m.exited).toBe(0);
    expect(isMounted(m.mnt)).toBe(false);
    expect(await contentAt(m.api, "a.md")).toBe("kept\n");
  });
});

// A real `txtfs mount --serve` daemon in a child process, over a throwaway directory outside /tmp
// (vim skips backups for /tmp/*). The test process never touches the mount itself: every filesystem
// action runs in a child process (`sh`), and results are checked through the API.

import { type ChildProcess, execFile, spawn } from "node:child_process";
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { basename, join } from "node:path";
import { afterEach } from "vitest";
import { requestSync } from "../../src/lib/mountControl.ts";
import { BIN, ROOT } from "./cli.ts";
import { Api } from "./server.ts";

export interface ShResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface MountDirs {
  /** The throwaway directory holding everything below. */
  base: string;
  mnt: string;
  data: string;
  cache: string;
  /** TXTFS_CONFIG of the daemon (its mount registry lives here). */
  config: string;
}

export interface MountOptions {
  /** Extra `txtfs mount` arguments, e.g. ["--read-only"]. */
  args?: string[];
  /** Let the daemon choose its cache dir (under TXTFS_CACHE = dirs.cache) instead of `--cache-dir`. */
  defaultCacheDir?: boolean;
  /** Mount this service instead of running one in-process (`--serve`); no key: the signed-in identity. */
  service?: { url: string; key?: string };
  /** More environment for the daemon (e.g. NOTIFY_SOCKET). */
  env?: NodeJS.ProcessEnv;
}

export interface RunningMount {
  dirs: MountDirs;
  mnt: string;
  api: Api;
  url: string;
  key: string;
  pid: number;
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<number | null>;
  /** SIGTERM, wait for the exit (SIGKILL after a grace period), clean a left-over mount. */
  stop(): Promise<number | null>;
}

/**
 * kill -9 of a mount's daemon, its FUSE connection then aborted, as the kernel does once a dead
 * daemon's /dev/fuse is closed. A thread of the daemon blocked writing an invalidation (on a
 * folder's lock that a program holds while it waits for the daemon) would keep that from ever
 * happening: the killed process stays a zombie and every request on the mount waits for good.
 */
export async function killDaemon(m: RunningMount): Promise<number | null> {
  m.child.kill("SIGKILL");
  const line = readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .find((l) => l.split(" ")[4] === m.mnt);
  const minor = line?.split(" ")[2]?.split(":")[1];
  if (minor)
    await sh(
      `mountpoint -q /sys/fs/fuse/connections || mount -t fusectl none /sys/fs/fuse/connections; echo 1 > /sys/fs/fuse/connections/${minor}/abort`,
      { cwd: "/" },
    );
  return m.exited;
}

/** Runs a bash script in a child process (cwd: the mountpoint unless given). Never rejects. */
export function sh(script: string, opts: { cwd?: string; timeoutMs?: number } = {}): Promise<ShResult> {
  return new Promise((resolve) => {
    execFile(
      "bash",
      ["-c", script],
      { cwd: opts.cwd, timeout: opts.timeoutMs ?? 15_000, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const code = err ? ((err as { code?: unknown }).code ?? 1) : 0;
        resolve({ code: typeof code === "number" ? code : 1, stdout, stderr });
      },
    );
  });
}

/** Whether `dir` is a mountpoint right now (from /proc/mounts: never touches the mount). */
export function isMounted(dir: string): boolean {
  const escaped = dir.replace(/ /g, "\\040");
  return readFileSync("/proc/mounts", "utf8")
    .split("\n")
    .some((line) => line.split(" ")[1] === escaped);
}

export function lazyUnmount(dir: string): Promise<ShResult> {
  return sh(`fusermount -uz '${dir}' 2>/dev/null || umount -l '${dir}'`, { cwd: "/" });
}

/** A fresh base directory under /var/tmp with empty mnt, data, cache and config folders. */
export function makeMountDirs(prefix = "txtfs-test-"): MountDirs {
  const base = mkdtempSync(join("/var/tmp", prefix));
  const dirs = {
    base,
    mnt: join(base, "mnt"),
    data: join(base, "data"),
    cache: join(base, "cache"),
    config: join(base, "config"),
  };
  for (const d of [dirs.mnt, dirs.data, dirs.cache, dirs.config]) mkdirSync(d);
  return dirs;
}

/** Unmounts if needed, then removes the base directory (never while it is still mounted). */
export async function removeMountDirs(dirs: MountDirs): Promise<void> {
  if (isMounted(dirs.mnt)) await lazyUnmount(dirs.mnt);
  if (isMounted(dirs.mnt)) return; // never recurse into a live mount
  rmSync(dirs.base, { recursive: true, force: true });
}

/** The environment of every txtfs child: its own config dir, so `status` sees only our mounts. */
export function txtfsEnv(dirs: MountDirs): NodeJS.ProcessEnv {
  return { ...process.env, TXTFS_CONFIG: dirs.config, TXTFS_CACHE: dirs.cache, TXTFS_DATA: dirs.data };
}

// TXTFS_TEST_DAEMON_PRELOAD=LIB: the mount daemons, and not the programs the tests run in the
// mount, start with LD_PRELOAD=LIB (scripts/sanitize: the ASan runtime its binding needs first).
function daemonPreload(): NodeJS.ProcessEnv {
  const lib = process.env.TXTFS_TEST_DAEMON_PRELOAD;
  return lib ? { LD_PRELOAD: lib } : {};
}

// TXTFS_TEST_MOUNT_START_S: longer for daemons slowed down on purpose (scripts/sanitize's ASan build).
const START_S = Number(process.env.TXTFS_TEST_MOUNT_START_S ?? 20);

/** Starts `txtfs mount MNT --serve` and resolves once it prints `mounted`. */
export function startMount(dirs: MountDirs, opts: MountOptions = {}): Promise<RunningMount> {
  const args = [
    BIN,
    "mount",
    dirs.mnt,
    ...(opts.service
      ? ["--url", opts.service.url, ...(opts.service.key ? ["--key", opts.service.key] : [])]
      : ["--serve", "--data", dirs.data]),
    ...(opts.defaultCacheDir ? [] : ["--cache-dir", dirs.cache]),
    "--poll-wait",
    "1",
    ...(opts.args ?? []),
  ];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...txtfsEnv(dirs), ...daemonPreload(), ...opts.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout!.on("data", (d) => {
    out += d;
  });
  child.stderr!.on("data", (d) => {
    err += d;
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  // TXTFS_TEST_MOUNT_LOGS=DIR keeps each daemon's output there (the base dir is removed after the tests).
  const logDir = process.env.TXTFS_TEST_MOUNT_LOGS;
  if (logDir) {
    void exited.then((code) => {
      mkdirSync(logDir, { recursive: true });
      appendFileSync(
        join(logDir, `${basename(dirs.base)}.log`),
        `--- pid ${child.pid} exit ${code}\n${out}\n${err}\n`,
      );
    });
  }
  const stop = async (): Promise<number | null> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      const killer = setTimeout(() => child.kill("SIGKILL"), 15_000);
      await exited;
      clearTimeout(killer);
    }
    if (isMounted(dirs.mnt)) await lazyUnmount(dirs.mnt);
    return child.exitCode;
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`mount did not start within ${START_S} s:\n${out}\n${err}`));
    }, START_S * 1000);
    const onData = () => {
      if (!/^mounted /m.test(out)) return;
      clearTimeout(timer);
      child.stdout!.off("data", onData);
      const url = opts.service?.url ?? /^export TXTFS_URL=(\S+)/m.exec(out)![1]!;
      const key = opts.service ? (opts.service.key ?? "") : /^export TXTFS_API_KEY=(\S+)/m.exec(out)![1]!;
      resolve({
        dirs,
        mnt: dirs.mnt,
        api: new Api(url, key),
        url,
        key,
        pid: child.pid!,
        child,
        stdout: () => out,
        stderr: () => err,
        exited,
        stop,
      });
    };
    child.stdout!.on("data", onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`mount exited with ${code} before mounting:\n${out}\n${err}`));
    });
  });
}

/** One mount for a whole test file: `const m = useMount()`, then `m.current` inside tests. */
export interface MountFixture {
  dirs: MountDirs;
  current: RunningMount;
  /** Runs a script in the mount (cwd = mountpoint), then waits for its saves to be delivered. */
  sh(script: string, timeoutMs?: number): Promise<ShResult>;
  /** Waits until every save is on the service (`txtfs sync`), e.g. after a program run directly. */
  sync(): Promise<void>;
  /** Stops the daemon (SIGTERM) and mounts the same data and cache dirs again. */
  remount(opts?: MountOptions): Promise<RunningMount>;
  start(opts?: MountOptions): Promise<RunningMount>;
  close(): Promise<void>;
}

export function mountFixture(): MountFixture {
  const dirs = makeMountDirs();
  let current: RunningMount | undefined;
  const fixture: MountFixture = {
    dirs,
    get current() {
      if (!current) throw new Error("not mounted");
      return current;
    },
    // Saves return before they reach the service (write-behind): wait for delivery after each
    // script, as `txtfs sync` would, so the API shows what the script did.
    async sh(script, timeoutMs) {
      const result = await sh(script, { cwd: dirs.mnt, timeoutMs });
      await fixture.sync().catch(() => undefined);
      return result;
    },
    async sync() {
      if (current) await requestSync(dirs.cache, 15_000);
    },
    async start(opts) {
      current = await startMount(dirs, opts);
      return current;
    },
    async remount(opts) {
      await current?.stop();
      current = await startMount(dirs, opts);
      return current;
    },
    async close() {
      try {
        await current?.stop();
      } finally {
        await removeMountDirs(dirs);
      }
    },
  };
  return fixture;
}

// ------------------------------------------------------------------ API helpers

export interface FlatIndex {
  files: any[];
  folders: any[];
  cursor: number;
}

export async function flatIndex(api: Api): Promise<FlatIndex> {
  const res = await api.get<FlatIndex>("/api/me/files");
  if (res.status !== 200) throw new Error(`GET /api/me/files: ${res.status} ${res.text}`);
  return res.body;
}

/** Every note on the service by its path from the root ("a/b/c.md") -> its id. */
export async function notePaths(api: Api): Promise<Map<string, string>> {
  const idx = await flatIndex(api);
  const folders = new Map(idx.folders.map((f: any) => [f.id, f]));
  const pathOf = (folderId: string | null, name: string): string => {
    const f: any = folderId ? folders.get(folderId) : undefined;
    return f ? pathOf(f.parentFolderId ?? null, `${f.name}/${name}`) : name;
  };
  return new Map(idx.files.map((f: any) => [pathOf(f.folderId, f.name), f.id]));
}

/** Resolves a mount path ("a/b/c.md") to its API record through the flat index. */
export async function findByPath(api: Api, path: string): Promise<any | undefined> {
  const index = await flatIndex(api);
  const parts = path.split("/").filter(Boolean);
  const name = parts.pop()!;
  let folderId: string | null = null;
  for (const part of parts) {
    const folder: any = index.folders.find((f) => f.name === part && f.parentFolderId === folderId);
    if (!folder) return undefined;
    folderId = folder.id;
  }
  return (
    index.files.find((f) => f.name === name && f.folderId === folderId) ??
    index.folders.find((f) => f.name === name && f.parentFolderId === folderId)
  );
}

/** The full record (with content) of the note at a mount path; throws when there is none. */
export async function noteAt(api: Api, path: string): Promise<any> {
  const rec = await findByPath(api, path);
  if (!rec?.id.startsWith("f_")) throw new Error(`no note at ${path}`);
  const res = await api.get(`/api/v1/files/${rec.id}`);
  if (res.status !== 200) throw new Error(`GET file ${rec.id}: ${res.status} ${res.text}`);
  return res.body;
}

/** The bytes of the attachment at a mount path ("a/b.png"), read from the service; none: undefined. */
export async function attachmentAt(m: RunningMount, path: string): Promise<Buffer | undefined> {
  const parts = path.split("/").filter(Boolean);
  const name = parts.pop()!;
  const index = await flatIndex(m.api);
  let folderId: string | null = null;
  for (const part of parts) {
    const folder: any = index.folders.find((f) => f.name === part && f.parentFolderId === folderId);
    if (!folder) return undefined;
    folderId = folder.id;
  }
  const listed = (await m.api.get("/api/v1/attachments?limit=1000")).body.attachments as any[];
  const rec = listed.find((a) => a.name === name && (a.folderId ?? null) === folderId);
  if (!rec) return undefined;
  const raw = await fetch(`${m.url}/api/v1/attachments/${rec.id}/raw`, {
    headers: { authorization: `Bearer ${m.key}` },
  });
  if (raw.status !== 200) throw new Error(`GET attachment ${rec.id}: ${raw.status}`);
  return Buffer.from(await raw.arrayBuffer());
}

export async function contentAt(api: Api, path: string): Promise<string | undefined> {
  const rec = await findByPath(api, path);
  if (!rec) return undefined;
  const res = await api.get(`/api/v1/files/${rec.id}`);
  return res.status === 200 ? res.body.content : undefined;
}

export async function createNote(
  api: Api,
  body: { name: string; content?: string; folderId?: string | null; fileType?: string; [k: string]: unknown },
): Promise<any> {
  const res = await api.post("/api/v1/files", { content: "", ...body });
  if (res.status !== 201) throw new Error(`create ${body.name}: ${res.status} ${res.text}`);
  return res.body.file;
}

export async function createFolder(api: Api, name: string, parentFolderId: string | null = null) {
  const res = await api.post("/api/v1/folders", { name, parentFolderId });
  if (res.status !== 201) throw new Error(`mkdir ${name}: ${res.status} ${res.text}`);
  return res.body.folder;
}

export async function updateNote(api: Api, id: string, patch: Record<string, unknown>): Promise<any> {
  const res = await api.put(`/api/v1/files/${id}`, patch);
  if (res.status !== 200) throw new Error(`update ${id}: ${res.status} ${res.text}`);
  return res.body.file;
}

/** Waits until a daemon's log has caught up (it is written asynchronously). */
export const settleLog = () => new Promise((r) => setTimeout(r, 300));

/**
 * FUSE operations `op` on paths under `prefix` that reached JavaScript in `stderr` (a daemon
 * started with --trace logs each one), e.g. since a mark: `m.current.stderr().slice(mark)`.
 * `only`: those answered synchronously from the tree (`sync`: getattr of a path it has, readdir),
 * or the others (`async`: getattr of a name it lacks, and every other operation).
 */
export function fuseOpsIn(stderr: string, op: string, prefix: string, only?: "sync" | "async"): number {
  return stderr
    .split("\n")
    .filter(
      (l) =>
        l.includes('"msg":"fuse op"') &&
        l.includes(`"op":"${op}"`) &&
        l.includes(`"path":"${prefix}`) &&
        (only === undefined || l.includes('"sync":true') === (only === "sync")),
    ).length;
}

/** A bash snippet that waits (bounded) until `test` succeeds: exits 0 when it did, 1 on timeout. */
export function waitFor(test: string, seconds = 2): string {
  const tries = Math.ceil(seconds / 0.05);
  return `for i in $(seq 1 ${tries}); do if ${test}; then exit 0; fi; sleep 0.05; done; exit 1`;
}

/** Single-quotes a string for bash. */
export function q(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * Teardown for tests that start their own services and mounts: each registered step runs after
 * the test, newest first, also when the test failed (a failing step does not stop the others).
 */
export function undoAfterEach(): (step: () => Promise<unknown>) => void {
  const steps: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const step of steps.splice(0).reverse()) await step().catch(() => {});
  });
  return (step) => {
    steps.push(step);
  };
}

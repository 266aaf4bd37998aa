// The vfs in-process (no FUSE): a real server on loopback, the Vfs called directly. Shared by the
// test files of test/vfs: `useVfsServer()` starts a fresh server, user and cache dir per test (in the
// file or describe it is called in); `t`, `u` and `cacheDir` are live bindings to them.

import { constants as fsc, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect } from "vitest";
import { TxtfsClient } from "../../src/client/api.ts";
import { createLogger } from "../../src/lib/logger.ts";
import type { Clock } from "../../src/vfs/clock.ts";
import { Vfs } from "../../src/vfs/vfs.ts";
import { startTestServer, type TestServer, type TestUser } from "../helpers/server.ts";

export let t: TestServer;
export let u: TestUser;
export let cacheDir: string;
const vfss: Vfs[] = [];
const scratch: string[] = [];

/** A server, a user and a cache dir for each test; every Vfs started by `mountVfs` is stopped after it. */
export function useVfsServer() {
  beforeEach(async () => {
    t = await startTestServer();
    u = await t.user();
    cacheDir = mkdtempSync(join(tmpdir(), "txtfs-vfs-"));
  });

  afterEach(async () => {
    for (const v of vfss.splice(0)) await v.stop().catch(() => {});
    await t.close().catch(() => {});
    rmSync(cacheDir, { recursive: true, force: true });
    for (const d of scratch.splice(0)) rmSync(d, { recursive: true, force: true });
  });
}

/** A cache dir of another device (or a copy of one, as a kill -9 leaves it), removed after the test. */
export function scratchDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  scratch.push(dir);
  return dir;
}

/** A device (a Vfs not yet started) of the test's user reaching the service at `url` (a proxy's, say); stopped after the test. */
export function deviceOn(
  url: string,
  dir: string,
  key = u.key,
  client = new TxtfsClient({ url, key, source: "mount", timeoutMs: 2000 }),
): Vfs {
  const vfs = new Vfs({
    client,
    cacheDir: dir,
    cacheSize: 1 << 20,
    uid: 0,
    gid: 0,
    logger: createLogger("vfs-test", (process.env.VFS_LOG as "silent") ?? "silent"),
    pollWait: 1,
  });
  vfss.push(vfs);
  return vfs;
}

export async function mountVfs(
  opts: { url?: string; cacheSize?: number; writeBehind?: boolean; client?: TxtfsClient; clock?: Clock } = {},
) {
  const client =
    opts.client ?? new TxtfsClient({ url: opts.url ?? t.url, key: u.key, source: "mount", timeoutMs: 2000 });
  const vfs = new Vfs({
    client,
    cacheDir,
    cacheSize: opts.cacheSize ?? 1 << 20,
    uid: 0,
    gid: 0,
    logger: createLogger("vfs-test", (process.env.VFS_LOG as "silent") ?? "silent"),
    pollWait: 1,
    writeBehind: opts.writeBehind,
    clock: opts.clock,
  });
  await vfs.start();
  vfss.push(vfs);
  return vfs;
}

export async function writeFile(vfs: Vfs, path: string, text: string) {
  const fd = await vfs.create(path, 0o644);
  await vfs.write(fd, Buffer.from(text), 0);
  await vfs.release(fd);
  await vfs.drain(); // write-behind: wait until the save is on the service (or found unreachable)
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until `check` holds (the change feed is polled in the background). */
export async function until(check: () => Promise<boolean> | boolean, what: string) {
  const deadline = Date.now() + 5000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

/** The service comes back (after `t.server.close()`) on the same port and data. */
export async function restartService(port: string) {
  const { startServer } = await import("../../src/server/serve.ts");
  return startServer({
    host: "127.0.0.1",
    port: Number(port),
    dataDir: t.dataDir,
    retentionDays: 90,
    logger: createLogger("test", "silent"),
    rateLimit: { limit: 1_000_000 },
  });
}

/** A file's bytes, as a program reads them (open, read, close). */
export async function bytesOf(vfs: Vfs, path: string): Promise<Buffer> {
  const fd = await vfs.open(path, fsc.O_RDONLY);
  try {
    return await vfs.read(fd, 1 << 22, 0);
  } finally {
    await vfs.release(fd);
  }
}

export async function readAll(vfs: Vfs, path: string) {
  const fd = await vfs.open(path, fsc.O_RDONLY);
  try {
    return (await vfs.read(fd, 1 << 20, 0)).toString();
  } finally {
    await vfs.release(fd);
  }
}

/** A client whose note creates wait until `open()`: a delivery round stays on its way meanwhile. */
export function heldCreates() {
  const client = new TxtfsClient({ url: t.url, key: u.key, source: "mount", timeoutMs: 5000 });
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  let held = 0;
  const create = client.createFile.bind(client);
  client.createFile = async (...args: Parameters<TxtfsClient["createFile"]>) => {
    held++;
    await gate;
    return create(...args);
  };
  return { client, open, held: () => held };
}

export const remote = async () =>
  (await u.api.get("/api/me/files")).body.files as { id: string; name: string; size: number }[];

/** A save built on an old version met an edit made elsewhere: the note keeps theirs, ours is a copy beside it. */
export async function theirsStaysOursCopied(id: string, note: { name: string; folderId?: string }) {
  expect((await u.api.get(`/api/v1/files/${id}`)).body).toMatchObject({ content: "theirs", ...note });
  const copy = (await remote()).find((f) => f.name.includes(".conflict-"));
  expect(copy?.name).toMatch(new RegExp(`^${note.name.replace(/\.md$/, "")}\\.conflict-.+\\.md$`));
  expect((await u.api.get(`/api/v1/files/${copy!.id}`)).body.content).toBe("ours");
}

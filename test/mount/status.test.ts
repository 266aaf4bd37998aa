// `txtfs status --json` against a real mount: the live statistics a monitoring script reads (cache
// hits and misses, bytes served from cache, requests by kind, pending saves and the age of the
// oldest, the feed's position and lag), while the service answers and while it is down.
import { describe, expect, it } from "vitest";
import { runTxtfs, spawnServeWithKey } from "../helpers/cli.ts";
import {
  createNote,
  makeMountDirs,
  removeMountDirs,
  sh,
  startMount,
  txtfsEnv,
  undoAfterEach,
} from "../helpers/mount.ts";
import { Api } from "../helpers/server.ts";

const later = undoAfterEach();

interface Live {
  pid: number;
  cache: {
    hits: number;
    misses: number;
    bytesFromCache: number;
    bytesDownloaded: number;
    hitRatio: number | null;
  };
  requests: { total: number; byKind: Record<string, number> };
  saves: { pending: number; journalled: number; oldestPendingSeconds: number | null };
  feed: {
    cursor: number;
    currentAt: string | null;
    lagSeconds: number | null;
    unreachableSince: string | null;
  };
  error?: string;
}

async function status(env: NodeJS.ProcessEnv): Promise<{ mountpoint: string; live: Live }[]> {
  const r = await runTxtfs(["status", "--json"], env);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
}

describe("txtfs status --json", () => {
  it("reports cache hits/misses, requests by kind, pending saves with their age, and the feed's lag", async () => {
    const dirs = makeMountDirs("txtfs-status-");
    later(() => removeMountDirs(dirs));
    const data = `${dirs.base}/service`;
    const first = await spawnServeWithKey(data);
    later(() => first.stop());
    const port = new URL(first.url).port;
    const api = new Api(first.url, first.key);
    const body = "a remote note\n".repeat(100); // 1,400 bytes
    await createNote(api, { name: "remote.md", content: body });
    const m = await startMount(dirs, { service: { url: first.url, key: first.key } });
    later(() => m.stop());
    const env = txtfsEnv(dirs);

    // The first read downloads the body (a miss), the next two are served from the cache. (The
    // kernel keeps the pages of an unchanged note: dd's nocache drops them, so the reads reach us.)
    const drop = "dd if=remote.md iflag=nocache count=0 status=none";
    const reads = await sh(
      `cat remote.md >/dev/null && ${drop} && cat remote.md >/dev/null && ${drop} && cat remote.md | wc -c`,
      { cwd: m.mnt },
    );
    expect(reads.stdout.trim()).toBe("1400");
    let [s] = await status(env);
    expect(s!.mountpoint).toBe(m.mnt);
    expect(s!.live.pid).toBe(m.pid);
    expect(s!.live.cache).toMatchObject({ misses: 1, hits: 2, bytesDownloaded: 1400, bytesFromCache: 2800 });
    expect(s!.live.cache.hitRatio).toBeCloseTo(2 / 3);
    expect(s!.live.requests.byKind["GET /api/v1/files/:id"]).toBe(1);
    expect(s!.live.requests.byKind["GET /api/me/files"]).toBe(1); // the listing at mount time
    expect(s!.live.requests.byKind["GET /api/v1/changes"]).toBeGreaterThanOrEqual(1);
    expect(s!.live.requests.total).toBe(Object.values(s!.live.requests.byKind).reduce((a, b) => a + b, 0));
    expect(s!.live.saves).toMatchObject({ pending: 0, journalled: 0, oldestPendingSeconds: null });
    // Following the feed: its cursor is the note's change, and it is current (a long-poll waits).
    expect(s!.live.feed.cursor).toBeGreaterThanOrEqual(1);
    expect(s!.live.feed.lagSeconds).toBe(0);
    expect(s!.live.feed.unreachableSince).toBe(null);

    // The service goes away: a save waits in the journal, and its age and the feed's lag grow.
    expect(await first.stop()).toBe(0);
    expect((await sh("printf 'offline\\n' > offline.md", { cwd: m.mnt })).code).toBe(0);
    await new Promise((r) => setTimeout(r, 1500));
    [s] = await status(env);
    expect(s!.live.saves.pending).toBe(1);
    expect(s!.live.saves.journalled).toBe(1);
    expect(s!.live.saves.oldestPendingSeconds).toBeGreaterThanOrEqual(1);
    expect(s!.live.feed.lagSeconds).toBeGreaterThanOrEqual(1);
    expect(s!.live.feed.unreachableSince).not.toBe(null);

    // It returns on the same port: the save is delivered, nothing is pending, the feed is current.
    const second = await spawnServeWithKey(data, port);
    later(() => second.stop());
    expect((await runTxtfs(["sync", m.mnt, "--timeout", "20"], env)).code).toBe(0);
    [s] = await status(env);
    expect(s!.live.saves).toMatchObject({ pending: 0, oldestPendingSeconds: null });
    expect(s!.live.requests.byKind["POST /api/v1/files"] ?? 0).toBeGreaterThanOrEqual(1);
  }, 90_000);

  it("txtfs status shows a note and a local-only file the moment they are written", async () => {
    const dirs = makeMountDirs("txtfs-status-");
    later(() => removeMountDirs(dirs));
    const m = await startMount(dirs);
    later(() => m.stop());
    expect((await sh("printf 'now\\n' > now.md && mkdir -p d && : > d/.DS_Store", { cwd: m.mnt })).code).toBe(
      0,
    );
    // At once, not after the record's next rewrite: the daemon answers with its tree as it is.
    const r = await runTxtfs(["status"], txtfsEnv(dirs));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^ {2}notes 1, folders 1, /m);
    expect(r.stdout).toMatch(/^ {2}local-only: \/d\/\.DS_Store \(/m);
  }, 30_000);

  it("a daemon that does not answer keeps its record's snapshot, and says why", async () => {
    const dirs = makeMountDirs("txtfs-status-");
    later(() => removeMountDirs(dirs));
    const m = await startMount(dirs);
    later(() => m.stop());
    // Its record is written right after it says "mounted".
    for (let i = 0; i < 50 && (await status(txtfsEnv(dirs))).length === 0; i++)
      await new Promise((r) => setTimeout(r, 100));
    process.kill(m.pid, "SIGSTOP");
    try {
      const [s] = await status(txtfsEnv(dirs));
      expect(s!.mountpoint).toBe(m.mnt);
      expect((s as unknown as { stats: { notes: number } }).stats.notes).toBe(0);
      expect(s!.live.error).toMatch(/no answer from the mount daemon/);
    } finally {
      process.kill(m.pid, "SIGCONT");
    }
  }, 30_000);
});

// Faults the mount daemon meets on its own machine: the disk holding the cache dir full, that disk
// gone read-only under it, its journal damaged by hand. Real `txtfs serve` behind a loopback proxy
// (cut or holding answers), real mounts on a cache dir of its own filesystem (a 2 MiB tmpfs, an
// ext4 image on a loop device), real programs, the real CLI. Every acknowledged save reaches the
// service exactly once with its exact bytes, nothing waiting is reported as delivered, and what
// `txtfs status` and `txtfs sync` say names the real cause.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runTxtfs, spawnServeWithKey } from "../helpers/cli.ts";
import { lacking } from "../helpers/kernel.ts";
import {
  flatIndex,
  lazyUnmount,
  type MountDirs,
  makeMountDirs,
  type RunningMount,
  removeMountDirs,
  sh,
  startMount,
  txtfsEnv,
  undoAfterEach,
} from "../helpers/mount.ts";
import { Api } from "../helpers/server.ts";
import { startSlowProxy } from "../helpers/slowProxy.ts";

const later = undoAfterEach();

/** Waits (bounded) until `test` holds, polling; never a fixed sleep. */
async function until(test: () => boolean | Promise<boolean>, what: string, seconds = 30): Promise<void> {
  const end = Date.now() + seconds * 1000;
  while (!(await test())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Mounts a filesystem of its own on `dir` (root, as CI runs), or skips the test when it cannot. */
function mountOwn(ctx: { skip: (why: string) => never }, args: string[], dir: string): void {
  try {
    execFileSync("mount", [...args, dir], { stdio: "pipe" });
  } catch (err) {
    ctx.skip(`no filesystem could be mounted here: ${(err as Error).message.split("\n")[0]}`);
  }
  later(async () => execFileSync("umount", ["-l", dir], { stdio: "pipe" }));
}

/** The service behind a proxy the test can cut (the mount finds it unreachable) or make hold answers. */
async function serviceBehindProxy(dirs: MountDirs) {
  const s = await spawnServeWithKey(join(dirs.base, "service"));
  later(() => s.stop());
  // holdSync: the answers to bulk requests carrying bodies (not a short append alone) are held.
  const state = { cut: false, holdSync: false };
  const proxy = await startSlowProxy(s.url, (method, path, headers) =>
    state.cut
      ? -1
      : state.holdSync &&
          method === "POST" &&
          path === "/api/v1/sync" &&
          Number(headers["content-length"]) > 1000
        ? 120_000
        : 0,
  );
  later(() => proxy.close());
  return { s, proxy, state, api: new Api(s.url, s.key) };
}

async function mount(dirs: MountDirs, url: string, key: string): Promise<RunningMount> {
  const m = await startMount(dirs, { service: { url, key } });
  later(() => m.stop());
  return m;
}

/** Every note on the service: path -> content (the test's notes are all at the root). */
async function notesOn(api: Api): Promise<Map<string, string>> {
  const index = await flatIndex(api);
  const out = new Map<string, string>();
  for (const f of index.files as { id: string; name: string }[]) {
    const res = await api.get(`/api/v1/files/${f.id}`);
    expect(out.has(f.name), `two notes named ${f.name}`).toBe(false);
    out.set(f.name, res.body.content);
  }
  return out;
}

const body = (i: number) => `save ${i}\n${`${i} `.repeat(10_000).slice(0, 20_000)}\n`;

/** Copies prepared notes into the mount one by one until a save is refused: how many were acknowledged. */
async function fillUntilRefused(dirs: MountDirs, most: number): Promise<{ saved: number; stderr: string }> {
  const src = join(dirs.base, "src");
  mkdirSync(src, { recursive: true });
  for (let i = 0; i < most; i++) writeFileSync(join(src, `n${i}.md`), body(i));
  const r = await sh(
    `i=0; while [ $i -lt ${most} ]; do cp src/n$i.md mnt/n$i.md 2>err || break; i=$((i+1)); done; echo $i; cat err`,
    { cwd: dirs.base, timeoutMs: 120_000 },
  );
  const [count, ...rest] = r.stdout.split("\n");
  return { saved: Number(count), stderr: rest.join("\n") };
}

describe("faults of the cache dir's own disk", () => {
  it.skipIf(lacking("tmpfs"))(
    "a full disk refuses new saves with ENOSPC, and once the service is back every acknowledged save is delivered exactly while the disk stays full",
    async (ctx) => {
      const dirs = makeMountDirs("txtfs-diskfull-");
      later(() => removeMountDirs(dirs));
      mountOwn(ctx, ["-t", "tmpfs", "-o", "size=2m", "tmpfs"], dirs.cache);
      const { s, proxy, state, api } = await serviceBehindProxy(dirs);
      const env = txtfsEnv(dirs);
      const m = await mount(dirs, proxy.url, s.key);

      state.cut = true;
      const { saved, stderr } = await fillUntilRefused(dirs, 300);
      expect(saved).toBeGreaterThan(20);
      expect(saved).toBeLessThan(300);
      expect(stderr).toContain("No space left on device");
      // What little room is left takes small appends, until one is refused as well; each one
      // acknowledged counts, and what was saved stands.
      const appends = await sh(
        // /bin/echo reports a failed close (bash's own echo ignores it).
        "c=0; while [ $c -lt 5000 ] && /bin/echo more >> mnt/n0.md 2>err; do c=$((c+1)); done; echo $c; cat err",
        { cwd: dirs.base, timeoutMs: 120_000 },
      );
      const [appended, appendErr] = appends.stdout.split("\n");
      expect(Number(appended)).toBeLessThan(5000);
      expect(appendErr).toContain("No space left on device");
      const n0 = body(0) + "more\n".repeat(Number(appended));
      expect((await sh("cat n0.md", { cwd: m.mnt })).stdout === n0, "n0.md as saved").toBe(true);

      const status = await runTxtfs(["status"], env);
      expect(status.stdout).toContain("the service is unreachable since");
      expect(status.stdout).toMatch(
        new RegExp(
          `the cache dir's disk is full \\(ENOSPC in ${dirs.cache}, since [^)]+\\): new saves are refused`,
        ),
      );
      expect(status.stdout).toContain(`pending uploads ${saved},`);
      const waiting = await runTxtfs(["sync", m.mnt], env);
      expect(waiting.code).toBe(1);
      expect(waiting.stdout).toContain(
        `${m.mnt}: ${saved} saves still journalled (the service is unreachable)`,
      );
      const freeBefore = execFileSync("df", ["--output=avail", "-B1", dirs.cache], { encoding: "utf8" });

      // The service is back; nothing on the disk is freed by the test.
      state.cut = false;
      const sync = await runTxtfs(["sync", m.mnt, "--timeout", "60"], env);
      expect(sync.stdout + sync.stderr).toBe(`${m.mnt}: every save is on the service\n`);
      expect(sync.code).toBe(0);
      const notes = await notesOn(api);
      expect(notes.get("n0.md") === n0, "n0.md with its appends").toBe(true);
      for (let i = 1; i < saved; i++) expect(notes.get(`n${i}.md`) === body(i), `n${i}.md`).toBe(true);
      // The refused save left at most the empty note its open made, never part of its bytes.
      expect(["", undefined]).toContain(notes.get(`n${saved}.md`));
      expect([...notes.keys()].filter((n) => !/^n\d+\.md$/.test(n))).toEqual([]);
      expect(m.stderr()).not.toContain("delivery failed here");
      // The disk was full when delivery began: the journal gave its own space back afterwards.
      expect(Number(freeBefore.split("\n")[1])).toBeLessThan(64 * 1024);
      // And the mount goes on: a new save is taken and delivered.
      expect((await sh("echo after > after.md", { cwd: m.mnt })).code).toBe(0);
      expect((await runTxtfs(["sync", m.mnt], env)).code).toBe(0);
      expect((await notesOn(api)).get("after.md")).toBe("after\n");
    },
    240_000,
  );

  it.skipIf(lacking("tmpfs"))(
    "kill -9 while the bulk request is on its way on a full disk: the next daemon sends exactly that request again; no save lost, none made twice, an append applied once",
    async (ctx) => {
      const dirs = makeMountDirs("txtfs-diskfull-kill-");
      later(() => removeMountDirs(dirs));
      mountOwn(ctx, ["-t", "tmpfs", "-o", "size=2m", "tmpfs"], dirs.cache);
      const { s, proxy, state, api } = await serviceBehindProxy(dirs);
      const env = txtfsEnv(dirs);
      const m = await mount(dirs, proxy.url, s.key);
      expect((await sh("echo first > log.md", { cwd: m.mnt })).code).toBe(0);
      expect((await runTxtfs(["sync", m.mnt], env)).code).toBe(0);

      state.cut = true;
      const { saved } = await fillUntilRefused(dirs, 300);
      expect(saved).toBeGreaterThan(20);
      // An append still fits in what the refused save left — unless the fill stopped with less
      // room than that (it depends on where it stopped): then a note removed before it went
      // makes room, and is not expected on the service.
      let appended = await sh("/bin/echo appended >> log.md", { cwd: m.mnt });
      let removed = -1;
      if (appended.code !== 0 && /No space/.test(appended.stderr)) {
        removed = saved - 1;
        expect((await sh(`rm n${removed}.md`, { cwd: m.mnt })).code).toBe(0);
        appended = await sh("/bin/echo appended >> log.md", { cwd: m.mnt });
      }
      expect(appended.code, appended.stderr).toBe(0);

      // Back, but the answer to the bulk request is held: the service has applied it, the daemon
      // has not heard. It is killed then.
      state.cut = false;
      state.holdSync = true;
      await until(() => proxy.held() > 0, "the bulk request to reach the service");
      m.child.kill("SIGKILL");
      await m.exited;
      await lazyUnmount(m.mnt);
      const applied = await notesOn(api);
      expect([...applied.keys()].sort().slice(0, 3)).toEqual(["log.md", "n0.md", "n1.md"]); // it reached the service
      expect(applied.get("n0.md") === body(0)).toBe(true);

      state.holdSync = false;
      const again = await mount(dirs, proxy.url, s.key);
      const sync = await runTxtfs(["sync", again.mnt, "--timeout", "60"], env);
      expect(sync.stdout + sync.stderr).toBe(`${again.mnt}: every save is on the service\n`);
      const notes = await notesOn(api); // (it fails on two notes of one name)
      expect(notes.get("log.md")).toBe("first\nappended\n");
      for (let i = 0; i < saved; i++)
        if (i !== removed) expect(notes.get(`n${i}.md`) === body(i), `n${i}.md`).toBe(true);
      expect(notes.size).toBe(saved + 1 - (removed >= 0 ? 1 : 0));
      expect(again.stderr()).not.toContain("the journal was damaged");
    },
    240_000,
  );

  it.skipIf(lacking("ext4Loop"))(
    "the cache dir's disk gone read-only under a mount: saves are refused with EROFS, those journalled wait and status and sync say why (not 'unreachable'); at start the daemon refuses; repaired, every save is delivered",
    async (ctx) => {
      const dirs = makeMountDirs("txtfs-readonly-");
      later(() => removeMountDirs(dirs));
      const image = join(dirs.base, "cache.img");
      execFileSync("truncate", ["-s", "16M", image]);
      execFileSync("mkfs.ext4", ["-q", "-F", image]);
      mountOwn(ctx, ["-o", "loop,errors=remount-ro", image], dirs.cache);
      const device = execFileSync("findmnt", ["-n", "-o", "SOURCE", dirs.cache], { encoding: "utf8" }).trim();
      const trigger = `/sys/fs/ext4/${device.replace("/dev/", "")}/trigger_fs_error`;
      const { s, proxy, state, api } = await serviceBehindProxy(dirs);
      const env = txtfsEnv(dirs);
      const m = await mount(dirs, proxy.url, s.key);

      state.cut = true;
      const saved = await sh("for i in 1 2 3; do echo waiting $i > w$i.md || exit 1; done", { cwd: m.mnt });
      expect(saved.code, saved.stderr).toBe(0);
      // The disk fails as ext4 does on an error with errors=remount-ro: read-only at once, open files
      // too. (What was written before is on it, as the kernel's writeback puts it there within 30 s;
      // a disk failing sooner loses what it never wrote, whatever the program.)
      execFileSync("sync", ["-f", dirs.cache]);
      try {
        writeFileSync(trigger, "1");
      } catch (err) {
        ctx.skip(`ext4 cannot be made to fail here: ${(err as Error).message}`);
      }
      const refused = await sh("/bin/echo new > refused.md", { cwd: m.mnt });
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain("Read-only file system");
      state.cut = false; // the service answers: what waits, waits for this machine
      const sync = await runTxtfs(["sync", m.mnt, "--timeout", "3"], env);
      expect(sync.code).toBe(1);
      expect(sync.stdout).toMatch(
        new RegExp(
          `^${m.mnt}: 3 saves still journalled: the cache dir is read-only \\(EROFS in ${dirs.cache}, since [^)]+\\); they are delivered once the journal can be written there again\n$`,
        ),
      );
      const status = await runTxtfs(["status"], env);
      expect(status.stdout).toMatch(/the cache dir is read-only \(EROFS in .*\): new saves are refused/);
      expect(status.stdout).not.toContain("unreachable");
      expect(await notesOn(api)).toEqual(new Map()); // nothing reported delivered was, nothing half

      // The daemon stops (its journal stays on the disk); started on the read-only disk it refuses.
      m.child.kill("SIGKILL");
      await m.exited;
      await lazyUnmount(m.mnt);
      const refusedStart = await runTxtfs(
        ["mount", m.mnt, "--url", proxy.url, "--key", s.key, "--cache-dir", dirs.cache],
        env,
      );
      expect(refusedStart.code).not.toBe(0);
      expect(refusedStart.stderr).toContain(
        `the cache dir ${dirs.cache} is read-only: saves could not be kept there`,
      );

      // Repaired (fsck) and mounted again: the three saves are delivered.
      execFileSync("umount", [dirs.cache]);
      // (e2fsck exits 1 when it corrected the error it was told of.)
      expect([0, 1]).toContain(spawnSync("e2fsck", ["-f", "-y", image], { stdio: "pipe" }).status);
      execFileSync("mount", ["-o", "loop", image, dirs.cache]);
      const repaired = await mount(dirs, proxy.url, s.key);
      const done = await runTxtfs(["sync", repaired.mnt, "--timeout", "30"], env);
      expect(done.stdout + done.stderr).toBe(`${repaired.mnt}: every save is on the service\n`);
      const notes = await notesOn(api);
      expect(Object.fromEntries(notes)).toEqual({
        "w1.md": "waiting 1\n",
        "w2.md": "waiting 2\n",
        "w3.md": "waiting 3\n",
      });
    },
    180_000,
  );
});

describe("a journal damaged by hand", () => {
  it("garbage in the middle and a wrong length prefix: the rest is recovered and delivered, what was dropped is logged and named by status, the damaged log is kept aside", async () => {
    const dirs = makeMountDirs("txtfs-damaged-");
    later(() => removeMountDirs(dirs));
    const { s, proxy, state, api } = await serviceBehindProxy(dirs);
    const env = txtfsEnv(dirs);
    const m = await mount(dirs, proxy.url, s.key);
    state.cut = true;
    const saved = await sh("for i in 1 2 3 4 5; do echo note $i > d$i.md || exit 1; done", { cwd: m.mnt });
    expect(saved.code, saved.stderr).toBe(0);
    m.child.kill("SIGKILL");
    await m.exited;
    await lazyUnmount(m.mnt);

    const logFile = join(dirs.cache, "journal", "log");
    const log = readFileSync(logFile, "latin1");
    // d2.md's last save with a body length one too many; garbage between d3.md's records and d4.md's.
    const d2 = log.lastIndexOf('"path":"/d2.md"');
    const lineStart = log.lastIndexOf("\n", d2) + 1;
    const lineEnd = log.indexOf("\n", d2);
    const header = log.slice(lineStart, lineEnd).replace(/"body":(\d+)/, (_, n) => `"body":${Number(n) + 1}`);
    const d4 = log.lastIndexOf("\n", log.indexOf('"path":"/d4.md"')) + 1;
    const garbage = '\u0000\u0000 not a record at all \u00ff\n{"put": torn\n';
    const rewritten = `${log.slice(0, lineStart)}${header}${log.slice(lineEnd, d4)}${garbage}${log.slice(d4)}`;
    writeFileSync(logFile, Buffer.from(rewritten, "latin1"));

    state.cut = false;
    const again = await mount(dirs, proxy.url, s.key);
    const sync = await runTxtfs(["sync", again.mnt, "--timeout", "30"], env);
    expect(sync.stdout + sync.stderr).toBe(`${again.mnt}: every save is on the service\n`);
    const notes = await notesOn(api);
    expect(Object.fromEntries(notes)).toEqual({
      "d1.md": "note 1\n",
      "d3.md": "note 3\n",
      "d4.md": "note 4\n",
      "d5.md": "note 5\n",
    });
    // One clear log line naming what was dropped.
    const logged = again
      .stderr()
      .split("\n")
      .filter((l) => l.includes("the journal was damaged"));
    expect(logged).toHaveLength(1);
    expect(logged[0]).toContain("the save of /d2.md");
    const kept = readdirSync(dirs.cache).filter((n) => /^journal\.damaged-[^.]+$/.test(n));
    expect(kept).toHaveLength(1);
    expect(readFileSync(join(dirs.cache, kept[0]!), "latin1")).toBe(rewritten);
    const status = await runTxtfs(["status"], env);
    expect(status.stdout).toContain("the journal was found damaged at");
    expect(status.stdout).toContain("4 saves recovered");
    expect(status.stdout).toMatch(/the save of \/d2\.md made [^ ]+ \(a wrong length/);
    expect(status.stdout).toContain(`the damaged log is kept as ${join(dirs.cache, kept[0]!)}`);
  }, 120_000);
});

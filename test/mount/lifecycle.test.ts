// The mount's lifecycle with the real binary: refusing bad mountpoints, recovering from a killed
// daemon, clean SIGTERM, `txtfs status` / `unmount`, and --read-only.
import { spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { requestSync } from "../../src/lib/mountControl.ts";
import { runTxtfs } from "../helpers/cli.ts";
import {
  contentAt,
  flatIndex,
  isMounted,
  type MountDirs,
  makeMountDirs,
  noteAt,
  q,
  type RunningMount,
  removeMountDirs,
  sh,
  startMount,
  txtfsEnv,
} from "../helpers/mount.ts";

const allDirs: MountDirs[] = [];
const mounts: RunningMount[] = [];

function dirs(): MountDirs {
  const d = makeMountDirs();
  allDirs.push(d);
  return d;
}

async function mount(d: MountDirs, args: string[] = []): Promise<RunningMount> {
  const mm = await startMount(d, { args });
  mounts.push(mm);
  return mm;
}

afterEach(async () => {
  for (const mm of mounts.splice(0)) await mm.stop();
  for (const d of allDirs.splice(0)) await removeMountDirs(d);
});

const mountArgs = (d: MountDirs, mountpoint = d.mnt) => [
  "mount",
  mountpoint,
  "--serve",
  "--data",
  d.data,
  "--cache-dir",
  d.cache,
  "--poll-wait",
  "1",
];

/** Child pids of a process (fusermount's auto_unmount helper is one). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    const text = readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim();
    if (text) out.push(...text.split(/\s+/).map(Number));
  }
  return out;
}

describe("mountpoint checks", () => {
  it("refuses a non-empty directory with a clear message and a non-zero exit", async () => {
    const d = dirs();
    writeFileSync(join(d.mnt, "already-here.txt"), "x");
    const r = await runTxtfs(mountArgs(d), txtfsEnv(d));
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/txtfs: mountpoint .*mnt is not empty/);
    expect(isMounted(d.mnt)).toBe(false);
    expect(readdirSync(d.mnt)).toEqual(["already-here.txt"]);
  });

  it("refuses a directory something else is mounted on (not 'not empty'), and leaves that mount alone", async () => {
    const d = dirs();
    const other = join(d.base, "other");
    mkdirSync(other);
    writeFileSync(join(other, "theirs.txt"), "x");
    // Once seen to take over 20 s in a full run (cause not found; not libmount's utab lock): each
    // step's time goes into the failure message, and the test has the time to finish.
    const t0 = Date.now();
    const bind = await sh(`mount --bind '${other}' '${d.mnt}'`, { cwd: "/", timeoutMs: 40_000 });
    const steps = [`mount --bind: ${Date.now() - t0} ms, exit ${bind.code} ${bind.stderr.trim()}`];
    expect(bind.code, steps.join("; ")).toBe(0);
    try {
      const t1 = Date.now();
      const r = await runTxtfs(mountArgs(d), txtfsEnv(d));
      steps.push(`txtfs mount: ${Date.now() - t1} ms, exit ${r.code}`);
      expect(r.code, steps.join("; ")).not.toBe(0);
      expect(r.stderr).toMatch(/^txtfs: \S+mnt is already a mount point \(.+\); choose an empty directory$/m);
      expect(readdirSync(d.mnt)).toEqual(["theirs.txt"]);
    } finally {
      await sh(`umount '${d.mnt}'`, { cwd: "/", timeoutMs: 40_000 });
    }
  }, 90_000);

  it("refuses a missing directory with a clear message and a non-zero exit", async () => {
    const d = dirs();
    const missing = join(d.base, "missing");
    const r = await runTxtfs(mountArgs(d, missing), txtfsEnv(d));
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/txtfs: mountpoint .*missing does not exist/);
    expect(isMounted(missing)).toBe(false);
  });
});

describe("daemon lifecycle", () => {
  it("SIGTERM exits 0, unmounts, and everything written is there on the next mount", async () => {
    const d = dirs();
    const first = await mount(d);
    expect((await sh("mkdir keep && echo kept > keep/k.md", { cwd: d.mnt })).code).toBe(0);
    expect(await first.stop()).toBe(0);
    expect(isMounted(d.mnt)).toBe(false);
    expect(first.stderr()).not.toMatch(/"level":50/); // no error logged
    // The daemon's last line, written right before it ends itself (_exit, no Node teardown).
    expect(first.stderr()).toMatch(/"msg":"unmounted"/);
    const second = await mount(d);
    expect((await sh("cat keep/k.md", { cwd: d.mnt })).stdout).toBe("kept\n");
    expect(await contentAt(second.api, "keep/k.md")).toBe("kept\n");
  });

  it("an unmount from outside (umount DIR, as fstab and systemd do) delivers the pending saves, then the daemon exits 0", async () => {
    const d = dirs();
    const first = await mount(d);
    // Written and unmounted with no pause: the saves are still in the write-behind window.
    const r = await sh(
      `mkdir u && for i in $(seq 1 40); do echo "note $i" > u/n$i.md; done && cd / && umount ${q(d.mnt)}`,
      { cwd: d.mnt },
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(await first.exited).toBe(0);
    expect(isMounted(d.mnt)).toBe(false);
    expect(first.stderr()).toMatch(/"signal":"unmounted"/);
    expect(first.stderr()).toMatch(/"flushedMs":\d+,"stoppedMs":\d+,"msg":"unmounted"/);
    expect(first.stderr()).not.toMatch(/still journalled/);
    const journal = join(d.cache, "journal", "log");
    expect(existsSync(journal) ? readFileSync(journal, "utf8") : "").toBe("");
    const second = await mount(d);
    for (const i of [1, 20, 40]) expect(await contentAt(second.api, `u/n${i}.md`)).toBe(`note ${i}\n`);
    expect((await flatIndex(second.api)).files.filter((f) => f.name.startsWith("n")).length).toBe(40);
  });

  it("SIGTERM while a file is open for writing uploads what was written", async () => {
    const d = dirs();
    const first = await mount(d);
    expect((await sh("echo before > open.md", { cwd: d.mnt })).code).toBe(0);
    const path = join(d.mnt, "open.md");
    const script = `f = open(${JSON.stringify(path)}, "w"); f.write("written while open\\n"); f.flush(); print("ready", flush=True); import time; time.sleep(30)`;
    const py = spawn("python3", ["-c", script], { cwd: d.base, stdio: ["ignore", "pipe", "pipe"] });
    try {
      await new Promise<void>((resolve, reject) => {
        py.stdout.on("data", (x) => (String(x).includes("ready") ? resolve() : undefined));
        py.once("exit", (code) => reject(new Error(`python exited ${code}`)));
      });
      expect(await first.stop()).toBe(0);
      expect(isMounted(d.mnt)).toBe(false);
    } finally {
      py.kill("SIGKILL");
    }
    const second = await mount(d);
    expect(await contentAt(second.api, "open.md")).toBe("written while open\n");
  });

  it("a note moved back onto the name of a note deleted here keeps that name across a SIGKILL (soak seed 4107)", async () => {
    // `mv a.md d1/b.md` over a note deletes a.md's note (on its way); moved back, the other note
    // took the name a.md. After a kill -9 the restarted daemon placed it while the deleted note
    // still held the name, and showed it as `a (5zae2p).md` for good.
    const d = dirs();
    const first = await mount(d);
    const setup = await sh(
      "mkdir d1 && printf 'banana\\ncat\\n' > a.md && printf 'apple pie\\n' > b.md && printf 'cat\\n' > d1/a.md",
      { cwd: d.mnt },
    );
    expect(setup.code, setup.stderr).toBe(0);
    expect((await requestSync(d.cache)).pending).toBe(0);
    await new Promise((r) => setTimeout(r, 1200)); // the kernel forgets what it looked up
    const moves = await sh(
      "printf apple > d1/b.md && printf ' appledog' >> b.md && mv -T b.md d1/a.md && mv -T a.md d1/b.md && mv -T d1/b.md a.md && ls",
      { cwd: d.mnt },
    );
    expect(moves.stderr).toBe("");
    expect(moves.stdout).toBe("a.md\nd1\n");
    first.child.kill("SIGKILL");
    await first.exited;
    const next = await mount(d);
    const after = await sh("ls; cat a.md; ls d1", { cwd: d.mnt });
    expect(after.stderr).toBe("");
    expect(after.stdout).toBe("a.md\nd1\nbanana\ncat\na.md\n");
    expect((await requestSync(d.cache)).pending).toBe(0);
    expect((await noteAt(next.api, "a.md")).content).toBe("banana\ncat\n");
    expect((await noteAt(next.api, "d1/a.md")).content).toBe("apple pie\n appledog");
    expect((await sh("ls", { cwd: d.mnt })).stdout).toBe("a.md\nd1\n");
  });

  it("after SIGKILL of the daemon (even with a dead mount left behind) a new mount works", async () => {
    const d = dirs();
    const first = await mount(d);
    expect((await sh("echo survived > s.md", { cwd: d.mnt })).code).toBe(0);
    first.child.kill("SIGKILL");
    await first.exited;

    let next = await mount(d);
    expect((await sh("cat s.md", { cwd: d.mnt })).stdout).toBe("survived\n");

    // kill fusermount's auto_unmount helper too: the mount is left dead (ENOTCONN)
    const helpers = childrenOf(next.pid);
    expect(helpers.length).toBeGreaterThan(0);
    for (const pid of helpers) process.kill(pid, "SIGKILL");
    await new Promise((r) => setTimeout(r, 100));
    next.child.kill("SIGKILL");
    await next.exited;
    const dead = await sh(`ls ${q(d.mnt)}`, { cwd: "/" });
    expect(dead.stderr).toMatch(/Transport endpoint is not connected/);
    expect(isMounted(d.mnt)).toBe(true);

    next = await mount(d);
    const r = await sh("ls; cat s.md; echo again >> s.md", { cwd: d.mnt });
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("s.md\nsurvived\n");
    expect((await requestSync(d.cache)).pending).toBe(0); // saves are write-behind
    expect((await noteAt(next.api, "s.md")).content).toBe("survived\nagain\n");
  });

  it("--uid/--gid own every file; the first listing reports its progress", async () => {
    const d = dirs();
    const m = await mount(d, ["--uid", "1234", "--gid", "5678"]);
    expect(m.stderr()).toMatch(/txtfs: listing the account\.\.\./);
    expect(m.stderr()).toMatch(/txtfs: 0 notes in 0 folders/);
    const r = await sh(
      "mkdir own && echo x > own/n.md && touch own/local.bin && stat -c '%u:%g %n' . own own/n.md own/local.bin",
      {
        cwd: d.mnt,
      },
    );
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("1234:5678 .\n1234:5678 own\n1234:5678 own/n.md\n1234:5678 own/local.bin\n");
  });

  it("other users reach the mount only with --allow-other", async () => {
    const closed = dirs();
    const open = dirs();
    // Other users may pass through the (private) temp dirs, so only the mount option decides.
    for (const d of [closed, open]) chmodSync(d.base, 0o711);
    await mount(closed);
    expect((await sh("echo mine > n.md", { cwd: closed.mnt })).code).toBe(0);
    const denied = await sh(`runuser -u nobody -- cat ${q(`${closed.mnt}/n.md`)}`, { cwd: "/" });
    expect(denied.code).not.toBe(0);
    expect(denied.stderr).toMatch(/Permission denied/);
    await mount(open, ["--allow-other"]);
    expect((await sh("echo shared > n.md", { cwd: open.mnt })).code).toBe(0);
    const allowed = await sh(`runuser -u nobody -- cat ${q(`${open.mnt}/n.md`)}`, { cwd: "/" });
    expect(allowed.stdout).toBe("shared\n");
  });

  it("txtfs status lists a running mount, and txtfs unmount stops it", async () => {
    const d = dirs();
    const mm = await mount(d);
    const status = await runTxtfs(["status"], txtfsEnv(d));
    expect(status.code).toBe(0);
    expect(status.stdout).toContain(`${d.mnt}  <- ${mm.url}  (pid ${mm.pid}`);
    expect(status.stdout).toMatch(/notes \d+, folders \d+, pending uploads 0/);
    const json = await runTxtfs(["status", "--json"], txtfsEnv(d));
    const records = JSON.parse(json.stdout);
    expect(records).toEqual([expect.objectContaining({ pid: mm.pid, mountpoint: d.mnt, url: mm.url })]);

    const un = await runTxtfs(["unmount", d.mnt], txtfsEnv(d));
    expect(un.stderr).toBe("");
    expect(un.code).toBe(0);
    expect(await mm.exited).toBe(0);
    expect(isMounted(d.mnt)).toBe(false);
    expect((await runTxtfs(["status"], txtfsEnv(d))).stdout).toBe("no txtfs mounts\n");
  });
});

describe("--read-only", () => {
  it("reads work and every write fails with 'Read-only file system', changing nothing", async () => {
    const d = dirs();
    const rw = await mount(d);
    expect((await sh("mkdir ro && echo original > ro/f.md", { cwd: d.mnt })).code).toBe(0);
    await rw.stop();
    mkdirSync(join(d.base, "elsewhere"));

    const ro = await mount(d, ["--read-only"]);
    const before = await flatIndex(ro.api);
    const note = await noteAt(ro.api, "ro/f.md");
    expect((await sh("cat ro/f.md", { cwd: d.mnt })).stdout).toBe("original\n");

    const attempts = [
      "echo x > ro/f.md",
      "echo x >> ro/f.md",
      "echo x > ro/new.md",
      "touch ro/new2.md",
      "truncate -s 0 ro/f.md",
      "mkdir ro/sub",
      "rm ro/f.md",
      "rmdir ro",
      "mv ro/f.md ro/g.md",
      "sed -i s/original/changed/ ro/f.md",
      "setfattr -n user.txtfs.tags -v a ro/f.md",
      "echo x > ro/local.bak",
    ];
    for (const cmd of attempts) {
      const r = await sh(cmd, { cwd: d.mnt });
      expect(r.code, cmd).not.toBe(0);
      expect(r.stderr, cmd).toMatch(/Read-only file system/);
    }
    const after = await flatIndex(ro.api);
    expect(after.files).toEqual(before.files);
    expect(after.folders).toEqual(before.folders);
    expect((await noteAt(ro.api, "ro/f.md")).etag).toBe(note.etag);
    expect((await sh("ls -A ro; cat ro/f.md", { cwd: d.mnt })).stdout).toBe("f.md\noriginal\n");
  });
});

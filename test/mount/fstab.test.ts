// mount(8) and fstab: scripts/install-mount-helper's /sbin/{mount,umount}.fuse.txtfs, driven by the
// real mount and umount. Helpers are looked up in /sbin only, so each scenario runs in a private
// mount namespace (unshare -m) where an overlay over /usr/sbin holds the helpers: the machine's own
// /sbin is never touched, and the mount lives and dies with the namespace.

import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BIN, ROOT, spawnServe } from "../helpers/cli.ts";
import { lacking } from "../helpers/kernel.ts";
import {
  contentAt,
  isMounted,
  type MountDirs,
  makeMountDirs,
  q,
  removeMountDirs,
  type ShResult,
  txtfsEnv,
} from "../helpers/mount.ts";
import { Api } from "../helpers/server.ts";

let dirs: MountDirs;
/** Daemons a scenario left running (read from the mount registry): killed in teardown. */
const daemons = new Set<number>();

beforeEach(() => {
  dirs = makeMountDirs("txtfs-fstab-");
});
afterEach(async () => {
  for (const pid of daemons) {
    try {
      process.kill(pid, "SIGKILL"); // its namespace and mount go with it
    } catch {}
  }
  daemons.clear();
  await removeMountDirs(dirs);
});

/** Whether `pid` still runs, after giving it `ms` to finish exiting (its record goes just before). */
async function alive(pid: number, ms = 5000): Promise<boolean> {
  for (const deadline = Date.now() + ms; Date.now() < deadline; ) {
    try {
      process.kill(pid, 0);
      if (readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.startsWith("Z")) return false; // exited
    } catch {
      return false;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return true;
}

/** Runs `script` (bash) in a private mount namespace with the helpers installed; records daemon pids. */
async function inNamespace(script: string): Promise<ShResult> {
  const { execFile } = await import("node:child_process");
  const setup = [
    "set -e",
    `mkdir -p ${q(dirs.base)}/up ${q(dirs.base)}/work`,
    `mount -t overlay overlay -o lowerdir=/usr/sbin,upperdir=${q(dirs.base)}/up,workdir=${q(dirs.base)}/work /usr/sbin`,
    `${q(join(ROOT, "scripts/install-mount-helper"))} --sbin /usr/sbin 2>/dev/null`,
    "set +e",
  ].join("\n");
  const result = await new Promise<ShResult>((resolve) =>
    execFile(
      "unshare",
      ["-m", "--propagation", "private", "bash", "-c", `${setup}\n${script}`],
      { env: txtfsEnv(dirs), timeout: 60_000, cwd: "/" },
      (err, stdout, stderr) => {
        const code = err ? (err as { code?: unknown }).code : 0;
        resolve({ code: typeof code === "number" ? code : 1, stdout, stderr });
      },
    ),
  );
  for (const line of result.stdout.matchAll(/^daemon (\d+)$/gm)) daemons.add(Number(line[1]));
  return result;
}

function fstab(options: string): string {
  const file = join(dirs.base, "fstab");
  writeFileSync(file, `# a test fstab\nserve:${dirs.data} ${dirs.mnt} fuse.txtfs ${options} 0 0\n`);
  return file;
}

/** Prints `daemon PID` for each registered mount daemon (from the registry, never the mount). */
const daemonsOf = () =>
  `for f in ${q(dirs.config)}/mounts/*.json; do [ -e "$f" ] && echo "daemon $(basename "$f" .json)"; done`;

/** The note at `path` in the embedded store of dirs.data, read through a service started on it. */
async function storedContent(path: string): Promise<string | undefined> {
  const serve = await spawnServe(["--data", dirs.data]);
  try {
    const key = readFileSync(join(dirs.data, "mount.key"), "utf8").trim();
    return await contentAt(new Api(serve.url, key), path);
  } finally {
    await serve.stop();
  }
}

// Each scenario needs a private mount namespace with an overlay over /usr/sbin.
describe.skipIf(lacking("fuse", "mountNamespace", "overlay"))("mount -t fuse.txtfs and fstab", () => {
  it("an fstab line mounts with mount -T, a file written shows up, umount flushes it and unmounts", async () => {
    // What was in the directory is hidden by the mount (nonempty), and comes back after it.
    writeFileSync(join(dirs.mnt, "underneath.txt"), "x");
    const file = fstab(
      `noauto,_netdev,x-systemd.automount,user,nonempty,cache_dir=${dirs.cache}/c,poll_wait=1,log_file=${dirs.base}/mount.log,log_level=debug`,
    );
    const r = await inNamespace(`
      mount -T ${q(file)} ${q(dirs.mnt)}; echo "mount exit $?"
      ${daemonsOf()}
      grep -c ' ${dirs.mnt} fuse.txtfs ' /proc/self/mounts
      printf 'hello from fstab\\n' > ${q(dirs.mnt)}/a.md
      ls ${q(dirs.mnt)}
      umount ${q(dirs.mnt)}; echo "umount exit $?"
      grep -c ' ${dirs.mnt} ' /proc/self/mounts
      ls ${q(dirs.mnt)}
    `);
    expect(r.stdout, r.stderr).toMatch(/^mount exit 0\n/m);
    // mount(8) printed nothing of its own (no key, no URL): mount helpers are quiet.
    expect(r.stderr).toBe("");
    expect(r.stdout).toMatch(/^1\na\.md\numount exit 0\n0\nunderneath\.txt\n$/m);
    expect(daemons.size).toBe(1);
    // umount returned after the daemon flushed and exited: the note is in the store.
    for (const pid of daemons) expect(await alive(pid)).toBe(false);
    expect(await storedContent("a.md")).toBe("hello from fstab\n");
    // --log-file and --log-level came from the fstab line.
    expect(readFileSync(join(dirs.base, "mount.log"), "utf8")).toMatch(/"level":20,.*"msg":"request"/);
  }, 90_000);

  it("umount without the helper (umount -i): the daemon sees the mount gone, delivers and exits", async () => {
    const file = fstab(`cache_dir=${dirs.cache}/c`);
    const r = await inNamespace(`
      mount -T ${q(file)} ${q(dirs.mnt)}; echo "mount exit $?"
      ${daemonsOf()}
      printf 'kept\\n' > ${q(dirs.mnt)}/b.md
      umount -i ${q(dirs.mnt)}; echo "umount exit $?"
      for f in ${q(dirs.config)}/mounts/*.json; do for i in $(seq 1 100); do [ -e "$f" ] || break; sleep 0.1; done; done
      ls ${q(dirs.config)}/mounts
    `);
    expect(r.stdout, r.stderr).toMatch(/^mount exit 0\n/m);
    expect(r.stdout).toMatch(/^umount exit 0\n$/m);
    expect(daemons.size).toBe(1);
    expect(r.stdout.trimEnd().endsWith("umount exit 0")).toBe(true); // no record left
    for (const pid of daemons) expect(await alive(pid)).toBe(false);
    expect(await storedContent("b.md")).toBe("kept\n");
  }, 90_000);

  it.skipIf(lacking("autofs"))(
    "an automount point (x-systemd.automount) is refused at once instead of waiting for itself",
    async () => {
      // An autofs mount like systemd's, whose requests nobody answers: anything that looks at the
      // directory (Node's stat is statx, which triggers it) would hang.
      const autofs = [
        "import os, subprocess, sys, time",
        "r, w = os.pipe()",
        "subprocess.check_call(['mount', '-t', 'autofs', '-o', f'fd={w},pgrp={os.getpgrp()},minproto=5,maxproto=5,direct', 'systemd-1', sys.argv[1]], pass_fds=(w,))",
        "time.sleep(30)",
      ].join("\n");
      writeFileSync(join(dirs.base, "autofs.py"), autofs);
      const file = fstab(`x-systemd.automount,_netdev,cache_dir=${dirs.cache}/c`);
      const r = await inNamespace(`
      python3 ${q(join(dirs.base, "autofs.py"))} ${q(dirs.mnt)} & sleep 0.5
      setsid timeout 20 mount -T ${q(file)} ${q(dirs.mnt)}; echo "mount exit $?"
      ${daemonsOf()}
      grep ' ${dirs.mnt} ' /proc/self/mountinfo | sed 's/.* - //' | cut -d' ' -f1
      kill %1
    `);
      expect(r.stdout, r.stderr).toBe("mount exit 1\nautofs\n");
      expect(r.stderr).toMatch(/is an automount point \(x-systemd\.automount\): not supported yet/);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
    },
    60_000,
  );

  it("a bad option or source: one line, exit 2, nothing mounted, no daemon", async () => {
    const cases: [string, RegExp][] = [
      ["bogus_opt", /unknown mount option "bogus_opt"/],
      ["key=txt_secret", /put the key in a file/],
      ["cache_size=lots", /--cache-size/],
      ["log_level=loud2", /--log-level/],
      ["poll_wait", /needs a value/],
    ];
    for (const [option, message] of cases) {
      const file = fstab(option);
      const r = await inNamespace(`mount -T ${q(file)} ${q(dirs.mnt)}; echo "mount exit $?"; ${daemonsOf()}`);
      expect(r.stdout, option).toBe("mount exit 2\n");
      expect(r.stderr, option).toMatch(message);
      expect(r.stderr.trim().split("\n"), option).toHaveLength(1);
      expect(isMounted(dirs.mnt)).toBe(false);
    }
    // A relative serve: path and an unknown source kind, through the helper directly.
    const { execFileSync } = await import("node:child_process");
    for (const [source, message] of [
      ["serve:data", /absolute path/],
      ["ftp://x", /service URL/],
    ] as const) {
      let err: { status?: number; stderr?: string } = {};
      try {
        execFileSync(process.execPath, [BIN, "mount-helper", source, dirs.mnt, "-o", "rw"], {
          env: txtfsEnv(dirs),
          stdio: "pipe",
          encoding: "utf8",
        });
      } catch (e) {
        err = e as typeof err;
      }
      expect(err.status).toBe(2);
      expect(err.stderr).toMatch(message);
    }
    // mount -f (fake): nothing is done, but an unknown option still fails.
    const run = (...args: string[]) =>
      spawnSync(process.execPath, [BIN, "mount-helper", `serve:${dirs.data}`, dirs.mnt, ...args], {
        env: txtfsEnv(dirs),
        encoding: "utf8",
      });
    const fake = run("-f", "-o", "noauto,cache_size=64M,local_dir=.git,local_dir=node_modules");
    expect([fake.status, fake.stdout, fake.stderr]).toEqual([0, "", ""]);
    expect(run("-fv", "-o", "bogus").status).toBe(2);
    expect(isMounted(dirs.mnt)).toBe(false);
    expect(readdirSync(dirs.config)).toEqual([]); // no mount record, ever
  }, 90_000);
});

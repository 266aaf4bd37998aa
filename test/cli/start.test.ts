// scripts/start, the README's main command, as a person runs it: after a crash (the daemon and
// fusermount3's auto_unmount helper killed), after a second start, after Ctrl-C — on a terminal
// (a pty: short readable lines, no JSON) and into pipes.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ROOT, runTxtfs } from "../helpers/cli.ts";
import { lacking } from "../helpers/kernel.ts";
import {
  isMounted,
  type MountDirs,
  makeMountDirs,
  q,
  removeMountDirs,
  sh,
  txtfsEnv,
} from "../helpers/mount.ts";

const START = join(ROOT, "scripts", "start");
const PTY = join(ROOT, "test", "helpers", "ptyrun.py");

interface Started {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | string | null>;
}

const running: Started[] = [];
const allDirs: MountDirs[] = [];

afterEach(async () => {
  for (const s of running.splice(0)) {
    if (s.child.exitCode === null && s.child.signalCode === null) {
      s.child.kill("SIGINT");
      const killer = setTimeout(() => s.child.kill("SIGKILL"), 15_000);
      await s.exited;
      clearTimeout(killer);
    }
  }
  for (const d of allDirs.splice(0)) await removeMountDirs(d);
});

function dirs(): MountDirs {
  const d = makeMountDirs("txtfs-start-");
  allDirs.push(d);
  return d;
}

/** `scripts/start DIR` (on a pty when `tty`), its stdout and stderr together. */
function start(d: MountDirs, opts: { tty?: boolean } = {}): Started {
  const cmd = opts.tty ? ["python3", PTY, START, d.mnt] : [START, d.mnt];
  const child = spawn(cmd[0]!, cmd.slice(1), { env: txtfsEnv(d), stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout!.on("data", (b) => {
    out += b;
  });
  child.stderr!.on("data", (b) => {
    out += b;
  });
  // A death by signal resolves with the signal's name, so a failure says which.
  const exited = new Promise<number | string | null>((r) =>
    child.once("exit", (code, signal) => r(code ?? signal)),
  );
  const s = { child, output: () => out, exited };
  running.push(s);
  return s;
}

/** Waits until `test` holds (bounded), failing with what was printed. */
async function until(test: () => boolean, what: string, s?: Started, ms = 40_000): Promise<void> {
  for (const deadline = Date.now() + ms; Date.now() < deadline; ) {
    if (test()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting for ${what}${s ? `:\n${s.output()}` : ""}`);
}

const mounted = (s: Started) => until(() => /^mounted /m.test(s.output()), "mounted", s);

/** The mount daemon serving DIR (from its registry record) and its fusermount3 helper. */
function daemonOf(d: MountDirs): { pid: number; helpers: number[] } {
  const records = readdirSync(join(d.config, "mounts")).filter((n) => n.endsWith(".json"));
  const pid = JSON.parse(readFileSync(join(d.config, "mounts", records[0]!), "utf8")).pid as number;
  const helpers: number[] = [];
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    const text = readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim();
    if (text) helpers.push(...text.split(/\s+/).map(Number));
  }
  return { pid, helpers };
}

describe.skipIf(lacking("fuse"))("scripts/start", { timeout: 60_000 }, () => {
  it("recovers after the daemon and its auto_unmount helper were killed (a crash, a closed terminal)", async () => {
    const d = dirs();
    // A parent that never reaps (as a closed terminal's session may be): the killed daemon stays a
    // zombie, its pid alive to kill(pid, 0), its mount gone.
    const parent = spawn(
      "bash",
      ["-c", `${q(START)} ${q(d.mnt)} > ${q(join(d.base, "first.log"))} 2>&1 & exec sleep 600`],
      { env: txtfsEnv(d), stdio: "ignore" },
    );
    const parentExited = new Promise((r) => parent.once("exit", r));
    try {
      await until(() => {
        try {
          return /^mounted /m.test(readFileSync(join(d.base, "first.log"), "utf8"));
        } catch {
          return false;
        }
      }, "the first mount");
      expect((await sh(`echo 'before the crash' > ${q(join(d.mnt, "kept.md"))}`)).code).toBe(0);
      const synced = await runTxtfs(["sync"], txtfsEnv(d));
      expect(synced.stdout).toBe(`${d.mnt}: every save is on the service\n`);
      const { pid, helpers } = daemonOf(d);
      expect(helpers.length).toBeGreaterThan(0);
      for (const h of helpers) process.kill(h, "SIGKILL");
      process.kill(pid, "SIGKILL");
      await until(
        () => readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.startsWith("Z") ?? false,
        "a zombie",
      );

      const again = start(d);
      await mounted(again);
      expect(again.output()).not.toMatch(/already mounted|cannot stat/);
      const r = await sh(`cat ${q(join(d.mnt, "kept.md"))}`);
      expect(r.stdout).toBe("before the crash\n");
    } finally {
      parent.kill("SIGKILL");
      await parentExited;
    }
  });

  it("mounts over a stale mount left by a crash (Transport endpoint is not connected)", async () => {
    const d = dirs();
    const first = start(d);
    await mounted(first);
    // A listing the kernel keeps: after the crash it still answers `ls` from its cache, though the
    // mount is dead.
    const before = await sh(`echo kept > a.md && ls && ls && cat a.md`, { cwd: d.mnt });
    expect(before.stdout).toBe("a.md\na.md\nkept\n");
    const { pid, helpers } = daemonOf(d);
    for (const h of helpers) process.kill(h, "SIGKILL");
    process.kill(pid, "SIGKILL");
    await first.exited;
    expect((await sh(`stat ${q(join(d.mnt, "no-such-note"))}`, { cwd: "/" })).stderr).toMatch(
      /Transport endpoint is not connected/,
    );
    expect(isMounted(d.mnt)).toBe(true);

    const again = start(d);
    await mounted(again);
    expect(again.output()).not.toMatch(/cannot stat|mkdir|does not exist/);
    expect((await sh(`cat ${q(join(d.mnt, "a.md"))}`, { cwd: "/" })).stdout).toBe("kept\n");
  });

  it("a record whose pid now belongs to another process does not block the mount", async () => {
    const d = dirs();
    const other = spawn("sleep", ["600"], { stdio: "ignore" });
    const otherExited = new Promise((r) => other.once("exit", r));
    try {
      // Written by a daemon an hour ago; its pid now names a process started since.
      const then = new Date(Date.now() - 3600_000).toISOString();
      const record = {
        pid: other.pid,
        mountpoint: d.mnt,
        url: "http://127.0.0.1:1",
        cacheDir: d.cache,
        startedAt: then,
        updatedAt: then,
        stats: {},
        conflicts: [],
      };
      await sh(`mkdir -p ${q(join(d.config, "mounts"))}`);
      writeFileSync(join(d.config, "mounts", `${other.pid}.json`), JSON.stringify(record));
      const s = start(d);
      await mounted(s);
      expect(s.output()).not.toMatch(/already mounted/);
      expect(readdirSync(join(d.config, "mounts"))).not.toContain(`${other.pid}.json`);
    } finally {
      other.kill("SIGKILL");
      await otherExited;
    }
  });

  it("a daemon still running after its mount went (delivering saves) is waited for, not joined", async () => {
    const d = dirs();
    // Stands in for a daemon whose mount is gone but which still runs (it writes to the journal a
    // second mount would use): started before its record, alive, not mounted.
    const other = spawn("sleep", ["600"], { stdio: "ignore" });
    const otherExited = new Promise((r) => other.once("exit", r));
    try {
      await until(() => existsSync(`/proc/${other.pid}`), "sleep to run");
      const later = new Date(Date.now() + 5000).toISOString();
      const record = {
        pid: other.pid,
        mountpoint: d.mnt,
        url: "http://127.0.0.1:1",
        cacheDir: d.cache,
        startedAt: later,
        updatedAt: later,
        stats: {},
        conflicts: [],
      };
      mkdirSync(join(d.config, "mounts"), { recursive: true });
      writeFileSync(join(d.config, "mounts", `${other.pid}.json`), JSON.stringify(record));
      const s = start(d);
      expect(await s.exited).toBe(1);
      expect(s.output()).toBe(
        `txtfs: ${d.mnt} was unmounted, and its daemon (pid ${other.pid}) is still delivering its saves; mount again once it has exited (txtfs status)\n`,
      );
      expect(isMounted(d.mnt)).toBe(false);
    } finally {
      other.kill("SIGKILL");
      await otherExited;
    }
  });

  it("on a terminal: short readable lines, no JSON; a second start says why once; Ctrl-C unmounts", async () => {
    const d = dirs();
    const first = start(d, { tty: true });
    await mounted(first);
    const second = start(d, { tty: true });
    expect(await second.exited).toBe(1);
    const refused = second.output().split(/\r?\n/).filter(Boolean);
    expect(refused).toEqual([
      `txtfs: ${d.mnt} is already mounted by txtfs (pid ${daemonOf(d).pid}, ${/TXTFS_URL=(\S+)/.exec(first.output())![1]}); run txtfs unmount ${d.mnt} first`,
    ]);

    first.child.kill("SIGINT"); // ptyrun types Ctrl-C on the terminal
    expect(await first.exited).toBe(0);
    expect(isMounted(d.mnt)).toBe(false);
    const lines = first.output().split(/\r?\n/).filter(Boolean);
    expect(lines.filter((l) => l.startsWith("{"))).toEqual([]);
    expect(first.output()).not.toMatch(/"level":|\bat .*\.ts:\d+/);
    expect(lines.find((l) => l.startsWith("mounted "))).toMatch(
      new RegExp(`^mounted ${d.mnt} \\(\\d+ ms\\)$`),
    );
    expect(lines.some((l) => /unmounted/.test(l))).toBe(true);
    // The service's URL is said once, by the mount (not also by the in-process server's own log).
    expect(lines.filter((l) => l.includes("127.0.0.1:"))).toEqual([
      expect.stringMatching(/^txtfs service http:\/\/127\.0\.0\.1:\d+ \(data: /),
      expect.stringMatching(/^export TXTFS_URL=/),
    ]);
  });

  it("into a pipe: JSON log lines (for machines)", async () => {
    const d = dirs();
    const s = start(d);
    await mounted(s);
    await until(() => /"msg":"registered this mount as a device"/.test(s.output()), "a JSON log line", s);
    s.child.kill("SIGINT");
    expect(await s.exited).toBe(0);
  });
});

describe("log lines on a terminal", { timeout: 60_000 }, () => {
  /** `txtfs serve` on a pty until it has logged that it listens, then Ctrl-C. */
  async function serveOnTerminal(args: string[]): Promise<string> {
    const data = makeMountDirs("txtfs-serve-tty-");
    allDirs.push(data);
    const child = spawn(
      "python3",
      [
        PTY,
        process.execPath,
        join(ROOT, "bin", "txtfs"),
        "serve",
        "--port",
        "0",
        "--data",
        data.data,
        ...args,
      ],
      {
        env: txtfsEnv(data),
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let out = "";
    child.stdout!.on("data", (b) => {
      out += b;
    });
    const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
    running.push({ child, output: () => out, exited });
    // The whole line: a terminal's output can arrive cut anywhere.
    await until(() => /Server listening[^\n]*\n/.test(out), "serve's first log line");
    child.kill("SIGINT");
    expect(await exited).toBe(0);
    return out;
  }

  it("txtfs serve writes readable lines; --log-format json the JSON lines", async () => {
    const readable = await serveOnTerminal([]);
    expect(readable).toMatch(/^txtfs: Server listening at http:\/\/127\.0\.0\.1:\d+\r?$/m);
    expect(readable).not.toMatch(/"level":/);
    const json = await serveOnTerminal(["--log-format", "json"]);
    expect(json).toMatch(/^\{"level":30,.*"msg":"Server listening at http/m);
  });

  it("a log format that does not exist is one line and exit 2", async () => {
    const bad = await runTxtfs(["serve", "--log-format", "pretty"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^txtfs: option '--log-format <format>' argument 'pretty' is invalid/);
    const env = await runTxtfs(["status"], { TXTFS_LOG_FORMAT: "pretty" });
    expect(env.code).toBe(2);
    expect(env.stderr.trim().split("\n")).toHaveLength(1);
  });
});

// Issue 14 on the command line: private files, keys out of `ps`, request tracing without bodies,
// checked flags, variables and config (one line, exit 2, no request sent), and errors that say
// which URL and which key.
import { execFileSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createServer, type Server } from "node:http";
import { createServer as createTcpServer, type Socket, type Server as TcpServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, runTxtfs, spawnServe } from "../helpers/cli.ts";
import { lacking } from "../helpers/kernel.ts";
import { type MountDirs, makeMountDirs, removeMountDirs, sh, startMount } from "../helpers/mount.ts";
import { startTestServer, type TestServer, type TestUser } from "../helpers/server.ts";

const temps: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "txtfs-i14-"));
  temps.push(d);
  return d;
}
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

const mode = (path: string) => statSync(path).mode & 0o777;

/** Every file and directory below `dir` (not following links). */
function walk(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isSocket()) continue;
    out.push(path);
    if (entry.isDirectory()) out.push(...walk(path));
  }
  return out;
}

function expectOneLineUsageError(r: { code: number | null; stderr: string; stdout: string }, names: RegExp) {
  expect(r.code, r.stderr).toBe(2);
  const lines = r.stderr.trim().split("\n");
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^txtfs: /);
  expect(lines[0]).toMatch(names);
  expect(r.stderr).not.toMatch(/Usage:|\n\s+at |"level"/);
}

/** An HTTP server that counts what reaches it: proves a command failed before any request. */
let counter: Server;
let counted = 0;
let counterUrl: string;
/** A TCP server that accepts and never answers: a request to it hangs until the client's deadline. */
let silent: TcpServer;
let silentUrl: string;
let silentConnections = 0;
const silentSockets: Socket[] = [];

let t: TestServer;
let alice: TestUser;

beforeAll(async () => {
  counter = createServer((_req, res) => {
    counted++;
    res.writeHead(500).end();
  });
  await new Promise<void>((r) => counter.listen(0, "127.0.0.1", r));
  counterUrl = `http://127.0.0.1:${(counter.address() as { port: number }).port}`;
  silent = createTcpServer((socket) => {
    silentConnections++;
    silentSockets.push(socket);
  });
  await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
  silentUrl = `http://127.0.0.1:${(silent.address() as { port: number }).port}`;
  t = await startTestServer();
  alice = await t.user();
});
afterAll(async () => {
  counter.close();
  silent.close();
  await t.close();
});

describe("files are private to their user (umask 077)", () => {
  it("serve: data dir 0700; database, WAL, shared memory and vault key 0600, under a umask of 022", async () => {
    const data = join(tempDir(), "fresh");
    const s = await spawnServe(["--data", data]);
    try {
      expect(mode(data)).toBe(0o700);
      for (const name of ["txtfs.db", "txtfs.db-wal", "txtfs.db-shm", "vault.key"]) {
        expect(mode(join(data, name)), name).toBe(0o600);
      }
    } finally {
      await s.stop();
    }
    // files an older txtfs left readable by all are tightened on the next start
    // (a clean shutdown may have removed the WAL and shared-memory files: those that are left)
    const left = ["txtfs.db", "txtfs.db-wal", "txtfs.db-shm"].filter((n) => existsSync(join(data, n)));
    expect(left).toContain("txtfs.db");
    for (const name of left) chmodSync(join(data, name), 0o644);
    const again = await spawnServe(["--data", data]);
    try {
      for (const name of ["txtfs.db", "txtfs.db-wal", "txtfs.db-shm"])
        expect(mode(join(data, name)), name).toBe(0o600);
    } finally {
      await again.stop();
    }
  });

  it("mount --daemon: the log directory is 0700 and its log file 0600", async () => {
    const cache = join(tempDir(), "cache");
    const missing = join(tempDir(), "nope");
    const r = await runTxtfs(["mount", missing, "--daemon", "--url", counterUrl], {
      TXTFS_CACHE: cache,
      TXTFS_CONFIG: tempDir(),
      TXTFS_API_KEY: "txt_x",
    });
    expect(r.code).toBe(1); // the mountpoint does not exist: the daemon says so in its log
    const logs = join(cache, "logs");
    expect(mode(cache)).toBe(0o700);
    expect(mode(logs)).toBe(0o700);
    const [log] = readdirSync(logs);
    expect(mode(join(logs, log!))).toBe(0o600);
    expect(readFileSync(join(logs, log!), "utf8")).toContain("does not exist");
    // a log an older txtfs made readable by all is tightened when the daemon writes to it again
    chmodSync(join(logs, log!), 0o644);
    await runTxtfs(["mount", missing, "--daemon", "--url", counterUrl], {
      TXTFS_CACHE: cache,
      TXTFS_CONFIG: tempDir(),
      TXTFS_API_KEY: "txt_x",
    });
    expect(mode(join(logs, log!))).toBe(0o600);
  });
});

describe("flags, variables and the config file are checked first: one line, exit 2, no request", () => {
  const mnt = () => tempDir();
  const cases: [string, () => string[], NodeJS.ProcessEnv, RegExp][] = [
    [
      "--uid bob",
      () => ["mount", mnt(), "--url", counterUrl, "--uid", "bob"],
      {},
      /--uid.*'bob'.*numeric id/,
    ],
    ["--gid x", () => ["mount", mnt(), "--url", counterUrl, "--gid", "x"], {}, /--gid.*'x'.*numeric id/],
    [
      "--poll-wait -5",
      () => ["mount", mnt(), "--url", counterUrl, "--poll-wait", "-5"],
      {},
      /--poll-wait.*0-60/,
    ],
    [
      "--cache-size lots",
      () => ["mount", mnt(), "--url", counterUrl, "--cache-size", "lots"],
      {},
      /--cache-size.*256M/,
    ],
    ["--url nonsense", () => ["mount", mnt(), "--url", "nonsense"], {}, /--url.*http/],
    ["TXTFS_URL nonsense", () => ["mount", mnt()], { TXTFS_URL: "ftp://x" }, /TXTFS_URL.*http/],
    ["sync --timeout soon", () => ["sync", "--timeout", "soon"], {}, /--timeout.*'soon'.*seconds/],
    [
      "serve with TXTFS_PORT=abc",
      () => ["serve", "--data", tempDir()],
      { TXTFS_PORT: "abc" },
      /TXTFS_PORT="abc".*port number 0-65535/,
    ],
    ["serve --port 99999", () => ["serve", "--data", tempDir(), "--port", "99999"], {}, /--port.*0-65535/],
    ["TXTFS_LOG_LEVEL=loud", () => ["status"], { TXTFS_LOG_LEVEL: "loud" }, /TXTFS_LOG_LEVEL.*debug/],
    [
      "--key-file missing",
      () => ["mount", mnt(), "--url", counterUrl, "--key-file", "/nonexistent/k"],
      {},
      /--key-file.*\/nonexistent\/k.*ENOENT/,
    ],
    ["an unknown option", () => ["mount", mnt(), "--frobnicate"], {}, /unknown option '--frobnicate'/],
  ];
  for (const [what, args, env, names] of cases) {
    it(what, async () => {
      const before = counted;
      const r = await runTxtfs(args(), {
        TXTFS_CONFIG: tempDir(),
        TXTFS_CACHE: tempDir(),
        TXTFS_API_KEY: "txt_x",
        ...env,
      });
      expectOneLineUsageError(r, names);
      expect(counted).toBe(before);
    });
  }

  it("a malformed config.json is an error naming the file, and so is an unknown key", async () => {
    const config = tempDir();
    writeFileSync(join(config, "config.json"), '{"url": "http://x",');
    const bad = await runTxtfs(["mount", tempDir()], {
      TXTFS_CONFIG: config,
      TXTFS_URL: "",
      TXTFS_API_KEY: "",
    });
    expectOneLineUsageError(bad, new RegExp(`${join(config, "config.json")} is not valid JSON`));
    // login would otherwise save its sign-in over it
    const before0 = counted;
    const login = await runTxtfs(["login", "--url", counterUrl, "--no-browser"], { TXTFS_CONFIG: config });
    expectOneLineUsageError(login, /is not valid JSON/);
    expect(readFileSync(join(config, "config.json"), "utf8")).toBe('{"url": "http://x",');
    expect(counted).toBe(before0);

    writeFileSync(join(config, "config.json"), JSON.stringify({ url: counterUrl, kye: "txt_x" }));
    const before = counted;
    const typo = await runTxtfs(["mount", tempDir()], {
      TXTFS_CONFIG: config,
      TXTFS_URL: "",
      TXTFS_API_KEY: "",
    });
    expectOneLineUsageError(typo, /unknown setting "kye" \(known: url, key, keyFile, signIn\)/);
    expect(counted).toBe(before);

    writeFileSync(join(config, "config.json"), JSON.stringify({ url: 42 }));
    expectOneLineUsageError(
      await runTxtfs(["mount", tempDir()], { TXTFS_CONFIG: config, TXTFS_URL: "", TXTFS_API_KEY: "" }),
      /"url" must be string/,
    );
  });
});

describe("errors that say which service and which key", () => {
  const env = () => ({ TXTFS_CONFIG: tempDir(), TXTFS_CACHE: tempDir() });

  it("a wrong key: the URL, where the key came from, no stack trace", async () => {
    const keyFile = join(tempDir(), "key");
    writeFileSync(keyFile, "txt_0000000000000000000000000000000000AAAA\n", { mode: 0o600 });
    const sources: [string[], NodeJS.ProcessEnv, string][] = [
      [["--key-file", keyFile], {}, `--key-file ${keyFile}`],
      [[], { TXTFS_API_KEY: "txt_wrong" }, "TXTFS_API_KEY"],
      [[], { TXTFS_API_KEY_FILE: keyFile }, `TXTFS_API_KEY_FILE (${keyFile})`],
    ];
    for (const [args, extra, from] of sources) {
      const r = await runTxtfs(["mount", tempDir(), "--url", t.url, ...args], { ...env(), ...extra });
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toContain(`${t.url} refused the API key from ${from}`);
      expect(r.stderr).toMatch(/txtfs admin key add/);
      expect(r.stderr).not.toMatch(/\n\s+at |"stack"|"level"/);
      expect(r.stderr.trim().split("\n").length).toBeLessThanOrEqual(2);
    }
  });

  it("a key in the config file's keyFile is used and named", async () => {
    const config = tempDir();
    const keyFile = join(tempDir(), "key");
    writeFileSync(keyFile, "txt_wrong\n", { mode: 0o600 });
    writeFileSync(join(config, "config.json"), JSON.stringify({ url: t.url, keyFile }));
    const r = await runTxtfs(["mount", tempDir()], {
      TXTFS_CONFIG: config,
      TXTFS_URL: "",
      TXTFS_API_KEY: "",
    });
    expect(r.stderr).toContain(
      `refused the API key from the "keyFile" of ${join(config, "config.json")} (${keyFile})`,
    );
  });

  it("an unreachable URL: says so and suggests txtfs status and --serve", async () => {
    const closed = createTcpServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const down = `http://127.0.0.1:${(closed.address() as { port: number }).port}`;
    await new Promise((r) => closed.close(r));
    const r = await runTxtfs(["mount", tempDir(), "--url", down], { ...env(), TXTFS_API_KEY: alice.key });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`cannot reach the service at ${down} (ECONNREFUSED)`);
    expect(r.stderr).toMatch(/txtfs status/);
    expect(r.stderr).toMatch(/--serve/);
    expect(r.stderr).not.toMatch(/\n\s+at |"stack"/);
  });

  it("pin of a missing path says it does not exist", async () => {
    const r = await runTxtfs(["pin", "/nonexistent/note.md"], env());
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("/nonexistent/note.md: no such file or directory");
    expect(r.stderr).not.toMatch(/are they in a txtfs mount/);
    expect(r.stderr).toMatch(/1 of 1 paths could not be set \(they do not exist\)/);
  });
});

describe("--key never stays visible to other users", () => {
  /** Lines of `ps` (all users' view) mentioning `marker`. */
  const psLines = (marker: string) =>
    execFileSync("ps", ["-eo", "pid,args"], { encoding: "utf8" })
      .split("\n")
      .filter((l) => l.includes(marker));

  it("the process title and /proc/PID/cmdline drop it, in the foreground and in the --daemon child", async () => {
    const secret = "txt_SeCrEt0000000000000000000000000000ZZZZ";
    const mountpoint = tempDir();
    for (const daemon of [false, true]) {
      // A service that never answers keeps the command waiting on its first request (10 s deadline).
      const run = runTxtfs(
        ["mount", mountpoint, "--url", silentUrl, "--key", secret, ...(daemon ? ["--daemon"] : [])],
        {
          TXTFS_CONFIG: tempDir(),
          TXTFS_CACHE: tempDir(),
        },
      );
      // Once the command talks to the service, it has parsed everything (and the daemon child runs).
      const connections = silentConnections;
      for (let i = 0; i < 100 && silentConnections === connections; i++)
        await new Promise((r) => setTimeout(r, 100));
      const lines = psLines(mountpoint).filter((l) => !l.includes(" ps "));
      expect(lines.length, lines.join("\n")).toBeGreaterThanOrEqual(daemon ? 2 : 1);
      for (const line of lines) expect(line).not.toContain(secret);
      for (const line of lines) {
        const pid = line.trim().split(/\s+/)[0]!;
        expect(readFileSync(`/proc/${pid}/cmdline`, "utf8")).not.toContain(secret);
      }
      // Hang up: the command fails at once instead of waiting for its 10 s deadline.
      for (const socket of silentSockets.splice(0)) socket.destroy();
      const r = await run;
      expect(r.stderr).toMatch(/--key is readable by other users/);
      expect(r.stderr).toMatch(
        daemon ? /the mount daemon exited/ : new RegExp(`cannot reach the service at ${silentUrl}`),
      );
    }
  }, 60_000);
});

describe.skipIf(lacking("fuse"))("a live mount", () => {
  let dirs: MountDirs;
  beforeAll(() => {
    dirs = makeMountDirs("txtfs-i14-");
    // the daemon inherits this umask; txtfs must tighten it itself
    chmodSync(dirs.cache, 0o755);
  });
  afterAll(() => removeMountDirs(dirs));

  it("traces requests without bodies, keeps its cache private, and refuses a second mount on it", async () => {
    const m = await startMount(dirs, { args: ["--trace"] });
    try {
      const secret = "SECRET-NOTE-TEXT-4711";
      const w = await sh(
        `echo '${secret}' > "${m.mnt}/private.md" && TXTFS_CONFIG='${dirs.config}' '${process.execPath}' '${BIN}' sync "${m.mnt}"`,
        { cwd: "/" },
      );
      expect(w.code, w.stderr).toBe(0);
      expect((await m.api.get("/api/me/files")).body.files.map((f: { name: string }) => f.name)).toContain(
        "private.md",
      );
      // tracing: request lines with method, path and status; never a body, never the REQ dump
      expect(m.stderr()).toMatch(/"msg":"request"/);
      expect(m.stderr()).toMatch(/"method":"POST","path":"\/api\/v1\/files","status":201/);
      expect(m.stderr()).not.toContain(secret);
      expect(m.stderr()).not.toMatch(/^REQ /m);
      // the journal, caches and control files: directories 0700, files 0600
      const paths = walk(dirs.cache);
      expect(paths.length).toBeGreaterThan(0);
      for (const p of paths) expect(mode(p), p).toBe(statSync(p).isDirectory() ? 0o700 : 0o600);
      for (const p of walk(dirs.data)) expect(mode(p), p).toBe(statSync(p).isDirectory() ? 0o700 : 0o600);
      // mounting again on the same directory
      const again = await runTxtfs(["mount", m.mnt, "--serve", "--data", join(dirs.base, "other")], {
        TXTFS_CONFIG: dirs.config,
        TXTFS_CACHE: join(dirs.base, "other-cache"),
      });
      expect(again.code).toBe(1);
      expect(again.stderr).toContain(`${m.mnt} is already mounted by txtfs (pid ${m.pid}`);
      expect(again.stderr).not.toMatch(/not empty/);
    } finally {
      await m.stop();
    }
  }, 60_000);
});

// The mount at scale (issue 19): N notes (default 100,000) in F folders (default 2,000), mounted by
// txtfs (a real `txtfs serve`, the notes imported through the API) and by sshfs (the same tree in a
// plain directory behind a throwaway loopback sshd, sshfs.ts), figure by figure side by side:
// mount until listable, cold and warm `ls -lR`, `find`, `grep -r` over 1,000 notes, following
// 10,000 remote changes, and the daemons' memory.
//
//   node scripts/bench/mount-large.ts                          (npm run bench:mount-large)
//   node scripts/bench/mount-large.ts --notes 10000 --folders 200
//
// Every action on a mount runs in a child `bash -c` (this process never touches a FUSE mount), and
// every result is checked (file counts of listings, grep hits, every change seen). A failed check
// exits non-zero; the mounts, sshd and server are stopped by pid and the base dir removed in any case.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import {
  type ChildServer,
  cleanEnv,
  cleanUpOnStop,
  fmtInt,
  machineInfo,
  markdownTable,
  median,
  numberOption,
  startChild,
} from "./lib.ts";
import { isMounted, mountsUnder, type SshfsResources, startSshfs, unmountFuse } from "./sshfs.ts";

const root = resolve(import.meta.dirname, "../..");
const BIN = join(root, "bin/txtfs");
const log = (msg: string) => process.stderr.write(`[bench:mount-large] ${msg}\n`);

const HELP = `usage: node scripts/bench/mount-large.ts [options]
  --notes <n>          notes in the tree (default 100000)
  --folders <n>        folders holding them, in groups of 20 (default 2000)
  --changes <n>        remote changes to follow (default 10000, at most --notes)
  --runs <n>           interleaved runs of the read figures; times are their medians (default 3)
  --base <checkout>    also run another checkout's txtfs (server and mount) as a target beside this
                       one, interleaved, and report this one against it figure by figure
  --base-mount-only    the base target's server is this checkout's: only its mount is the base's,
                       so the ratio is the mount's own (the service's changes left out)
  --out <file>         Markdown report (default bench-results/mount-large.md)
  --timeout <s>        watchdog: give up (and clean up) after this many seconds (default 3600)
  --no-drop-caches     never write /proc/sys/vm/drop_caches (it empties the page cache of the whole machine)`;

interface Settings {
  notes: number;
  folders: number;
  changes: number;
  runs: number;
  out: string;
  timeoutSeconds: number;
  dropCaches: boolean;
  /** Another checkout whose bin/txtfs runs as the "base" target. */
  base: string | undefined;
  /** The base target's server is this checkout's; only its mount is the base's. */
  baseMountOnly: boolean;
}

function settingsFromArgs(): Settings {
  const { values } = parseArgs({
    options: {
      notes: { type: "string" },
      folders: { type: "string" },
      changes: { type: "string" },
      runs: { type: "string" },
      out: { type: "string" },
      timeout: { type: "string" },
      "no-drop-caches": { type: "boolean", default: false },
      base: { type: "string" },
      "base-mount-only": { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    process.exit(0);
  }
  try {
    const notes = numberOption("notes", values.notes, 100_000, 1000, true);
    const folders = numberOption("folders", values.folders, 2000, 20, true);
    if (folders % 20 !== 0) throw new Error(`--folders: expected a multiple of 20, got ${folders}`);
    if (notes < folders) throw new Error(`--notes: expected at least --folders (${folders}), got ${notes}`);
    return {
      notes,
      folders,
      changes: Math.min(notes, numberOption("changes", values.changes, 10_000, 100, true)),
      runs: numberOption("runs", values.runs, 3, 1, true),
      out: resolve(values.out ?? join(root, "bench-results/mount-large.md")),
      timeoutSeconds: numberOption("timeout", values.timeout, 3600, 30, true),
      dropCaches: !values["no-drop-caches"],
      base: values.base ? resolve(values.base) : undefined,
      baseMountOnly: values["base-mount-only"],
    };
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(2);
  }
}

// ---------------------------------------------------------------------------------------------
// The tree: folders `gGGG/fFFFF` (20 per group), notes spread evenly; group g000's notes carry a
// known number of GREP_WORD lines, no other note has it. Deterministic and ASCII (bytes = chars).

const GREP_WORD = "zephyr";
const FILLER = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor ".split(" ");

interface Tree {
  folders: string[];
  /** Note paths in index order, with their contents. */
  paths: string[];
  contents: string[];
  /** The folder grep runs in (20 folders), how many notes it holds and the lines with the word. */
  grepDir: string;
  grepNotes: number;
  grepLines: number;
  grepFiles: number;
  bytes: number;
}

function makeTree(s: Settings): Tree {
  const folders = Array.from(
    { length: s.folders },
    (_, i) => `g${String(Math.floor(i / 20)).padStart(3, "0")}/f${String(i).padStart(5, "0")}`,
  );
  const paths: string[] = [];
  const contents: string[] = [];
  let grepLines = 0;
  let grepFiles = 0;
  let grepNotes = 0;
  let bytes = 0;
  for (let i = 0; i < s.notes; i++) {
    const folder = folders[Math.floor((i * s.folders) / s.notes)]!;
    const inGrep = folder.startsWith("g000/");
    const lines = [`# Note ${i}`, ""];
    for (let l = 0; l < 3 + (i % 5); l++) {
      lines.push(Array.from({ length: 8 }, (_, w) => FILLER[(i * 7 + l * 3 + w) % FILLER.length]).join(" "));
    }
    if (inGrep) {
      grepNotes++;
      const hits = i % 3; // 0, 1 or 2 lines with the word
      for (let h = 0; h < hits; h++) lines.push(`a ${GREP_WORD} line ${h} of note ${i}`);
      grepLines += hits;
      if (hits) grepFiles++;
    }
    const content = `${lines.join("\n")}\n`;
    paths.push(`${folder}/note${String(i).padStart(6, "0")}.md`);
    contents.push(content);
    bytes += content.length;
  }
  return { folders, paths, contents, grepDir: "g000", grepNotes, grepLines, grepFiles, bytes };
}

/** The changed content of note `i` (its size grows, so a stat shows the change). */
const changed = (tree: Tree, i: number) => `${tree.contents[i]}changed remotely ${i}\n`;

// ---------------------------------------------------------------------------------------------
// Child processes: every action on a mount runs in `bash -c`, in its own process group.

const running = new Set<number>();

interface ShResult {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

function sh(script: string, timeoutMs = 600_000): Promise<ShResult> {
  return new Promise((resolveSh, reject) => {
    const t0 = performance.now();
    const child = spawn("bash", ["-c", script], {
      cwd: "/",
      env: { ...process.env, LC_ALL: "C" },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    if (child.pid === undefined) return reject(new Error("could not start bash"));
    const pid = child.pid;
    running.add(pid);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (d: Buffer) => out.push(d));
    child.stderr.on("data", (d: Buffer) => err.push(d));
    const timer = setTimeout(() => {
      try {
        process.kill(-pid, "SIGKILL");
      } catch {}
    }, timeoutMs);
    child.on("close", (code) => {
      const ms = performance.now() - t0;
      clearTimeout(timer);
      running.delete(pid);
      resolveSh({
        code,
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
        ms,
      });
    });
  });
}

async function shOk(what: string, script: string, timeoutMs?: number): Promise<ShResult> {
  const r = await sh(script, timeoutMs);
  if (r.code !== 0) {
    throw new Error(`${what}: exit ${r.code} after ${Math.round(r.ms)} ms\n${r.stderr.slice(-1500)}`);
  }
  return r;
}

function check(ok: boolean, what: string): asserts ok {
  if (!ok) throw new Error(`check failed: ${what}`);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let dropCachesWorks = true;
async function dropCaches(): Promise<void> {
  if (!dropCachesWorks) return;
  const r = await sh("sync && echo 3 > /proc/sys/vm/drop_caches", 120_000);
  if (r.code !== 0) {
    log("cannot write /proc/sys/vm/drop_caches: cold figures read from the page cache");
    dropCachesWorks = false;
  }
  // The programs are loaded again, so "cold" means cold data, not cold binaries.
  await sh(
    "ls / >/dev/null; find / -maxdepth 0 >/dev/null; grep -q x /dev/null; stat / >/dev/null; wc </dev/null",
  );
}

function procStatusKb(pid: number, field: "VmRSS" | "VmHWM"): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) : Number.NaN;
}

// ---------------------------------------------------------------------------------------------
// The targets

interface Target {
  name: "local" | "sshfs" | "txtfs" | "base";
  dir: string;
  /** Mounts; resolves once the mount is up (txtfs: "mounted"; sshfs: in the mount table). */
  mount(): Promise<void>;
  unmount(): Promise<void>;
  /** The process serving the mount (txtfs daemon, sshfs), for its memory. */
  pid(): number | undefined;
  /** Makes `changes` notes change behind the mount; resolves when the last change is made. */
  change(indexes: number[]): Promise<void>;
}

/** A txtfs target: this checkout's ("txtfs") or, with --base, another's ("base"), each with its own server. */
async function makeTxtfs(
  base: string,
  tree: Tree,
  res: SshfsResources,
  name: "txtfs" | "base" = "txtfs",
  bin = BIN,
  serverBin = bin,
): Promise<Target & { importMs: number; requests: string[]; listingMs: number[] }> {
  const mnt = join(base, `${name}-mnt`);
  /** Every request the server logged, as `METHOD /path` with ids as `:id`. */
  const requests: string[] = [];
  /** The daemon's own figure for listing the account, per mount ("mounted DIR (N ms)"). */
  const listingMs: number[] = [];
  const config = join(base, `${name}-config`);
  const cacheDir = join(base, `${name}-cache`);
  mkdirSync(mnt);
  mkdirSync(config);
  const server = startChild(
    `${name} serve`,
    process.execPath,
    [
      serverBin,
      "serve",
      "--host",
      "127.0.0.1",
      "--port",
      "0",
      "--data",
      join(base, `${name}-data`),
      "--rate-limit",
      "100000000",
    ],
    { cwd: root, env: cleanEnv({ TXTFS_LOG_REQUESTS: "1" }), onStderrLine: (l) => logRequest(l, requests) },
  );
  res.children.push(server);
  const url = (await server.waitForLine(/^txtfs (http:\/\/127\.0\.0\.1:\d+)\b/, 60_000))[1]!;
  const key = (await server.waitForLine(/^export TXTFS_API_KEY=(\S+)$/, 10_000))[1]!;
  log(`${name} serve (pid ${server.pid}) at ${url}`);
  const api = async (method: string, path: string, body: unknown) => {
    const r = await fetch(url + path, {
      method,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(300_000),
    });
    const text = await r.text();
    check(r.status === 200, `${method} ${path} answers 200 (got ${r.status}: ${text.slice(0, 300)})`);
    return JSON.parse(text);
  };

  const ids: string[] = [];
  const t0 = performance.now();
  for (let i = 0; i < tree.paths.length; i += 1000) {
    const files = tree.paths.slice(i, i + 1000).map((path, j) => ({ path, content: tree.contents[i + j] }));
    const body = (await api("POST", "/api/v1/files/import", { files })) as {
      files: { path: string; id: string }[];
      summary: { created: number };
    };
    check(
      body.summary.created === files.length,
      `import created ${files.length} notes (got ${body.summary.created})`,
    );
    const byPath = new Map(body.files.map((f) => [f.path, f.id]));
    for (const f of files) {
      const id = byPath.get(f.path);
      check(id !== undefined, `import answers an id for ${f.path}`);
      ids.push(id);
    }
    if ((i / 1000) % 10 === 9) log(`imported ${fmtInt(i + files.length)} notes`);
  }
  const importMs = performance.now() - t0;
  log(`imported ${fmtInt(tree.paths.length)} notes into ${name} in ${(importMs / 1000).toFixed(1)} s`);

  res.mountpoints.push(mnt);
  let daemon: ChildServer | undefined;
  const unmount = async () => {
    if (!daemon) return;
    const d = daemon;
    daemon = undefined;
    const how = await d.stop(30_000);
    if (how !== "exit code 0") log(`txtfs mount (pid ${d.pid}) ended with ${how}`);
    const i = res.children.indexOf(d);
    if (i >= 0) res.children.splice(i, 1);
    await unmountFuse(mnt);
    check(!isMounted(mnt), `${mnt} is unmounted`);
  };
  return {
    name,
    dir: mnt,
    importMs,
    requests,
    listingMs,
    mount: async () => {
      rmSync(cacheDir, { recursive: true, force: true }); // every mount starts with an empty cache
      mkdirSync(cacheDir);
      const d = startChild(
        "txtfs mount",
        process.execPath,
        [bin, "mount", mnt, "--url", url, "--key", key, "--cache-dir", cacheDir],
        { cwd: root, env: cleanEnv({ TXTFS_CONFIG: config, TXTFS_CACHE: join(config, "cache") }) },
      );
      daemon = d;
      res.children.push(d);
      const m = await d.waitForLine(/^mounted \S+ \((\d+) ms\)/, 300_000);
      listingMs.push(Number(m[1]));
      check(isMounted(mnt), `${mnt} is mounted after "mounted"`);
    },
    unmount,
    pid: () => daemon?.pid,
    change: async (indexes) => {
      for (let k = 0; k < indexes.length; k += 100) {
        const operations = indexes.slice(k, k + 100).map((i) => ({
          op: "file.update",
          target: ids[i],
          body: { content: changed(tree, i) },
        }));
        const body = (await api("POST", "/api/v1/batch", { operations })) as {
          results: { status: number }[];
        };
        check(
          body.results.length === operations.length && body.results.every((r) => r.status === 200),
          "every file.update of a batch answers 200",
        );
      }
    },
  };
}

function writeTree(dir: string, tree: Tree): void {
  mkdirSync(dir, { mode: 0o700 });
  for (const f of tree.folders) mkdirSync(join(dir, f), { recursive: true });
  for (let i = 0; i < tree.paths.length; i++) writeFileSync(join(dir, tree.paths[i]!), tree.contents[i]!);
}

/** The directory behind sshfs itself, read directly: the floor of the read figures. */
function makeLocal(dir: string): Target {
  return {
    name: "local",
    dir,
    mount: async () => {},
    unmount: async () => {},
    pid: () => undefined,
    change: async () => {
      throw new Error("the local directory follows no remote changes");
    },
  };
}

async function makeSshfs(base: string, remote: string, tree: Tree, res: SshfsResources): Promise<Target> {
  const s = await startSshfs({
    base,
    remote,
    mnt: join(base, "sshfs-mnt"),
    res,
    log,
    pollMs: 2,
    mountNow: false,
  }); // mounted, timed, by the first figure
  return {
    name: "sshfs",
    dir: s.mnt,
    mount: s.mount,
    unmount: s.unmount,
    pid: s.pid,
    // What a remote change is for sshfs: the file rewritten on the server's disk.
    change: async (indexes) => {
      for (const i of indexes) writeFileSync(join(remote, tree.paths[i]!), changed(tree, i));
    },
  };
}

function logRequest(line: string, into: string[]): void {
  if (!line.includes('"msg":"incoming request"')) return;
  try {
    const rec = JSON.parse(line) as { req?: { method: string; url: string } };
    if (rec.req)
      into.push(
        `${rec.req.method} ${rec.req.url.split("?")[0]!.replace(/\/(f|d|dv)_[0-9A-Za-z]{20,}/g, "/:id")}`,
      );
  } catch {}
}

/** `N (kind n, kind n)` of a list of requests. */
function requestSummary(requests: string[]): string {
  const kinds = new Map<string, number>();
  for (const r of requests) kinds.set(r, (kinds.get(r) ?? 0) + 1);
  return `${requests.length} (${[...kinds].map(([k, n]) => `${k} ${n}`).join(", ")})`;
}

// ---------------------------------------------------------------------------------------------
// The figures

interface Figure {
  id: string;
  label: string;
  /** Every run's time, per target. */
  ms: Partial<Record<Target["name"], number[]>>;
  /** What was checked, per target. */
  checked: Partial<Record<Target["name"], string>>;
  /** The goal: at most this ratio txtfs/sshfs (undefined: reported only). */
  goalRatio?: number;
}

/** Files and directories an `ls -lR` printed (its "total" and blank lines and headers excluded). */
function countListing(out: string): { files: number; dirs: number } {
  let files = 0;
  let dirs = 0;
  for (const line of out.split("\n")) {
    if (line.startsWith("-")) files++;
    else if (line.startsWith("d")) dirs++;
  }
  return { files, dirs };
}

async function lsLR(t: Target, tree: Tree, what: string): Promise<{ ms: number; checked: string }> {
  const r = await shOk(`${t.name} ${what}`, `cd '${t.dir}' && ls -lR`);
  const { files, dirs } = countListing(r.stdout);
  const groups = tree.folders.length / 20;
  check(files === tree.paths.length, `${t.name} ${what} lists ${tree.paths.length} files (got ${files})`);
  check(
    dirs === tree.folders.length + groups,
    `${t.name} ${what} lists ${tree.folders.length + groups} folders (got ${dirs})`,
  );
  return { ms: r.ms, checked: `${fmtInt(files)} files, ${fmtInt(dirs)} folders` };
}

async function find(t: Target, tree: Tree): Promise<{ ms: number; checked: string }> {
  const r = await shOk(`${t.name} find`, `cd '${t.dir}' && find . -name '*.md' | wc -l`);
  const n = Number(r.stdout.trim());
  check(n === tree.paths.length, `${t.name} find counts ${tree.paths.length} notes (got ${r.stdout.trim()})`);
  return { ms: r.ms, checked: `${fmtInt(n)} notes` };
}

async function grep(t: Target, tree: Tree): Promise<{ ms: number; checked: string }> {
  const r = await sh(`cd '${t.dir}' && grep -r ${GREP_WORD} ${tree.grepDir}`);
  check(r.code === 0, `${t.name} grep exits 0 (got ${r.code}: ${r.stderr.slice(0, 300)})`);
  const lines = r.stdout.split("\n").filter(Boolean);
  const files = new Set(lines.map((l) => l.slice(0, l.indexOf(":"))));
  check(
    lines.length === tree.grepLines,
    `${t.name} grep finds ${tree.grepLines} lines (got ${lines.length})`,
  );
  check(files.size === tree.grepFiles, `${t.name} grep finds ${tree.grepFiles} notes (got ${files.size})`);
  return { ms: r.ms, checked: `${lines.length} lines in ${files.size} of ${tree.grepNotes} notes` };
}

/** Spawn to mounted, plus the first `ls` of the root in a child. */
async function mountAndList(t: Target, tree: Tree): Promise<{ ms: number; checked: string }> {
  const t0 = performance.now();
  await t.mount();
  const r = await shOk(`${t.name} first ls`, `ls '${t.dir}'`);
  const ms = performance.now() - t0;
  const n = r.stdout.split("\n").filter(Boolean).length;
  check(n === tree.folders.length / 20, `${t.name} root lists ${tree.folders.length / 20} groups (got ${n})`);
  return { ms, checked: `root lists ${n} folders` };
}

interface Follow {
  /** From the first change sent to the mount showing the last one. */
  totalMs: number;
  /** From the last change made (acknowledged / written) to the mount showing it. */
  lagMs: number;
  /** Until a stat of every changed note through the mount shows its new size. */
  allMs: number;
  sendMs: number;
}

/**
 * Changes `indexes` behind the mount and times until the mount shows them: a child polls the size of
 * the last-changed note (stat every 10 ms), then every changed note is checked by size.
 */
async function follow(t: Target, tree: Tree, indexes: number[], base: string): Promise<Follow> {
  const last = indexes[indexes.length - 1]!;
  const lastPath = join(t.dir, tree.paths[last]!);
  const want = changed(tree, last).length;
  check(tree.contents[last]!.length !== want, "a change alters the size");
  const watcher = sh(`until [ "$(stat -c %s '${lastPath}')" = ${want} ]; do sleep 0.01; done`, 600_000);
  await sleep(300); // the watcher is polling before the first change
  const t0 = performance.now();
  await t.change(indexes);
  const sent = performance.now();
  const w = await watcher;
  check(w.code === 0, `${t.name}: the watcher of the last change ends (exit ${w.code})`);
  const seen = performance.now();
  const list = join(base, `${t.name}-changed.txt`);
  writeFileSync(list, `${indexes.map((i) => tree.paths[i]).join("\n")}\n`);
  const expected = new Map(indexes.map((i) => [tree.paths[i]!, changed(tree, i).length]));
  const until = seen + 120_000;
  for (;;) {
    const r = await shOk(
      `${t.name} stat changed`,
      `cd '${t.dir}' && xargs -d '\\n' stat -c '%s %n' < '${list}'`,
    );
    let stale = 0;
    for (const line of r.stdout.split("\n").filter(Boolean)) {
      const sp = line.indexOf(" ");
      if (expected.get(line.slice(sp + 1)) !== Number(line.slice(0, sp))) stale++;
    }
    const lines = r.stdout.split("\n").filter(Boolean).length;
    check(lines === indexes.length, `${t.name}: stat of ${indexes.length} changed notes (got ${lines})`);
    if (stale === 0) break;
    check(
      performance.now() < until,
      `${t.name}: ${stale} changes still not visible 120 s after the last was`,
    );
    await sleep(200);
  }
  return {
    totalMs: seen - t0,
    lagMs: seen - sent,
    allMs: performance.now() - t0,
    sendMs: sent - t0,
  };
}

// ---------------------------------------------------------------------------------------------

interface Memory {
  rssKb: number;
  hwmKb: number;
}

async function gitCommit(dir = root): Promise<string> {
  const r = await sh(`cd '${dir}' && git rev-parse --short HEAD && git status --porcelain -- src | wc -l`);
  const [rev, dirty] = r.stdout.trim().split("\n");
  return Number(dirty) ? `${rev} + uncommitted src/ changes` : (rev ?? "unknown");
}

async function main() {
  const settings = settingsFromArgs();
  const machine = machineInfo();
  const started = performance.now();
  const base = mkdtempSync("/var/tmp/txtfs-bench-large-");
  const res: SshfsResources = { children: [], mountpoints: [], createdRunSshd: false };
  const targets: Target[] = [];
  let cleaned: Promise<void> | undefined;
  const cleanup = () =>
    (cleaned ??= (async () => {
      for (const pid of running) {
        try {
          process.kill(-pid, "SIGKILL");
        } catch {}
      }
      for (const t of targets)
        await t.unmount().catch((err: Error) => log(`unmounting ${t.name}: ${err.message}`));
      for (const child of [...res.children].reverse()) {
        const how = await child.stop(15_000).catch((err: Error) => `stop failed: ${err.message}`);
        if (how !== "exit code 0" && how !== "signal SIGTERM")
          log(`${child.name} (pid ${child.pid}) ended with ${how}`);
      }
      for (const m of res.mountpoints) await unmountFuse(m);
      const left = mountsUnder(base);
      if (left.length) log(`NOT removing ${base}: still mounted: ${left.join(", ")}`);
      else rmSync(base, { recursive: true, force: true });
      if (res.createdRunSshd) {
        try {
          rmdirSync("/run/sshd");
        } catch {}
      }
    })());
  cleanUpOnStop(cleanup, settings.timeoutSeconds, log);

  try {
    if (!settings.dropCaches) dropCachesWorks = false;
    const commit = await gitCommit();
    const tree = makeTree(settings);
    log(
      `tree: ${fmtInt(tree.paths.length)} notes in ${fmtInt(tree.folders.length)} folders, ${(tree.bytes / 2 ** 20).toFixed(1)} MiB; grep over ${tree.grepDir}/ (${tree.grepNotes} notes)`,
    );
    const remote = join(base, "sshfs-remote");
    writeTree(remote, tree);
    const local = makeLocal(remote);
    const sshfs = await makeSshfs(base, remote, tree, res);
    targets.push(sshfs);
    const txtfs = await makeTxtfs(base, tree, res);
    targets.push(txtfs);
    const other = settings.base
      ? await makeTxtfs(
          base,
          tree,
          res,
          "base",
          join(settings.base, "bin/txtfs"),
          settings.baseMountOnly ? BIN : undefined,
        )
      : undefined;
    if (other) targets.push(other);

    const figures: Figure[] = [];
    const record = (f: Figure, t: Target, r: { ms: number; checked: string }) => {
      f.ms[t.name] = [...(f.ms[t.name] ?? []), r.ms];
      f.checked[t.name] = r.checked;
      log(`${t.name} ${f.id}: ${Math.round(r.ms)} ms (${r.checked})`);
    };
    const fig = (id: string, label: string, goalRatio?: number): Figure => {
      const f: Figure = { id, label, ms: {}, checked: {}, goalRatio };
      figures.push(f);
      return f;
    };
    const fMount = fig(
      "mount",
      "mount until listable (spawn to mounted + first `ls` of the root), caches dropped",
      0.8,
    );
    const fCold = fig("ls-cold", "`ls -lR` right after the mount (cold)", 0.8);
    const fWarm = fig("ls-warm", "`ls -lR` again (warm)", 0.8);
    const fFindCold = fig("find-cold", "`find . -name '*.md' | wc -l`, fresh mount, caches dropped", 0.8);
    const fFindWarm = fig("find-warm", "`find . -name '*.md' | wc -l` again (warm)", 0.8);
    const fGrepCold = fig(
      "grep-cold",
      `\`grep -r ${GREP_WORD}\` over ${fmtInt(tree.grepNotes)} notes, fresh mount, caches dropped`,
      0.8,
    );
    const fGrepWarm = fig("grep-warm", `\`grep -r ${GREP_WORD}\` again (warm)`, 0.8);
    const memory: Partial<Record<Target["name"], { listed: Memory[]; end?: Memory }>> = {};
    const mem = (t: Target): Memory => {
      const pid = t.pid();
      check(pid !== undefined, `${t.name} is running`);
      return { rssKb: procStatusKb(pid, "VmRSS"), hwmKb: procStatusKb(pid, "VmHWM") };
    };
    // Which target goes first rotates from run to run and phase to phase.
    const all = [local, sshfs, txtfs, ...(other ? [other] : [])];
    const order = (k: number) => all.map((_, i) => all[(i + k) % all.length]!);
    const pair = (k: number) => [
      ...(k % 2 === 0 ? [sshfs, txtfs] : [txtfs, sshfs]),
      ...(other ? [other] : []),
    ];

    const mountRequests: string[] = [];
    for (let run = 0; run < settings.runs; run++) {
      // Mount, cold and warm listing (then the memory with the whole tree listed).
      for (const t of order(run)) {
        await dropCaches();
        const mark = txtfs.requests.length;
        if (t === local) await t.mount();
        else record(fMount, t, await mountAndList(t, tree));
        if (t === txtfs) mountRequests.push(requestSummary(txtfs.requests.slice(mark)));
        record(fCold, t, await lsLR(t, tree, "cold ls -lR"));
        record(fWarm, t, await lsLR(t, tree, "warm ls -lR"));
        if (t !== local) {
          const m = memory[t.name] ?? { listed: [] };
          m.listed.push(mem(t));
          memory[t.name] = m;
        }
        await t.unmount();
      }
      for (const t of order(run + 1)) {
        await dropCaches();
        await t.mount();
        record(fFindCold, t, await find(t, tree));
        record(fFindWarm, t, await find(t, tree));
        await t.unmount();
      }
      for (const t of order(run + 2)) {
        await dropCaches();
        await t.mount();
        record(fGrepCold, t, await grep(t, tree));
        record(fGrepWarm, t, await grep(t, tree));
        await t.unmount();
      }
      log(`run ${run + 1}/${settings.runs} of the read figures done`);
    }
    // Remote changes: spread over the tree, the same notes for both.
    const step = tree.paths.length / settings.changes;
    const indexes = Array.from({ length: settings.changes }, (_, k) => Math.floor(k * step));
    const follows: Partial<Record<Target["name"], Follow>> = {};
    let feedRequests = Number.NaN;
    for (const t of pair(1)) {
      await t.mount();
      await shOk(`${t.name} ls -lR before the changes`, `ls -lR '${t.dir}' >/dev/null`);
      const mark = txtfs.requests.length;
      const f = await follow(t, tree, indexes, base);
      follows[t.name] = f;
      if (t === txtfs)
        feedRequests = txtfs.requests.slice(mark).filter((r) => r.endsWith(" /api/v1/changes")).length;
      log(
        `${t.name} follow: last change visible ${Math.round(f.totalMs)} ms after the first was sent (${Math.round(f.lagMs)} ms after the last), all ${fmtInt(indexes.length)} by ${Math.round(f.allMs)} ms`,
      );
      memory[t.name]!.end = mem(t);
      await t.unmount();
    }

    const report = {
      settings,
      machine,
      commit,
      tree,
      importMs: txtfs.importMs,
      listingMs: txtfs.listingMs,
      mountRequests,
      feedRequests,
      figures,
      follows,
      memory,
      droppedCaches: dropCachesWorks,
      seconds: (performance.now() - started) / 1000,
      base: settings.base
        ? `${settings.base} at ${await gitCommit(settings.base)}${settings.baseMountOnly ? ", its mount only: both served by this checkout's server" : ""}`
        : undefined,
    };
    const md = markdownReport(report);
    mkdirSync(dirname(settings.out), { recursive: true });
    writeFileSync(settings.out, md);
    process.stdout.write(`\n${md}\nMarkdown: ${settings.out}\n`);
  } finally {
    await cleanup();
  }
}

// ---------------------------------------------------------------------------------------------
// Reporting

const fmtTime = (ms: number | undefined) =>
  ms === undefined || !Number.isFinite(ms)
    ? "-"
    : ms >= 1000
      ? `${(ms / 1000).toFixed(2)} s`
      : `${Math.round(ms)} ms`;
const fmtMiB = (kb: number) => `${(kb / 1024).toFixed(1)} MiB`;
const med = (ms: number[] | undefined) => (ms?.length ? median(ms) : Number.NaN);
/** The median of the per-run ratios txtfs/sshfs, or txtfs/another target (runs pair up by index). */
function figureRatio(f: Figure, against: Target["name"] = "sshfs"): number {
  const t = f.ms.txtfs ?? [];
  const s = f.ms[against] ?? [];
  const ratios = t.slice(0, s.length).map((x, i) => x / s[i]!);
  return ratios.length ? median(ratios) : Number.NaN;
}
const peakOf = (m: { listed: Memory[]; end?: Memory }) =>
  Math.max(...m.listed.map((l) => l.hwmKb), m.end?.hwmKb ?? 0);
const ratioOf = (a: number | undefined, b: number | undefined) =>
  a === undefined || b === undefined || b === 0 ? Number.NaN : a / b;

function markdownReport(r: {
  settings: Settings;
  machine: ReturnType<typeof machineInfo>;
  commit: string;
  tree: Tree;
  importMs: number;
  listingMs: number[];
  mountRequests: string[];
  feedRequests: number;
  figures: Figure[];
  follows: Partial<Record<Target["name"], Follow>>;
  memory: Partial<Record<Target["name"], { listed: Memory[]; end?: Memory }>>;
  droppedCaches: boolean;
  seconds: number;
  base: string | undefined;
}): string {
  const { tree, machine: m } = r;
  const rows = r.figures.map((f) => {
    const ratio = figureRatio(f);
    const checks = new Set(Object.values(f.checked));
    return [
      f.label,
      fmtTime(med(f.ms.local)),
      fmtTime(med(f.ms.sshfs)),
      fmtTime(med(f.ms.txtfs)),
      Number.isFinite(ratio) ? `${ratio.toFixed(2)}x` : "-",
      f.goalRatio === undefined ? "-" : ratio <= f.goalRatio ? "met" : "NOT met",
      `${[...checks].join(" / ")}${checks.size === 1 && Object.keys(f.checked).length > 1 ? " (each)" : ""}`,
    ];
  });
  const fs = r.follows.sshfs;
  const ft = r.follows.txtfs;
  const followRows = [
    [
      "making the changes (txtfs: batch requests acknowledged; sshfs: files written)",
      fmtTime(fs?.sendMs),
      fmtTime(ft?.sendMs),
    ],
    [
      "last change visible through the mount, from the first change",
      fmtTime(fs?.totalMs),
      fmtTime(ft?.totalMs),
    ],
    ["last change visible, from the last change made", fmtTime(fs?.lagMs), fmtTime(ft?.lagMs)],
    ["every change visible (stat of each), from the first change", fmtTime(fs?.allMs), fmtTime(ft?.allMs)],
    ["change-feed requests of the mount meanwhile", "-", fmtInt(r.feedRequests)],
  ];
  const memRows = (["sshfs", "txtfs"] as const).map((n) => {
    const x = r.memory[n];
    return [
      n === "txtfs" ? "txtfs mount daemon" : "sshfs process",
      x ? x.listed.map((l) => fmtMiB(l.rssKb)).join(", ") : "-",
      x?.end ? fmtMiB(x.end.rssKb) : "-",
      x ? fmtMiB(peakOf(x)) : "-",
    ];
  });
  const mountMs = med(r.figures.find((f) => f.id === "mount")?.ms.txtfs);
  const followRatio = ratioOf(ft?.totalMs, fs?.totalMs);
  const txtMem = r.memory.txtfs;
  const peakKb = txtMem ? peakOf(txtMem) : Number.NaN;
  const memGoalKb = 250 * 1024;
  const scaled =
    tree.paths.length === 100_000
      ? ""
      : ` (the goal is for 100,000 notes; this run has ${fmtInt(tree.paths.length)})`;
  const slower = r.figures.filter((f) => f.goalRatio !== undefined && !(figureRatio(f) <= f.goalRatio));
  const verdict = (x: number) =>
    !Number.isFinite(x) ? "-" : x <= 1.05 ? "within 5%" : `${Math.round((x - 1) * 100)}% slower`;
  const baseRows = r.figures.map((f) => {
    const x = figureRatio(f, "base");
    return [
      f.label,
      fmtTime(med(f.ms.base)),
      fmtTime(med(f.ms.txtfs)),
      Number.isFinite(x) ? `${x.toFixed(2)}x` : "-",
      verdict(x),
    ];
  });
  const fb = r.follows.base;
  const followVsBase = ratioOf(ft?.totalMs, fb?.totalMs);
  baseRows.push([
    "following the remote changes: last change visible from the first sent",
    fmtTime(fb?.totalMs),
    fmtTime(ft?.totalMs),
    Number.isFinite(followVsBase) ? `${followVsBase.toFixed(2)}x` : "-",
    verdict(followVsBase),
  ]);
  const baseMem = r.memory.base;
  const baseSection = r.base
    ? [
        `### Against the base (${r.base})`,
        "",
        "The other checkout's server and mount, on the same tree, interleaved with the targets above; this/base is the median of per-run ratios (the remote changes once each).",
        "",
        markdownTable(["figure", "base", "this checkout", "this/base", "within 5%?"], baseRows, [
          "l",
          "r",
          "r",
          "r",
          "l",
        ]),
        "",
        `Peak daemon RSS: base ${baseMem ? fmtMiB(peakOf(baseMem)) : "-"}, this checkout ${txtMem ? fmtMiB(peakOf(txtMem)) : "-"}.`,
        "",
      ]
    : [];
  return [
    `# The mount at scale: ${fmtInt(tree.paths.length)} notes, txtfs beside sshfs`,
    "",
    `\`npm run bench:mount-large -- --notes ${tree.paths.length} --folders ${tree.folders.length}\` on ${m.date} at ${r.commit}: ${m.cpus} cpus (${m.cpuModel}), ${m.memory}, Node ${m.node}, ${m.os}, load at start ${m.load}; ${Math.round(r.seconds)} s in all.`,
    "",
    `Tree: ${fmtInt(tree.paths.length)} notes (${(tree.bytes / 2 ** 20).toFixed(1)} MiB) in ${fmtInt(tree.folders.length)} folders (\`gGGG/fFFFFF\`, 20 per group, ${fmtInt(tree.folders.length / 20)} groups). txtfs: a real \`txtfs serve\` (SQLite) on 127.0.0.1, the notes imported through \`POST /api/v1/files/import\` (1,000 per request: ${(r.importMs / 1000).toFixed(1)} s), a \`txtfs mount\` with an empty cache dir at every mount. sshfs: the same tree in a local directory, Debian sshfs (default options) over a throwaway OpenSSH sshd on 127.0.0.1. sshfs also beside the directory it serves (local: the floor). ${r.settings.runs} interleaved run${r.settings.runs === 1 ? "" : "s"} of the read figures (which target goes first rotates), times are medians, txtfs/sshfs the median of per-run ratios; the remote changes once; ${r.droppedCaches ? "`sync; echo 3 > /proc/sys/vm/drop_caches` before every cold figure" : "the page cache could NOT be dropped (cold figures read the page cache)"}. Every figure is a program in a child process, its result checked (last column).`,
    "",
    markdownTable(["figure", "local", "sshfs", "txtfs", "txtfs/sshfs", "goal ≤ 0.8x", "checked"], rows, [
      "l",
      "r",
      "r",
      "r",
      "r",
      "l",
      "l",
    ]),
    "",
    `txtfs mount: the daemon reports listing the account in ${r.listingMs.map((n) => `${fmtInt(n)} ms`).join(", ")} (every mount, in order; the rest of "mount until listable" is Node and the daemon starting, the FUSE mount and the first \`ls\`). Requests from spawn to listable, each run: ${r.mountRequests.join("; ")}.`,
    "",
    ...baseSection,
    `### Following ${fmtInt(r.settings.changes)} remote changes`,
    "",
    `The same ${fmtInt(r.settings.changes)} notes (spread over the tree) each get a line added, on a fresh mount after one \`ls -lR\`. txtfs: \`file.update\` operations through \`POST /api/v1/batch\`, 100 per request, one request after the other; the mount learns them from the change feed. sshfs: the files rewritten in the sshfs server's directory; what sshfs shows then depends on its default caches (attributes and directory entries kept for 20 s), so its figure measures how long sshfs serves stale sizes, not a feed. A child process polls \`stat -c %s\` of the last-changed note every 10 ms; then a \`stat\` of every changed note through the mount must show its new size (polled until it does).`,
    "",
    markdownTable(["measure", "sshfs", "txtfs"], followRows, ["l", "r", "r"]),
    "",
    "### Memory",
    "",
    "VmRSS and VmHWM (peak) from /proc of the process serving the mount: the txtfs mount daemon (`bin/txtfs mount` re-execs itself with execve, the pid stays) and sshfs (not counting the sshd and sftp-server on the other side).",
    "",
    markdownTable(
      [
        "process",
        "RSS after cold + warm `ls -lR` (each run)",
        `RSS after following ${fmtInt(r.settings.changes)} changes`,
        "peak (VmHWM)",
      ],
      memRows,
      ["l", "r", "r", "r"],
    ),
    "",
    "### Goals (issue 19)",
    "",
    `- mounted and listable in under 3 s: ${fmtTime(mountMs)} -> ${mountMs < 3000 ? "met" : "NOT met"}`,
    `- every figure at most 0.8x sshfs: ${slower.length ? `NOT met (${slower.map((f) => `${f.id} ${figureRatio(f).toFixed(2)}x`).join(", ")})` : "met"}`,
    `- following the changes: ${Number.isFinite(followRatio) ? `${followRatio.toFixed(2)}x sshfs` : "-"} (last change visible from the first sent; see above for what the sshfs figure measures)`,
    `- daemon RSS at most 250 MiB with 100,000 notes: peak ${fmtMiB(peakKb)} -> ${peakKb <= memGoalKb ? "met" : "NOT met"}${scaled}`,
    "",
  ].join("\n");
}

await main().catch((err: Error) => {
  process.stderr.write(`bench:mount-large failed: ${err.stack ?? err.message}\n`);
  process.exitCode = 1;
});

// The mount benchmark: the same shell workloads on a local directory (the physical limit), an sshfs
// mount over a throwaway loopback sshd, and a txtfs mount of a real `txtfs serve`, interleaved run by
// run; medians of the runs.
//
//   node scripts/bench/mount.ts            (npm run bench:mount) 5 runs, 2,000 notes
//   node scripts/bench/mount.ts --quick    smoke run: 1 run, 500 notes
//
// Every workload runs in a child `bash -c` (this process never touches a FUSE mount), and every result
// is checked (listings against the expected tree, checksums, grep hits; after each run the backing
// store of each target — the directories, the service's content hashes — against a model of what it
// must hold). A failed check exits non-zero. Requests per workload come from the server's own request
// log (TXTFS_LOG_REQUESTS=1). Results go to stdout and to bench-results/mount.md.
import { execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import {
  appendFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { requestSync } from "../../src/lib/mountControl.ts";
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
  textTable,
} from "./lib.ts";
import { isMounted, mountsUnder, startSshfs, unmountFuse } from "./sshfs.ts";

const root = resolve(import.meta.dirname, "../..");
const BIN = join(root, "bin/txtfs");
const log = (msg: string) => process.stderr.write(`[bench:mount] ${msg}\n`);

// ---------------------------------------------------------------------------------------------
// Settings

const HELP = `usage: node scripts/bench/mount.ts [options]
  --quick              smoke run: 1 run, 500 notes, smaller write workloads, 2,000-file memory check
  --runs <n>           interleaved runs; times are their medians (default 5, --quick 1)
  --out <file>         Markdown report (default bench-results/mount.md)
  --no-drop-caches     never write /proc/sys/vm/drop_caches (it empties the page cache of the whole machine)
  --trace              mount txtfs with --trace and count FUSE operations per workload (slows txtfs down)
  --logs <dir>         keep the stderr of the txtfs server and mount daemons there (for diagnosis)
  --timeout <s>        watchdog: give up (and clean up) after this many seconds (default 1080, --quick 420)
  --only <ids>         run only these workloads (comma-separated ids: ls-cold, append-cold, unmount, ...)
  --no-memory          skip the daemon memory phase
  --base <checkout>    also run another checkout's txtfs (server and mount) as a fourth target,
                       interleaved with the others, and report this one against it per workload
  --base-mount-only    the base target's server is this checkout's: only its mount is the base's,
                       so the ratio is the mount's own (the service's changes left out)`;

interface Settings {
  quick: boolean;
  runs: number;
  out: string;
  dropCaches: boolean;
  trace: boolean;
  logs: string | undefined;
  timeoutSeconds: number;
  only: Set<string> | undefined;
  memory: boolean;
  corpus: CorpusShape;
  newNotes: number;
  appends: number;
  seds: number;
  moves: number;
  vims: number;
  memFiles: number;
  memFolders: number;
  memCacheSize: string;
  memCacheBytes: number;
  /** Another checkout whose bin/txtfs runs as the "base" target. */
  base: string | undefined;
  /** The base target's server is this checkout's; only its mount is the base's. */
  baseMountOnly: boolean;
}

function settingsFromArgs(): Settings {
  const { values } = parseArgs({
    options: {
      quick: { type: "boolean", default: false },
      runs: { type: "string" },
      out: { type: "string" },
      "no-drop-caches": { type: "boolean", default: false },
      trace: { type: "boolean", default: false },
      logs: { type: "string" },
      timeout: { type: "string" },
      only: { type: "string" },
      "no-memory": { type: "boolean", default: false },
      base: { type: "string" },
      "base-mount-only": { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    process.exit(0);
  }
  const num = (name: string, given: string | undefined, fallback: number, min: number) =>
    numberOption(name, given, fallback, min, true);
  const quick = values.quick;
  return {
    quick,
    runs: num("runs", values.runs, quick ? 1 : 5, 1),
    out: resolve(values.out ?? join(root, "bench-results/mount.md")),
    dropCaches: !values["no-drop-caches"],
    trace: values.trace,
    logs: values.logs ? resolve(values.logs) : undefined,
    timeoutSeconds: num("timeout", values.timeout, quick ? 420 : 1080, 30),
    only: values.only ? new Set(values.only.split(",").map((id) => id.trim())) : undefined,
    memory: !values["no-memory"],
    corpus: quick
      ? { notes: 500, folders: 30, rootNotes: 2, bigNotes: 3, seed: 20261121 }
      : { notes: 2000, folders: 120, rootNotes: 3, bigNotes: 12, seed: 20261121 },
    newNotes: quick ? 100 : 500,
    appends: quick ? 100 : 500,
    seds: quick ? 50 : 200,
    moves: quick ? 50 : 200,
    vims: quick ? 10 : 50,
    memFiles: quick ? 2000 : 10_000,
    memFolders: quick ? 20 : 100,
    memCacheSize: quick ? "4M" : "32M",
    memCacheBytes: (quick ? 4 : 32) * 1024 * 1024,
    base: values.base ? resolve(values.base) : undefined,
    baseMountOnly: values["base-mount-only"],
  };
}

// ---------------------------------------------------------------------------------------------
// The corpus: deterministic (seeded) notes in nested folders, ASCII so bytes = characters.

interface CorpusShape {
  notes: number;
  folders: number;
  rootNotes: number;
  bigNotes: number;
  seed: number;
}

/** mulberry32: small, fast, and the same sequence on every machine. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = (
  "the of and to in is that for it as with was on be by at this from or have an are not but " +
  "note notes idea draft plan meeting project garden river mountain coffee morning evening " +
  "quartz amber cedar harbor lantern meadow orchard pepper saffron thistle willow copper " +
  "follow review design write read build test deploy measure listen remember forget travel " +
  "kitchen recipe bread butter onion garlic lemon basil tomato olive salt flour sugar " +
  "book chapter page author story poem letter journal diary list todo done later soon today " +
  "server client folder file mount cache request network latency memory disk kernel shell " +
  "question answer reason result method model system process value change version history " +
  "north south east west winter spring summer autumn rain snow wind cloud sun moon star"
).split(" ");
const TOP_FOLDERS = ["projects", "journal", "work", "reading", "recipes", "travel", "ideas", "archive"];
/** The word `grep -r` looks for: not in WORDS, sprinkled into some lines. */
const GREP_WORD = "zephyr";

function pick<T>(rand: () => number, items: readonly T[]): T {
  return items[Math.floor(rand() * items.length)]!;
}

/** About `size` bytes of text, whole lines, ending with a newline (so vim's fixeol changes nothing). */
function text(rand: () => number, size: number, markdown: boolean): string {
  const lines: string[] = [];
  let length = 0;
  const push = (line: string) => {
    lines.push(line);
    length += line.length + 1;
  };
  if (markdown) {
    push(`# ${pick(rand, WORDS)} ${pick(rand, WORDS)} ${pick(rand, WORDS)}`);
    push("");
  }
  while (length < size) {
    const r = rand();
    if (markdown && r < 0.04) {
      push("");
      push(`## ${pick(rand, WORDS)} ${pick(rand, WORDS)}`);
      continue;
    }
    const words: string[] = [];
    const n = 6 + Math.floor(rand() * 12);
    for (let i = 0; i < n; i++) words.push(rand() < 0.004 ? GREP_WORD : pick(rand, WORDS));
    push(`${markdown && r < 0.25 ? "- " : ""}${words.join(" ")}`);
  }
  return `${lines.join("\n")}\n`;
}

interface Corpus {
  files: Map<string, string>;
  dirs: string[];
}

function makeCorpus(shape: CorpusShape): Corpus {
  const rand = rng(shape.seed);
  const dirs = [...TOP_FOLDERS.slice(0, Math.min(TOP_FOLDERS.length, shape.folders))];
  while (dirs.length < shape.folders) {
    const parent = pick(rand, dirs);
    if (parent.split("/").length >= 5) continue; // at most 5 levels
    dirs.push(`${parent}/${pick(rand, WORDS)}-${dirs.length}`);
  }
  const files = new Map<string, string>();
  const bigEvery = Math.floor(shape.notes / Math.max(1, shape.bigNotes));
  for (let i = 0; i < shape.notes; i++) {
    // Every folder gets a note (the import makes folders from paths), then they land anywhere.
    const dir =
      i < shape.rootNotes
        ? ""
        : i - shape.rootNotes < dirs.length
          ? dirs[i - shape.rootNotes]!
          : pick(rand, dirs);
    const markdown = rand() >= 0.3;
    const name = `${pick(rand, WORDS)}-${pick(rand, WORDS)}-${i}.${markdown ? "md" : "txt"}`;
    const big = shape.bigNotes > 0 && i % bigEvery === bigEvery - 1 && i / bigEvery < shape.bigNotes;
    const size = big
      ? 64 * 1024 + Math.floor(rand() * 192 * 1024)
      : 1024 + Math.floor(15 * 1024 * rand() ** 2);
    files.set(dir ? `${dir}/${name}` : name, text(rand, size, markdown));
  }
  return { files, dirs };
}

// ---------------------------------------------------------------------------------------------
// The model: what a target must hold. Each target has its own, changed in step with its workloads.

class Model {
  readonly files = new Map<string, string>();
  readonly dirs = new Set<string>();

  static of(corpus: Corpus): Model {
    const m = new Model();
    for (const d of corpus.dirs) m.mkdirp(d);
    for (const [p, c] of corpus.files) m.write(p, c);
    return m;
  }

  mkdirp(dir: string): void {
    const parts = dir.split("/");
    for (let i = 1; i <= parts.length; i++) this.dirs.add(parts.slice(0, i).join("/"));
  }

  write(path: string, content: string): void {
    const slash = path.lastIndexOf("/");
    if (slash > 0) this.mkdirp(path.slice(0, slash));
    this.files.set(path, content);
  }

  content(path: string): string {
    const c = this.files.get(path);
    if (c === undefined) throw new Error(`model: no file ${path}`);
    return c;
  }

  remove(path: string): void {
    if (this.dirs.has(path)) {
      for (const d of [...this.dirs]) if (d === path || d.startsWith(`${path}/`)) this.dirs.delete(d);
      for (const f of [...this.files.keys()]) if (f.startsWith(`${path}/`)) this.files.delete(f);
    } else this.files.delete(path);
  }

  move(path: string, destDir: string): string {
    const to = `${destDir}/${path.slice(path.lastIndexOf("/") + 1)}`;
    if (this.files.has(to)) throw new Error(`model: ${to} exists`);
    this.files.set(to, this.content(path));
    this.files.delete(path);
    return to;
  }

  /** Paths in `LC_ALL=C sort` order (ASCII: JS string order is byte order). */
  sortedFiles(): string[] {
    return [...this.files.keys()].sort();
  }

  bytes(): number {
    let n = 0;
    for (const c of this.files.values()) n += c.length;
    return n;
  }
}

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

function sha256Of(contents: Iterable<string>): string {
  const h = createHash("sha256");
  for (const c of contents) h.update(c);
  return h.digest("hex");
}

function countLines(content: string, word: string): number {
  let n = 0;
  for (const line of content.split("\n")) if (line.includes(word)) n++;
  return n;
}

/** A different but reproducible subset for each run and workload (the same on every target). */
function sample<T>(items: T[], n: number, seed: number): T[] {
  const rand = rng(seed);
  const a = [...items];
  const k = Math.min(n, a.length);
  for (let i = 0; i < k; i++) {
    const j = i + Math.floor(rand() * (a.length - i));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a.slice(0, k);
}

// ---------------------------------------------------------------------------------------------
// Child processes: every filesystem action runs in `bash -c`, in its own process group.

interface ShResult {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  ms: number;
}

const running = new Set<number>();

function sh(
  script: string,
  opts: { env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<ShResult> {
  return new Promise((resolveSh, reject) => {
    const t0 = performance.now();
    const child = spawn("bash", ["-c", script], {
      cwd: "/",
      env: { ...process.env, LC_ALL: "C", ...opts.env },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true, // its own process group, so a timeout ends grep/xargs/vim too
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
    }, opts.timeoutMs ?? 180_000);
    child.on("close", (code, signal) => {
      const ms = performance.now() - t0;
      clearTimeout(timer);
      running.delete(pid);
      resolveSh({
        code,
        signal,
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
        ms,
      });
    });
  });
}

async function shOk(what: string, script: string, env?: Record<string, string>, timeoutMs?: number) {
  const r = await sh(script, { env, timeoutMs });
  if (r.code !== 0) {
    throw new Error(
      `${what}: exit ${r.code ?? r.signal} after ${Math.round(r.ms)} ms\n${r.stderr.slice(-2000)}${r.stdout.slice(-500)}`,
    );
  }
  return r;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function check(ok: boolean, what: string): asserts ok {
  if (!ok) throw new Error(`check failed: ${what}`);
}

/** Lines of a file tree on disk (a plain directory, never a FUSE mount) as a Model. */
function readTree(dir: string): Model {
  const m = new Model();
  const walk = (rel: string) => {
    for (const e of readdirSync(join(dir, rel), { withFileTypes: true })) {
      const p = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) {
        m.dirs.add(p);
        walk(p);
      } else m.files.set(p, readFileSync(join(dir, p), "latin1"));
    }
  };
  walk("");
  return m;
}

/** Every difference between what a target holds and what it must hold (empty when equal). */
function compareTrees(
  what: string,
  expected: Model,
  actual: { dirs: Set<string>; hashes: Map<string, string> },
): void {
  const problems: string[] = [];
  for (const d of expected.dirs) if (!actual.dirs.has(d)) problems.push(`missing folder ${d}`);
  for (const d of actual.dirs) if (!expected.dirs.has(d)) problems.push(`unexpected folder ${d}`);
  for (const [p, c] of expected.files) {
    const h = actual.hashes.get(p);
    if (h === undefined) problems.push(`missing file ${p}`);
    else if (h !== sha256(c)) problems.push(`wrong content in ${p}`);
  }
  for (const p of actual.hashes.keys()) if (!expected.files.has(p)) problems.push(`unexpected file ${p}`);
  if (problems.length) {
    throw new Error(
      `check failed: ${what} differs from the expected tree in ${problems.length} places:\n  ${problems.slice(0, 20).join("\n  ")}`,
    );
  }
}

// ---------------------------------------------------------------------------------------------
// The service side: a small API client and the request log.

interface ApiReply {
  status: number;
  text: string;
}

function apiClient(base: string, key: string) {
  return async (method: string, path: string, json?: unknown): Promise<ApiReply> => {
    const res = await fetch(base + path, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(json === undefined ? {} : { "content-type": "application/json" }),
      },
      body: json === undefined ? undefined : JSON.stringify(json),
      signal: AbortSignal.timeout(120_000),
    });
    return { status: res.status, text: await res.text() };
  };
}

type Api = ReturnType<typeof apiClient>;

async function importCorpus(api: Api, files: Map<string, string>): Promise<number> {
  const items = [...files].map(([path, content]) => ({ path, content }));
  const t0 = performance.now();
  for (let i = 0; i < items.length; i += 1000) {
    const batch = items.slice(i, i + 1000);
    const res = await api("POST", "/api/v1/files/import", { files: batch });
    check(
      res.status === 200,
      `import of files ${i}..${i + batch.length - 1} answers 200 (got ${res.status}: ${res.text.slice(0, 300)})`,
    );
    const body = JSON.parse(res.text) as { summary: { created: number } };
    check(
      body.summary.created === batch.length,
      `import created ${batch.length} files (got ${body.summary.created})`,
    );
  }
  return performance.now() - t0;
}

/** The service's view of the account: folders by path, content hashes by path. */
async function serviceTree(api: Api): Promise<{ dirs: Set<string>; hashes: Map<string, string> }> {
  const res = await api("GET", "/api/me/files");
  check(res.status === 200, `flat listing answers 200 (got ${res.status})`);
  const body = JSON.parse(res.text) as {
    files: { name: string; folderId: string | null; contentHash: string }[];
    folders: { id: string; name: string; parentFolderId: string | null }[];
  };
  const byId = new Map(body.folders.map((f) => [f.id, f]));
  const pathOf = (id: string | null): string => {
    if (id === null) return "";
    const f = byId.get(id);
    if (!f) throw new Error(`check failed: folder ${id} missing from the listing`);
    const parent = pathOf(f.parentFolderId);
    return parent ? `${parent}/${f.name}` : f.name;
  };
  const dirs = new Set(body.folders.map((f) => pathOf(f.id)));
  const hashes = new Map<string, string>();
  for (const f of body.files) {
    const dir = pathOf(f.folderId);
    const p = dir ? `${dir}/${f.name}` : f.name;
    if (hashes.has(p)) throw new Error(`check failed: the service holds two notes at ${p}`);
    hashes.set(p, f.contentHash);
  }
  return { dirs, hashes };
}

interface RequestCounts {
  total: number;
  feed: number;
  byKind: Map<string, number>;
  /** Sum of the server's own response times (Fastify's responseTime), feed excluded. */
  serverMs: number;
}

/** Counts the requests a `txtfs serve` logs (TXTFS_LOG_REQUESTS=1), by kind; the feed apart. */
class RequestLog {
  private total = 0;
  private feed = 0;
  private serverMs = 0;
  private readonly byKind = new Map<string, number>();
  private readonly feedIds = new Set<string>();
  private inFlight = 0;
  private lastAt = 0;

  onLine = (line: string): void => {
    if (!line.includes('"msg":"incoming request"') && !line.includes('"msg":"request completed"')) return;
    let rec: { reqId?: string; msg?: string; req?: { method: string; url: string }; responseTime?: number };
    try {
      rec = JSON.parse(line);
    } catch {
      return;
    }
    const id = rec.reqId ?? "";
    if (rec.msg === "incoming request" && rec.req) {
      const path = rec.req.url.split("?")[0]!;
      if (path === "/api/v1/changes") {
        this.feed++;
        this.feedIds.add(id);
        return;
      }
      const kind = `${rec.req.method} ${path.replace(/\/[fd]_[0-9A-Za-z]{20,}/g, "/:id")}`;
      this.byKind.set(kind, (this.byKind.get(kind) ?? 0) + 1);
      this.total++;
      this.inFlight++;
      this.lastAt = performance.now();
    } else if (rec.msg === "request completed") {
      if (this.feedIds.delete(id)) return;
      this.serverMs += rec.responseTime ?? 0;
      this.inFlight = Math.max(0, this.inFlight - 1);
      this.lastAt = performance.now();
    }
  };

  snapshot(): RequestCounts {
    return { total: this.total, feed: this.feed, byKind: new Map(this.byKind), serverMs: this.serverMs };
  }

  static diff(a: RequestCounts, b: RequestCounts): RequestCounts {
    const byKind = new Map<string, number>();
    for (const [k, v] of b.byKind) {
      const d = v - (a.byKind.get(k) ?? 0);
      if (d) byKind.set(k, d);
    }
    return { total: b.total - a.total, feed: b.feed - a.feed, byKind, serverMs: b.serverMs - a.serverMs };
  }

  /** Waits until no request (but the feed's long-poll) is in flight and none came for `idleMs`. */
  async quiet(idleMs = 400, maxMs = 15_000): Promise<void> {
    const until = performance.now() + maxMs;
    while (performance.now() < until) {
      if (this.inFlight === 0 && performance.now() - this.lastAt >= idleMs) return;
      await sleep(50);
    }
    log(`warning: the server was still busy after ${maxMs} ms; counting anyway`);
  }
}

/** Counts the FUSE operations a `txtfs mount --trace` logs, by op. */
class OpLog {
  private readonly byOp = new Map<string, number>();
  onLine = (line: string): void => {
    const m = /"op":"(\w+)".*"msg":"fuse op"/.exec(line);
    if (m) this.byOp.set(m[1]!, (this.byOp.get(m[1]!) ?? 0) + 1);
  };
  snapshot(): Map<string, number> {
    return new Map(this.byOp);
  }
  static diff(a: Map<string, number>, b: Map<string, number>): Map<string, number> {
    const out = new Map<string, number>();
    for (const [k, v] of b) if (v - (a.get(k) ?? 0)) out.set(k, v - (a.get(k) ?? 0));
    return out;
  }
}

// ---------------------------------------------------------------------------------------------
// Targets

type TargetName = "local" | "sshfs" | "txtfs" | "base";

interface Target {
  name: TargetName;
  /** Where the workloads run. */
  dir: string;
  model: Model;
  /** A fresh view for a cold run: a new daemon with an empty cache (mounts), nothing (local). */
  fresh(): Promise<void>;
  /** The backing store compared with the model. */
  backing(): Promise<{ dirs: Set<string>; hashes: Map<string, string> }>;
  requests?: RequestLog;
  ops?: OpLog;
  /** Waits until what the workload wrote is on the service (txtfs: write-behind delivery). */
  settle?(): Promise<void>;
  stop(): Promise<void>;
  /**
   * Bash that unmounts `$DIR` as a user would and returns once the daemon is gone (its writes
   * flushed), with `$PID` the daemon's pid; `remount` mounts again afterwards.
   */
  unmountScript: string;
  pid(): number | undefined;
  remount(): Promise<void>;
}

/** Unmount as fstab and systemd do, then wait for the daemon to exit (it flushes first). */
const UMOUNT_AND_WAIT = 'umount "$DIR" && while kill -0 "$PID" 2>/dev/null; do sleep 0.002; done';

function treeHashes(dir: string) {
  const m = readTree(dir);
  return { dirs: m.dirs, hashes: new Map([...m.files].map(([p, c]) => [p, sha256(c)])) };
}

function writeCorpus(dir: string, corpus: Corpus): void {
  for (const d of corpus.dirs) mkdirSync(join(dir, d), { recursive: true });
  for (const [p, c] of corpus.files) writeFileSync(join(dir, p), c);
}

/** Where --logs keeps the children's stderr (unset: nowhere). */
let logDir: string | undefined;

/** A stderr line handler that also appends the line to `<logDir>/<name>.log` with --logs. */
function tee(name: string, next?: (line: string) => void): ((line: string) => void) | undefined {
  if (!logDir) return next;
  const file = join(logDir, `${name.replace(/[^\w.-]+/g, "-")}.log`);
  return (line) => {
    appendFileSync(file, `${line}\n`);
    next?.(line);
  };
}

interface Resources {
  children: ChildServer[];
  mountpoints: string[];
  createdRunSshd: boolean;
}

/** A child that has ended is no longer ours to stop. */
function forget(res: Resources, child: ChildServer): void {
  const i = res.children.indexOf(child);
  if (i >= 0) res.children.splice(i, 1);
}

async function startTxtfsServer(
  res: Resources,
  name: string,
  data: string,
  requests?: RequestLog,
  bin = BIN,
): Promise<{ server: ChildServer; url: string; key: string; api: Api }> {
  const server = startChild(
    name,
    process.execPath,
    [bin, "serve", "--host", "127.0.0.1", "--port", "0", "--data", data, "--rate-limit", "100000000"],
    {
      cwd: root,
      env: cleanEnv(requests ? { TXTFS_LOG_REQUESTS: "1" } : {}),
      onStderrLine: tee(name, requests?.onLine),
    },
  );
  res.children.push(server);
  const url = (await server.waitForLine(/^txtfs (http:\/\/127\.0\.0\.1:\d+)\b/, 30_000))[1]!;
  const key = (await server.waitForLine(/^export TXTFS_API_KEY=(\S+)$/, 10_000))[1]!;
  log(`${name} (pid ${server.pid}) at ${url}`);
  return { server, url, key, api: apiClient(url, key) };
}

interface TxtfsMount {
  daemon: ChildServer;
  mountMs: number;
}

async function startTxtfsMount(
  res: Resources,
  opts: {
    mnt: string;
    url: string;
    key: string;
    cacheDir: string;
    config: string;
    cacheSize?: string;
    trace?: boolean;
    onStderrLine?: (line: string) => void;
    bin?: string;
  },
): Promise<TxtfsMount> {
  rmSync(opts.cacheDir, { recursive: true, force: true });
  mkdirSync(opts.cacheDir, { recursive: true });
  const args = [
    opts.bin ?? BIN,
    "mount",
    opts.mnt,
    "--url",
    opts.url,
    "--key",
    opts.key,
    "--cache-dir",
    opts.cacheDir,
  ];
  if (opts.cacheSize) args.push("--cache-size", opts.cacheSize);
  if (opts.trace) args.push("--trace");
  const daemon = startChild("txtfs mount", process.execPath, args, {
    cwd: root,
    env: cleanEnv({ TXTFS_CONFIG: opts.config, TXTFS_CACHE: join(opts.config, "cache") }),
    onStderrLine: tee("txtfs mount", opts.onStderrLine),
  });
  res.children.push(daemon);
  const m = await daemon.waitForLine(/^mounted \S+ \((\d+) ms\)/, 120_000);
  check(isMounted(opts.mnt), `${opts.mnt} is mounted after "mounted"`);
  return { daemon, mountMs: Number(m[1]) };
}

async function stopTxtfsMount(res: Resources, m: TxtfsMount, mnt: string): Promise<void> {
  const how = await m.daemon.stop(15_000);
  if (how !== "exit code 0") log(`txtfs mount (pid ${m.daemon.pid}) ended with ${how}`);
  forget(res, m.daemon);
  await unmountFuse(mnt);
  check(!isMounted(mnt), `${mnt} is unmounted`);
}

async function makeLocal(base: string, corpus: Corpus): Promise<Target> {
  const dir = join(base, "local");
  mkdirSync(dir);
  writeCorpus(dir, corpus);
  return {
    name: "local",
    dir,
    model: Model.of(corpus),
    fresh: async () => {},
    backing: async () => treeHashes(dir),
    stop: async () => {},
    // A local directory has nothing to unmount: what stands for it is writing its data to disk.
    unmountScript: 'sync -f "$DIR"',
    pid: () => undefined,
    remount: async () => {},
  };
}

/** The sshfs target: the corpus in a plain directory, served by a throwaway loopback sshd (sshfs.ts). */
async function makeSshfs(base: string, corpus: Corpus, res: Resources): Promise<Target> {
  const remote = join(base, "sshfs-remote");
  mkdirSync(remote, { mode: 0o700 });
  writeCorpus(remote, corpus);
  const s = await startSshfs({ base, remote, mnt: join(base, "sshfs-mnt"), res, log });
  return {
    name: "sshfs",
    dir: s.mnt,
    model: Model.of(corpus),
    fresh: async () => {
      await s.unmount();
      await s.mount();
    },
    backing: async () => treeHashes(remote),
    stop: s.unmount,
    unmountScript: UMOUNT_AND_WAIT,
    pid: s.pid,
    remount: async () => {
      await s.unmount(); // the daemon is gone already: forget it
      await s.mount();
    },
  };
}

/** A txtfs target: this checkout's ("txtfs") or, with --base, another's ("base"), each with its own server. */
async function makeTxtfs(
  base: string,
  corpus: Corpus,
  res: Resources,
  settings: Settings,
  name: "txtfs" | "base" = "txtfs",
): Promise<Target> {
  const bin = name === "base" ? join(settings.base!, "bin/txtfs") : BIN;
  const requests = new RequestLog();
  const ops = settings.trace ? new OpLog() : undefined;
  const mnt = join(base, `${name}-mnt`);
  const config = join(base, `${name}-config`);
  const cacheDir = join(base, `${name}-cache`);
  mkdirSync(mnt);
  mkdirSync(config);
  const { url, key, api } = await startTxtfsServer(
    res,
    `${name} serve`,
    join(base, `${name}-data`),
    requests,
    settings.baseMountOnly ? BIN : bin,
  );
  const ms = await importCorpus(api, corpus.files);
  log(`imported ${fmtInt(corpus.files.size)} notes into txtfs in ${Math.round(ms)} ms`);
  res.mountpoints.push(mnt);
  let mount: TxtfsMount | undefined;
  const start = async () => {
    mount = await startTxtfsMount(res, {
      mnt,
      url,
      key,
      cacheDir,
      config,
      trace: settings.trace,
      onStderrLine: ops?.onLine,
      bin,
    });
    await requests.quiet(200);
  };
  const stop = async () => {
    if (!mount) return;
    const m = mount;
    mount = undefined;
    await stopTxtfsMount(res, m, mnt);
  };
  await start();
  return {
    name,
    dir: mnt,
    model: Model.of(corpus),
    requests,
    ops,
    fresh: async () => {
      await stop();
      await start();
    },
    backing: () => serviceTree(api),
    settle: async () => {
      const { pending } = await requestSync(cacheDir);
      check(pending === 0, `txtfs sync: ${pending} saves still pending`);
    },
    stop,
    unmountScript: UMOUNT_AND_WAIT,
    pid: () => mount?.daemon.pid,
    remount: async () => {
      if (mount) {
        const how = await mount.daemon.stop(15_000); // exited already: its exit status
        check(how === "exit code 0", `txtfs mount exited after umount with ${how}`);
        forget(res, mount.daemon);
        mount = undefined;
      }
      await start();
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Workloads

interface Ctx {
  target: Target;
  run: number;
  model: Model;
  lists: string;
  src1m: string;
  settings: Settings;
}

interface Prepared {
  env: Record<string, string>;
  /** Model changes the workload makes, applied once it succeeded. */
  apply?: () => void;
  /** Paths (after apply) whose content to read back through the target, untimed, and compare. */
  readBack?: string[];
}

interface Workload {
  id: string;
  label: string;
  cold: boolean;
  /** What "per item" counts for the request ratio, and how many there are. */
  items: (s: Settings, m: Model) => { n: number; unit: string };
  prepare?: (ctx: Ctx) => Promise<Prepared> | Prepared;
  /** The script unmounts the target (`$UNMOUNT`); it is mounted again right after. */
  unmounts?: boolean;
  script: string;
  check: (out: string, ctx: Ctx) => void;
}

function writeList(ctx: Ctx, id: string, paths: string[]): string {
  const file = join(ctx.lists, `${ctx.target.name}-r${ctx.run}-${id}.txt`);
  writeFileSync(file, paths.length ? `${paths.join("\n")}\n` : "");
  return file;
}

/** Notes the benchmark's own write workloads made in this run are left out of the samples. */
const corpusFiles = (m: Model) => m.sortedFiles().filter((p) => !/^(new|big|unmount)-r/.test(p));

function checkListing(out: string, ctx: Ctx): void {
  let files = 0;
  let dirs = 0;
  let bytes = 0;
  for (const line of out.split("\n")) {
    if (line.startsWith("-")) {
      files++;
      bytes += Number(line.split(/\s+/)[4]);
    } else if (line.startsWith("d")) dirs++;
  }
  const m = ctx.model;
  check(
    files === m.files.size && dirs === m.dirs.size && bytes === m.bytes(),
    `ls -lR on ${ctx.target.name} shows ${files} files, ${dirs} folders, ${bytes} bytes; expected ${m.files.size}, ${m.dirs.size}, ${m.bytes()}`,
  );
}

function checkFind(out: string, ctx: { target: { name: string }; model: Model }): void {
  const got = out.split("\n").filter(Boolean);
  const want = new Set([
    ".",
    ...[...ctx.model.dirs].map((d) => `./${d}`),
    ...[...ctx.model.files.keys()].map((f) => `./${f}`),
  ]);
  const extra = got.filter((p) => !want.has(p));
  const seen = new Set(got);
  const missing = [...want].filter((p) => !seen.has(p));
  check(
    extra.length === 0 && missing.length === 0 && got.length === want.size,
    `find . on ${ctx.target.name}: ${got.length} entries, expected ${want.size}; missing ${missing.slice(0, 5).join(", ") || "none"}; unexpected ${extra.slice(0, 5).join(", ") || "none"}`,
  );
}

function checkGrep(out: string, ctx: Ctx): void {
  const got = new Map<string, number>();
  for (const line of out.split("\n")) {
    if (!line) continue;
    const path = line.slice(2, line.indexOf(":")); // "./path:text"
    got.set(path, (got.get(path) ?? 0) + 1);
  }
  const want = new Map<string, number>();
  for (const [p, c] of ctx.model.files) {
    const n = countLines(c, GREP_WORD);
    if (n) want.set(p, n);
  }
  const wrong = [...new Set([...got.keys(), ...want.keys()])].filter((p) => got.get(p) !== want.get(p));
  const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
  check(
    wrong.length === 0,
    `grep -r ${GREP_WORD} on ${ctx.target.name}: ${sum(got)} hits in ${got.size} files, expected ${sum(want)} in ${want.size}; first differences: ${wrong.slice(0, 5).join(", ")}`,
  );
}

function checkCat(out: string, ctx: Ctx): void {
  const want = sha256Of(ctx.model.sortedFiles().map((p) => ctx.model.content(p)));
  check(
    out.trim().split(/\s+/)[0] === want,
    `sha256 of every file on ${ctx.target.name}: ${out.trim()} != ${want}`,
  );
}

const perFile = (_s: Settings, m: Model) => ({ n: m.files.size, unit: "file" });
const perFolder = (_s: Settings, m: Model) => ({ n: m.dirs.size + 1, unit: "folder" }); // + the root

const LS = 'cd "$DIR" && ls -lR';
const FIND = 'cd "$DIR" && find .';
const GREP = `cd "$DIR" && grep -r ${GREP_WORD} .`;

/** Read workloads: a cold run on a fresh view, then (where it applies) a warm one right after. */
const READ_GROUPS: Workload[][] = [
  [
    { id: "ls-cold", label: "ls -lR (cold)", cold: true, items: perFile, script: LS, check: checkListing },
    { id: "ls-warm", label: "ls -lR (warm)", cold: false, items: perFile, script: LS, check: checkListing },
  ],
  [
    { id: "find-cold", label: "find (cold)", cold: true, items: perFile, script: FIND, check: checkFind },
    { id: "find-warm", label: "find (warm)", cold: false, items: perFile, script: FIND, check: checkFind },
  ],
  [
    {
      id: "cat-cold",
      label: "cat every file (cold)",
      cold: true,
      items: perFolder,
      script: 'cd "$DIR" && find . -type f -print0 | sort -z | xargs -0 cat | sha256sum',
      check: checkCat,
    },
  ],
  [
    {
      id: "grep-cold",
      label: "grep -r (cold)",
      cold: true,
      items: perFolder,
      script: GREP,
      check: checkGrep,
    },
    {
      id: "grep-warm",
      label: "grep -r (warm)",
      cold: false,
      items: perFolder,
      script: GREP,
      check: checkGrep,
    },
  ],
];

/** Write workloads, one after the other on the warm mount. */
const WRITE_WORKLOADS: Workload[] = [
  {
    id: "write-new",
    label: "write new notes (shell loop)",
    cold: false,
    items: (s) => ({ n: s.newNotes, unit: "note" }),
    prepare: async (ctx) => {
      const dir = `new-r${ctx.run}`;
      await shOk(`mkdir ${dir}`, 'cd "$DIR" && mkdir "$D"', { DIR: ctx.target.dir, D: dir });
      ctx.model.mkdirp(dir);
      const paths = Array.from(
        { length: ctx.settings.newNotes },
        (_, i) => `${dir}/note-${String(i).padStart(4, "0")}.${i % 4 === 3 ? "txt" : "md"}`,
      );
      const body = text(rng(ctx.run), 1024, false);
      return {
        env: { LIST: writeList(ctx, "write-new", paths), BODY: body },
        apply: () => {
          for (const p of paths) ctx.model.write(p, `# ${p}\n\n${body}\n`);
        },
        readBack: paths,
      };
    },
    script: `cd "$DIR" && while IFS= read -r p; do printf '# %s\\n\\n%s\\n' "$p" "$BODY" > "$p"; done < "$LIST"`,
    check: () => {},
  },
  {
    id: "append",
    label: "append >> to notes",
    cold: false,
    items: (s) => ({ n: s.appends, unit: "note" }),
    prepare: (ctx) => {
      const paths = sample(corpusFiles(ctx.model), ctx.settings.appends, 1000 + ctx.run);
      return {
        env: { LIST: writeList(ctx, "append", paths), RUN: String(ctx.run) },
        apply: () => {
          for (const p of paths)
            ctx.model.files.set(p, `${ctx.model.content(p)}appended in run ${ctx.run}\n`);
        },
        readBack: paths,
      };
    },
    script: 'cd "$DIR" && while IFS= read -r p; do echo "appended in run $RUN" >> "$p"; done < "$LIST"',
    check: () => {},
  },
  {
    id: "sed",
    label: "sed -i on notes",
    cold: false,
    items: (s) => ({ n: s.seds, unit: "note" }),
    prepare: (ctx) => {
      const paths = sample(corpusFiles(ctx.model), ctx.settings.seds, 2000 + ctx.run);
      return {
        env: { LIST: writeList(ctx, "sed", paths), RUN: String(ctx.run) },
        apply: () => {
          for (const p of paths)
            ctx.model.files.set(p, ctx.model.content(p).replaceAll("quartz", `quartz-r${ctx.run}`));
        },
        readBack: paths,
      };
    },
    script: `cd "$DIR" && xargs -a "$LIST" -d '\\n' sed -i "s/quartz/quartz-r$RUN/g"`,
    check: () => {},
  },
  {
    id: "mv",
    label: "mv notes to another folder",
    cold: false,
    items: (s) => ({ n: s.moves, unit: "note" }),
    prepare: (ctx) => {
      const dirs = [...ctx.model.dirs].filter((d) => !/^(new|unmount)-r/.test(d)).sort();
      const dest = dirs[(ctx.run * 37) % dirs.length]!;
      const candidates = corpusFiles(ctx.model).filter((p) => p.slice(0, p.lastIndexOf("/")) !== dest);
      const paths = sample(candidates, ctx.settings.moves, 3000 + ctx.run);
      const moved = paths.map((p) => `${dest}/${p.slice(p.lastIndexOf("/") + 1)}`);
      return {
        env: { LIST: writeList(ctx, "mv", paths), DEST: dest },
        apply: () => {
          for (const p of paths) ctx.model.move(p, dest);
        },
        readBack: moved,
      };
    },
    script: `cd "$DIR" && xargs -a "$LIST" -d '\\n' mv -t "$DEST" --`,
    check: () => {},
  },
  {
    id: "mkdir-rm",
    label: "mkdir -p deep tree (121 dirs) + rm -rf",
    cold: false,
    items: () => ({ n: 121, unit: "folder" }),
    prepare: (ctx) => ({ env: { RUN: String(ctx.run) } }),
    script:
      'cd "$DIR" && mkdir -p "deep-r$RUN"/l1-{1..3}/l2-{1..3}/l3-{1..3}/l4/l5/l6 && find "deep-r$RUN" -type d | wc -l && ' +
      'rm -rf "deep-r$RUN" && if [ -e "deep-r$RUN" ]; then echo still-there; else echo gone; fi',
    check: (out, ctx) =>
      check(
        out.split(/\s+/).filter(Boolean).join(" ") === "121 gone",
        `mkdir -p/rm -rf on ${ctx.target.name}: ${out}`,
      ),
  },
  {
    id: "vim",
    label: "vim -es edits",
    cold: false,
    items: (s) => ({ n: s.vims, unit: "edit" }),
    prepare: (ctx) => {
      const paths = sample(corpusFiles(ctx.model), ctx.settings.vims, 4000 + ctx.run);
      return {
        env: { LIST: writeList(ctx, "vim", paths), RUN: String(ctx.run) },
        apply: () => {
          for (const p of paths)
            ctx.model.files.set(p, ctx.model.content(p).replaceAll("amber", `amber-vim${ctx.run}`));
        },
        readBack: paths,
      };
    },
    // vim's defaults for a user: a swap file beside the note, a write-backup, backupcopy=auto.
    script:
      'cd "$DIR" && while IFS= read -r p; do ' +
      "vim -N -es -u NONE -i NONE --cmd 'set swapfile directory=. writebackup backupcopy=auto' " +
      '-c "%s/amber/amber-vim$RUN/ge" -c wq "$p" </dev/null || { echo "vim failed on $p" >&2; exit 1; }; ' +
      'done < "$LIST"',
    check: () => {},
  },
  {
    id: "big",
    label: "1 MB note: write + read back",
    cold: false,
    items: () => ({ n: 1, unit: "note" }),
    prepare: (ctx) => {
      const path = `big-r${ctx.run}.md`;
      const content = readFileSync(ctx.src1m, "latin1");
      return {
        env: { SRC: ctx.src1m, RUN: String(ctx.run) },
        apply: () => ctx.model.write(path, content),
      };
    },
    script: 'cd "$DIR" && cat "$SRC" > "big-r$RUN.md" && cat "big-r$RUN.md" | sha256sum',
    check: (out, ctx) => {
      const want = sha256(readFileSync(ctx.src1m, "latin1"));
      check(
        out.split(/\s+/)[0] === want,
        `read back of the 1 MB note on ${ctx.target.name}: ${out.trim()} != ${want}`,
      );
    },
  },
  // Last: each starts a new daemon (an empty cache), which would make the workloads after it cold.
  {
    id: "append-cold",
    label: "append >> to notes not read since the mount",
    cold: true,
    items: (s) => ({ n: s.appends, unit: "note" }),
    prepare: (ctx) => {
      const paths = sample(corpusFiles(ctx.model), ctx.settings.appends, 5000 + ctx.run);
      return {
        env: { LIST: writeList(ctx, "append-cold", paths), RUN: String(ctx.run) },
        apply: () => {
          for (const p of paths)
            ctx.model.files.set(p, `${ctx.model.content(p)}appended cold in run ${ctx.run}\n`);
        },
        readBack: paths,
      };
    },
    script: 'cd "$DIR" && while IFS= read -r p; do echo "appended cold in run $RUN" >> "$p"; done < "$LIST"',
    check: () => {},
  },
  {
    id: "unmount",
    label: "unmount right after writes (flush included)",
    cold: false,
    unmounts: true,
    items: (s) => ({ n: s.newNotes, unit: "note" }),
    prepare: async (ctx) => {
      // The writes (untimed) right before the unmount: txtfs still holds them in its write-behind window.
      const dir = `unmount-r${ctx.run}`;
      const paths = Array.from({ length: ctx.settings.newNotes }, (_, i) => `${dir}/u-${i}.md`);
      await shOk(
        "writes before the unmount",
        `cd "$DIR" && mkdir "$D" && for i in $(seq 0 $((N - 1))); do echo "note $i of run $RUN" > "$D/u-$i.md"; done`,
        { DIR: ctx.target.dir, D: dir, N: String(paths.length), RUN: String(ctx.run) },
      );
      ctx.model.mkdirp(dir);
      return {
        env: {},
        apply: () => {
          for (const [i, p] of paths.entries()) ctx.model.write(p, `note ${i} of run ${ctx.run}\n`);
        },
        readBack: paths,
      };
    },
    script: 'cd / && eval "$UNMOUNT"',
    check: () => {},
  },
];

const ALL_WORKLOADS: Workload[][] = [...READ_GROUPS, ...WRITE_WORKLOADS.map((w) => [w])];
/** The workloads of this run (`--only` picks some). */
let WORKLOADS = ALL_WORKLOADS;

// ---------------------------------------------------------------------------------------------
// Running

interface Sample {
  ms: number;
  /** After the workload returned, until its writes were on the service (txtfs, untimed in `ms`). */
  settleMs?: number;
  requests?: RequestCounts;
  ops?: Map<string, number>;
}

interface Results {
  /** `${workload} ${target}` -> one sample per run */
  samples: Map<string, Sample[]>;
  remounts: { target: TargetName; ms: number }[];
}

async function dropCaches(settings: Settings): Promise<void> {
  if (!settings.dropCaches) return;
  await shOk("drop caches", "sync && echo 3 > /proc/sys/vm/drop_caches", undefined, 60_000);
  // The programs the workloads run are loaded again, so "cold" means cold data, not cold binaries.
  await shOk(
    "warm the tools",
    "ls / >/dev/null; find / -maxdepth 0 >/dev/null; grep -q x /dev/null; cat /dev/null; sort /dev/null; xargs true </dev/null; sha256sum /dev/null >/dev/null; sed -n p /dev/null; vim --version >/dev/null",
  );
}

async function runOne(w: Workload, t: Target, ctx: Ctx, settings: Settings, results: Results): Promise<void> {
  const prepared: Prepared = (await w.prepare?.(ctx)) ?? { env: {} };
  if (w.cold) {
    await dropCaches(settings);
    const t0 = performance.now();
    await t.fresh();
    results.remounts.push({ target: t.name, ms: performance.now() - t0 });
  }
  await t.requests?.quiet(w.unmounts ? 0 : 200); // an unmount comes right after the writes
  const before = t.requests?.snapshot();
  const opsBefore = t.ops?.snapshot();
  const unmountEnv: Record<string, string> = w.unmounts
    ? { UNMOUNT: t.unmountScript, PID: String(t.pid() ?? "") }
    : {};
  const r = await sh(w.script, {
    env: { DIR: t.dir, ...unmountEnv, ...prepared.env },
    timeoutMs: 300_000,
  });
  if (r.code !== 0) {
    throw new Error(
      `${w.label} on ${t.name} (run ${ctx.run}) failed: exit ${r.code ?? r.signal} after ${Math.round(r.ms)} ms\n${r.stderr.slice(-2000)}`,
    );
  }
  if (w.unmounts) await t.remount();
  let settleMs: number | undefined;
  if (t.settle) {
    const s0 = performance.now();
    await t.settle();
    settleMs = performance.now() - s0;
  }
  let requests: RequestCounts | undefined;
  if (t.requests && before) {
    await t.requests.quiet();
    requests = RequestLog.diff(before, t.requests.snapshot());
  }
  const ops = t.ops && opsBefore ? OpLog.diff(opsBefore, t.ops.snapshot()) : undefined;
  prepared.apply?.();
  w.check(r.stdout, ctx);
  if (prepared.readBack) {
    const list = writeList(ctx, `${w.id}-readback`, prepared.readBack);
    const rb = await shOk(
      `read back after ${w.label} on ${t.name}`,
      `cd "$DIR" && xargs -a "$LIST" -d '\\n' cat | sha256sum`,
      {
        DIR: t.dir,
        LIST: list,
      },
    );
    const want = sha256Of(prepared.readBack.map((p) => ctx.model.content(p)));
    check(
      rb.stdout.split(/\s+/)[0] === want,
      `read back after ${w.label} on ${t.name}: content differs from what was written`,
    );
  }
  const key = `${w.id} ${t.name}`;
  results.samples.set(key, [...(results.samples.get(key) ?? []), { ms: r.ms, settleMs, requests, ops }]);
  const reqNote = requests ? `, ${requests.total} requests (+${requests.feed} feed)` : "";
  log(
    `run ${ctx.run}  ${t.name.padEnd(5)}  ${w.label.padEnd(40)} ${r.ms.toFixed(1).padStart(9)} ms${reqNote}`,
  );
}

/** The end of a run: remove what the write workloads made, then compare each backing store with its model. */
async function endRun(t: Target, run: number): Promise<void> {
  await shOk(
    `clean up run ${run} on ${t.name}`,
    'cd "$DIR" && rm -rf "new-r$RUN" "big-r$RUN.md" "unmount-r$RUN"',
    { DIR: t.dir, RUN: String(run) },
  );
  t.model.remove(`unmount-r${run}`);
  t.model.remove(`new-r${run}`);
  t.model.remove(`big-r${run}.md`);
  await t.settle?.(); // txtfs: the deletes are write-behind too
  await t.requests?.quiet();
  compareTrees(`${t.name} after run ${run}`, t.model, await t.backing());
  // Nothing local-only left behind in the mount either (vim swap files, sed temp files): find sees what ls sees.
  const r = await shOk(`find on ${t.name}`, 'cd "$DIR" && find .', { DIR: t.dir });
  checkFind(r.stdout, { target: t, model: t.model });
}

// ---------------------------------------------------------------------------------------------
// Daemon memory: 10,000 notes mounted, the content cache filled to its bound.

interface MemoryReport {
  files: number;
  bytes: number;
  cacheBound: number;
  mountMs: number;
  rssAfterMountKb: number;
  rssAfterReadKb: number;
  peakRssKb: number;
  maxCacheBytes: number;
  finalCacheBytes: number;
  finalCacheEntries: number;
  readMs: number;
  requests: number;
  samples: number;
}

function procStatusKb(pid: number, field: "VmRSS" | "VmHWM"): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) : Number.NaN;
}

function mountRecordStats(config: string, pid: number): Record<string, number> | undefined {
  try {
    return JSON.parse(readFileSync(join(config, "mounts", `${pid}.json`), "utf8")).stats;
  } catch {
    return undefined;
  }
}

async function memoryPhase(base: string, settings: Settings, res: Resources): Promise<MemoryReport> {
  const corpus = makeCorpus({
    notes: settings.memFiles,
    folders: settings.memFolders,
    rootNotes: 0,
    bigNotes: 0,
    seed: 777,
  });
  const model = Model.of(corpus);
  const { api, url, key } = await startTxtfsServer(res, "txtfs serve (memory)", join(base, "mem-data"));
  const importMs = await importCorpus(api, corpus.files);
  log(
    `memory: imported ${fmtInt(corpus.files.size)} notes (${(model.bytes() / 2 ** 20).toFixed(1)} MiB) in ${Math.round(importMs)} ms`,
  );
  const mnt = join(base, "mem-mnt");
  const config = join(base, "mem-config");
  mkdirSync(mnt);
  mkdirSync(config);
  res.mountpoints.push(mnt);
  await dropCaches(settings);
  const mount = await startTxtfsMount(res, {
    mnt,
    url,
    key,
    cacheDir: join(base, "mem-cache"),
    config,
    cacheSize: settings.memCacheSize,
  });
  try {
    await sleep(2500); // the listing's garbage collected, the registry written
    // The daemon's own pid (the launcher may run it as a child): from its mount record.
    const pid =
      (
        JSON.parse(
          (
            await shOk("txtfs status --json", `'${process.execPath}' '${BIN}' status --json`, {
              TXTFS_CONFIG: config,
            })
          ).stdout,
        ) as {
          pid: number;
          mountpoint: string;
        }[]
      ).find((r) => r.mountpoint === mnt)?.pid ?? mount.daemon.pid;
    const rssAfterMountKb = procStatusKb(pid, "VmRSS");
    let maxCacheBytes = 0;
    let samples = 0;
    const poll = setInterval(() => {
      const s = mountRecordStats(config, pid);
      if (s) {
        samples++;
        maxCacheBytes = Math.max(maxCacheBytes, s.cacheBytes ?? 0);
      }
    }, 250);
    let r: ShResult;
    try {
      r = await shOk(
        "memory: read every note",
        'cd "$DIR" && find . -type f -print0 | sort -z | xargs -0 cat | sha256sum',
        { DIR: mnt },
        300_000,
      );
      await sleep(2500); // one more registry refresh (every 2 s)
    } finally {
      clearInterval(poll);
    }
    const want = sha256Of(model.sortedFiles().map((p) => model.content(p)));
    check(r.stdout.split(/\s+/)[0] === want, "memory: sha256 of every note read through the mount");
    const rssAfterReadKb = procStatusKb(pid, "VmRSS");
    const peakRssKb = procStatusKb(pid, "VmHWM");
    const status = await shOk("txtfs status --json", `'${process.execPath}' '${BIN}' status --json`, {
      TXTFS_CONFIG: config,
    });
    const rec = (JSON.parse(status.stdout) as { pid: number; stats: Record<string, number> }[]).find(
      (m) => m.pid === pid,
    );
    check(rec !== undefined, "txtfs status --json lists the memory mount");
    const stats = rec.stats;
    maxCacheBytes = Math.max(maxCacheBytes, stats.cacheBytes ?? 0);
    check(samples > 0, "the mount registry was readable during the read");
    check(
      maxCacheBytes <= settings.memCacheBytes,
      `content cache stayed within --cache-size ${settings.memCacheSize}: max seen ${maxCacheBytes} > ${settings.memCacheBytes}`,
    );
    check(
      stats.notes === settings.memFiles,
      `the mount lists ${settings.memFiles} notes (status says ${stats.notes})`,
    );
    return {
      files: corpus.files.size,
      bytes: model.bytes(),
      cacheBound: settings.memCacheBytes,
      mountMs: mount.mountMs,
      rssAfterMountKb,
      rssAfterReadKb,
      peakRssKb,
      maxCacheBytes,
      finalCacheBytes: stats.cacheBytes ?? Number.NaN,
      finalCacheEntries: stats.cacheEntries ?? Number.NaN,
      readMs: r.ms,
      requests: stats.requests ?? Number.NaN,
      samples,
    };
  } finally {
    await stopTxtfsMount(res, mount, mnt);
  }
}

// ---------------------------------------------------------------------------------------------
// Main

interface Report {
  settings: Settings;
  commit: string;
  machine: ReturnType<typeof machineInfo>;
  corpus: { files: number; dirs: number; bytes: number; md: number; txt: number; largest: number };
  results: Results;
  memory: MemoryReport | undefined;
  droppedCaches: boolean;
  seconds: number;
}

async function main() {
  const settings = settingsFromArgs();
  if (settings.only) {
    const known = new Set(ALL_WORKLOADS.flat().map((w) => w.id));
    const unknown = [...settings.only].filter((id) => !known.has(id));
    if (unknown.length) {
      process.stderr.write(
        `--only: unknown workload ${unknown.join(", ")} (known: ${[...known].join(", ")})\n`,
      );
      process.exit(2);
    }
    WORKLOADS = ALL_WORKLOADS.map((g) => g.filter((w) => settings.only!.has(w.id))).filter((g) => g.length);
  }
  const machine = machineInfo();
  const started = performance.now();
  if (settings.logs) {
    mkdirSync(settings.logs, { recursive: true });
    logDir = settings.logs;
  }
  const base = mkdtempSync("/var/tmp/txtfs-bench-mount-"); // not /tmp: vim skips backups there
  const res: Resources = { children: [], mountpoints: [], createdRunSshd: false };
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
        await t.stop().catch((err: Error) => log(`stopping ${t.name}: ${err.message}`));
      for (const child of [...res.children].reverse()) {
        const how = await child.stop(10_000).catch((err: Error) => `stop failed: ${err.message}`);
        if (how !== "exit code 0" && how !== "signal SIGTERM")
          log(`${child.name} (pid ${child.pid}) ended with ${how}`);
      }
      for (const m of res.mountpoints) await unmountFuse(m).catch(() => {});
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
    const report = await run(settings, machine, base, res, targets, started);
    const md = markdownReport(report);
    mkdirSync(dirname(settings.out), { recursive: true });
    writeFileSync(settings.out, md);
    process.stdout.write(`\n${textReport(report)}\nMarkdown: ${settings.out}\n`);
  } finally {
    await cleanup();
  }
}

/** The programs the benchmark drives; the sshfs baseline is installed with apt-get when missing. */
async function ensureTools(): Promise<void> {
  const missing = async () =>
    (
      await Promise.all(
        ["sshfs", "/usr/sbin/sshd", "ssh-keygen", "vim", "fusermount"].map(async (tool) =>
          (await sh(`command -v ${tool}`)).code === 0 ? undefined : tool,
        ),
      )
    ).filter((t) => t !== undefined);
  if (
    (await missing()).some((t) => ["sshfs", "/usr/sbin/sshd", "ssh-keygen"].includes(t)) &&
    process.getuid?.() === 0
  ) {
    log("installing sshfs and openssh-server (apt-get)");
    await shOk(
      "apt-get install sshfs openssh-server",
      "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends sshfs openssh-server >/dev/null",
      undefined,
      600_000,
    );
  }
  const still = await missing();
  if (still.length)
    throw new Error(
      `missing ${still.join(", ")}: run scripts/setup (it installs sshfs, openssh-server, vim, fuse3)`,
    );
}

/**
 * The commit the sources are at, whether src/ differs from it (others may be editing it), and a
 * fingerprint of src/ itself (commits that leave src/ alone do not change it).
 */
async function gitState(): Promise<{ label: string; src: string }> {
  const git = await sh(
    `cd '${root}' && git rev-parse --short HEAD && git rev-parse HEAD:src && git diff HEAD -- src | sha1sum && git diff HEAD --stat -- src | tail -1`,
  );
  if (git.code !== 0) return { label: "unknown", src: "unknown" };
  const [rev, tree, diffHash, diffStat] = git.stdout.trim().split("\n");
  return {
    label: diffStat ? `${rev} + uncommitted src/ changes (${diffStat.trim()})` : rev!,
    src: `${tree} ${diffHash}`,
  };
}

async function run(
  settings: Settings,
  machine: ReturnType<typeof machineInfo>,
  base: string,
  res: Resources,
  targets: Target[],
  started: number,
): Promise<Report> {
  await ensureTools();

  const commitAtStart = await gitState();
  let droppedCaches = false;
  if (settings.dropCaches) {
    const r = await sh("sync && echo 3 > /proc/sys/vm/drop_caches", { timeoutMs: 60_000 });
    droppedCaches = r.code === 0;
    if (!droppedCaches) {
      log("cannot write /proc/sys/vm/drop_caches: cold runs of the local directory read from the page cache");
      settings.dropCaches = false;
    }
  }

  const corpus = makeCorpus(settings.corpus);
  const model0 = Model.of(corpus);
  const sizes = [...corpus.files.values()].map((c) => c.length);
  log(
    `corpus: ${fmtInt(corpus.files.size)} notes in ${model0.dirs.size} folders, ${(model0.bytes() / 2 ** 20).toFixed(1)} MiB, largest ${fmtInt(Math.max(...sizes) / 1024)} KB`,
  );
  const lists = join(base, "lists");
  mkdirSync(lists);
  const src1m = join(base, "big-1m.md");
  writeFileSync(src1m, `${text(rng(99), 1024 * 1024, true).slice(0, 1024 * 1024 - 1)}\n`);

  targets.push(await makeLocal(base, corpus));
  targets.push(await makeSshfs(base, corpus, res));
  targets.push(await makeTxtfs(base, corpus, res, settings));
  if (settings.base) targets.push(await makeTxtfs(base, corpus, res, settings, "base"));
  for (const t of targets) compareTrees(`${t.name} after loading`, t.model, await t.backing());

  const results: Results = { samples: new Map(), remounts: [] };
  for (let runNo = 1; runNo <= settings.runs; runNo++) {
    for (const [g, group] of WORKLOADS.entries()) {
      // Rotate which target goes first, so none gets a systematic slot.
      const order = targets.map((_, i) => targets[(i + runNo + g) % targets.length]!);
      for (const t of order) {
        const ctx: Ctx = { target: t, run: runNo, model: t.model, lists, src1m, settings };
        for (const w of group) await runOne(w, t, ctx, settings, results);
      }
    }
    for (const t of targets) await endRun(t, runNo);
    log(
      `run ${runNo}/${settings.runs} done and checked (${Math.round((performance.now() - started) / 1000)} s so far)`,
    );
  }

  // Free the main targets before the memory phase, so it measures alone.
  for (const t of targets.splice(0)) await t.stop();
  const memory = settings.memory ? await memoryPhase(base, settings, res) : undefined;

  const commitAtEnd = await gitState();
  const commit =
    commitAtEnd.src === commitAtStart.src
      ? commitAtStart.label
      : `${commitAtStart.label} (src/ changed during the run: now ${commitAtEnd.label})`;
  const sizesMd = [...corpus.files.keys()].filter((p) => p.endsWith(".md")).length;
  return {
    settings,
    commit,
    machine,
    corpus: {
      files: corpus.files.size,
      dirs: model0.dirs.size,
      bytes: model0.bytes(),
      md: sizesMd,
      txt: corpus.files.size - sizesMd,
      largest: Math.max(...sizes),
    },
    results,
    memory,
    droppedCaches,
    seconds: (performance.now() - started) / 1000,
  };
}

// ---------------------------------------------------------------------------------------------
// Reporting

const fmtTime = (ms: number) =>
  !Number.isFinite(ms)
    ? "-"
    : ms >= 10_000
      ? `${(ms / 1000).toFixed(1)} s`
      : ms >= 1000
        ? `${(ms / 1000).toFixed(2)} s`
        : `${ms.toFixed(ms < 10 ? 1 : 0)} ms`;
const fmtRatio = (r: number) =>
  !Number.isFinite(r) ? "-" : r >= 10 ? `${r.toFixed(0)}x` : `${r.toFixed(r < 1 ? 2 : 1)}x`;
const fmtNum = (n: number) =>
  !Number.isFinite(n) ? "-" : Number.isInteger(n) ? fmtInt(n) : n.toFixed(n < 1 ? 3 : 2);
const fmtMiB = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

interface Summary {
  head: string[];
  align: ("l" | "r")[];
  rows: string[][];
  reqHead: string[];
  reqAlign: ("l" | "r")[];
  reqRows: string[][];
  memRows: string[][];
  goals: string[];
  notes: string[];
  slower: string[];
  /** With --base: this checkout against the other, per workload. */
  baseRows: string[][] | undefined;
}

function summarize(report: Report): Summary {
  const { results, settings } = report;
  const all = WORKLOADS.flat();
  const samplesOf = (w: Workload, t: TargetName) => results.samples.get(`${w.id} ${t}`) ?? [];
  const med = (w: Workload, t: TargetName) => median(samplesOf(w, t).map((s) => s.ms));
  const ratio = (w: Workload, a: TargetName, b: TargetName) => {
    const x = samplesOf(w, a);
    const y = samplesOf(w, b);
    return median(x.map((s, i) => s.ms / y[i]!.ms));
  };
  const model = Model.of(makeCorpus(settings.corpus));
  const slower: string[] = [];
  const rows = all.map((w) => {
    const vsSsh = ratio(w, "txtfs", "sshfs");
    if (vsSsh > 1) slower.push(w.label);
    const reqs = samplesOf(w, "txtfs").map((s) => s.requests?.total ?? Number.NaN);
    const delivered = samplesOf(w, "txtfs").map((s) => s.ms + (s.settleMs ?? 0));
    const sshfs = samplesOf(w, "sshfs");
    const deliveredVsSsh = median(delivered.map((d, i) => d / sshfs[i]!.ms));
    return [
      w.label,
      fmtTime(med(w, "local")),
      fmtTime(med(w, "sshfs")),
      fmtTime(med(w, "txtfs")),
      fmtRatio(ratio(w, "sshfs", "local")),
      fmtRatio(ratio(w, "txtfs", "local")),
      Number.isFinite(vsSsh) ? `${fmtRatio(vsSsh)} ${vsSsh <= 1 ? "faster" : "SLOWER"}` : "-",
      fmtTime(median(delivered)),
      Number.isFinite(deliveredVsSsh) ? fmtRatio(deliveredVsSsh) : "-",
      fmtNum(median(reqs)),
    ];
  });

  const reqRows: string[][] = [];
  const goals: string[] = [];
  const goalFor: Record<string, { limit: number; text: string }> = {
    "ls-cold": { limit: 0, text: "0 per file" },
    "ls-warm": { limit: 0, text: "0 per file" },
    "find-cold": { limit: 0, text: "0 per file" },
    "find-warm": { limit: 0, text: "0 per file" },
    "grep-cold": { limit: 1, text: "<= 1 per folder" },
    "write-new": { limit: 1, text: "1 per note" },
  };
  for (const w of all) {
    const ss = samplesOf(w, "txtfs");
    const total = median(ss.map((s) => s.requests?.total ?? Number.NaN));
    const feed = median(ss.map((s) => s.requests?.feed ?? Number.NaN));
    const serverMs = median(ss.map((s) => s.requests?.serverMs ?? Number.NaN));
    const share = median(ss.map((s) => (s.requests?.serverMs ?? Number.NaN) / s.ms));
    const items = w.items(settings, model);
    const per = total / items.n;
    // The kinds of request, summed over the runs and divided by them.
    const kinds = new Map<string, number>();
    for (const s of ss) for (const [k, v] of s.requests?.byKind ?? []) kinds.set(k, (kinds.get(k) ?? 0) + v);
    const kindText = [...kinds]
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k} ${fmtNum(Math.round((v / ss.length) * 10) / 10)}`)
      .join(", ");
    const ops = new Map<string, number>();
    for (const s of ss) for (const [k, v] of s.ops ?? []) ops.set(k, (ops.get(k) ?? 0) + v);
    const opsText = [...ops]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 8)
      .map(([k, v]) => `${k} ${fmtInt(v / ss.length)}`)
      .join(", ");
    const goal = goalFor[w.id];
    let verdict = "";
    if (goal) {
      const met = per <= goal.limit;
      verdict = `${goal.text}: ${met ? "met" : "NOT met"}`;
      goals.push(
        `${w.label}: ${fmtNum(total)} requests, ${per.toFixed(3)} per ${items.unit} (goal ${goal.text}) -> ${met ? "met" : "NOT met"}`,
      );
    }
    reqRows.push([
      w.label,
      fmtNum(total),
      `${per.toFixed(per < 0.01 && per > 0 ? 4 : 3)} / ${items.unit} (${fmtInt(items.n)})`,
      verdict || "-",
      fmtNum(feed),
      `${fmtTime(serverMs)} (${Math.round(share * 100)}%)`,
      kindText || "-",
      ...(settings.trace ? [opsText || "-"] : []),
    ]);
  }
  // Paired by run (both targets ran the workload back to back), as the other ratios are.
  const baseRows = settings.base
    ? all.map((w) => {
        const r = ratio(w, "txtfs", "base");
        const until = (t: TargetName) => samplesOf(w, t).map((s) => s.ms + (s.settleMs ?? 0));
        const b = until("base");
        const rUntil = median(until("txtfs").map((d, i) => d / b[i]!));
        const verdict = (x: number) => (x <= 1.05 ? "within 5%" : `${Math.round((x - 1) * 100)}% slower`);
        return [
          w.label,
          fmtTime(med(w, "base")),
          fmtTime(med(w, "txtfs")),
          `${fmtRatio(r)} ${verdict(r)}`,
          `${fmtRatio(rUntil)} ${verdict(rUntil)}`,
        ];
      })
    : undefined;
  goals.unshift(
    slower.length === 0
      ? "txtfs faster than sshfs on every workload: met"
      : `txtfs faster than sshfs on every workload: NOT met (slower on ${slower.join("; ")})`,
  );

  const m = report.memory;
  const memRows = !m
    ? [["memory phase", "skipped (--no-memory)"]]
    : [
        ["notes mounted", `${fmtInt(m.files)} (${fmtMiB(m.bytes)} of content)`],
        ["mount time (listing the account)", fmtTime(m.mountMs)],
        ["daemon RSS after mounting", `${fmtInt(m.rssAfterMountKb / 1024)} MiB`],
        [`daemon RSS after reading every note (cache full)`, `${fmtInt(m.rssAfterReadKb / 1024)} MiB`],
        ["daemon peak RSS (VmHWM)", `${fmtInt(m.peakRssKb / 1024)} MiB`],
        [
          `content cache (--cache-size ${settings.memCacheSize})`,
          `max ${fmtMiB(m.maxCacheBytes)} seen in ${m.samples} samples; at the end ${fmtMiB(m.finalCacheBytes)} in ${fmtInt(m.finalCacheEntries)} notes -> ${m.maxCacheBytes <= m.cacheBound ? "within the bound" : "OVER the bound"}`,
        ],
        [
          "reading every note (find | sort | xargs cat)",
          `${fmtTime(m.readMs)}, ${fmtInt(m.requests)} requests in all (mount included)`,
        ],
      ];
  if (m)
    goals.push(
      `daemon memory with ${fmtInt(m.files)} notes and a full ${settings.memCacheSize} cache: RSS ${fmtInt(m.rssAfterReadKb / 1024)} MiB (peak ${fmtInt(m.peakRssKb / 1024)} MiB); cache max ${fmtMiB(m.maxCacheBytes)} <= ${fmtMiB(m.cacheBound)} -> ${m.maxCacheBytes <= m.cacheBound ? "met" : "NOT met"}`,
    );

  const notes: string[] = [];
  notes.push(
    report.droppedCaches
      ? "Cold: the page cache is dropped (`sync; echo 3 > /proc/sys/vm/drop_caches`, machine-wide) before every cold run of every target, and the mounts are remounted (sshfs: a new sshfs process and sftp session; txtfs: a new daemon with an empty cache dir; the server keeps running). The programs the workloads use are loaded again before the timing starts."
      : "Cold: /proc/sys/vm/drop_caches could not be written (or --no-drop-caches): the local directory's cold runs read from the page cache (they equal warm runs); sshfs and txtfs are remounted (new process, empty cache) before each cold run, but the files behind them stay in the page cache.",
  );
  notes.push(
    "Write workloads run one after the other on the warm mount that the read workloads left (no remount); each target's tree evolves the same way, and every result is compared with a model of it.",
  );
  notes.push(
    "txtfs saves are write-behind: a workload's time ends when its programs return (their writes are then in the daemon's on-disk journal, as a local file system's are in the page cache); `txtfs until on the service` adds the wait for `txtfs sync` (every save delivered), untimed before the next workload. sshfs's writes are on the server when close returns.",
  );
  const remount = (t: TargetName) => median(results.remounts.filter((r) => r.target === t).map((r) => r.ms));
  notes.push(
    `Remounting before a cold run (untimed) took a median ${fmtTime(remount("sshfs"))} for sshfs and ${fmtTime(remount("txtfs"))} for txtfs (stop, start, list the account), plus dropping the caches.`,
  );
  if (m && m.finalCacheBytes / m.cacheBound < 0.8)
    notes.push(
      `The content cache ended ${Math.round((m.finalCacheBytes / m.cacheBound) * 100)}% full after reading ${fmtMiB(m.bytes)}: it did not fill up.`,
    );
  return {
    head: [
      "workload",
      "local",
      "sshfs",
      "txtfs",
      "sshfs/local",
      "txtfs/local",
      "txtfs vs sshfs",
      "txtfs until on the service",
      "that vs sshfs",
      "txtfs requests",
    ],
    align: ["l", "r", "r", "r", "r", "r", "l", "r", "r", "r"],
    rows,
    reqHead: [
      "workload",
      "requests",
      "per item",
      "goal",
      "feed polls",
      "server time (share of wall)",
      "kinds (mean per run)",
      ...(settings.trace ? ["FUSE ops (mean per run)"] : []),
    ],
    reqAlign: ["l", "r", "r", "l", "r", "r", "l", ...(settings.trace ? (["l"] as const) : [])],
    reqRows,
    memRows,
    goals,
    notes,
    slower,
    baseRows,
  };
}

/** The base checkout and the commit it is at. */
function baseLabel(dir: string, mountOnly: boolean): string {
  const mode = mountOnly ? ", its mount only: both served by this checkout's server" : "";
  try {
    return `${dir} at ${execFileSync("git", ["-C", dir, "rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim()}${mode}`;
  } catch {
    return `${dir}${mode}`;
  }
}

const BASE_HEAD = ["workload", "base", "this checkout", "this vs base", "until on the service, vs base"];
const BASE_ALIGN = ["l", "r", "r", "l", "l"] as const;

function settingsLine(report: Report): string {
  const s = report.settings;
  const c = report.corpus;
  return (
    `corpus: ${fmtInt(c.files)} notes (${fmtInt(c.md)} .md, ${fmtInt(c.txt)} .txt) in ${c.dirs} nested folders, ${fmtMiB(c.bytes)}, largest ${fmtInt(c.largest / 1024)} KB (seed ${s.corpus.seed}); ` +
    `${s.runs} interleaved run${s.runs === 1 ? "" : "s"}${s.quick ? " (--quick)" : ""}${s.trace ? " (--trace: txtfs slowed by op logging)" : ""}; ` +
    "times are medians of the runs (wall time of the `bash -c` child), ratios medians of per-run ratios (<1 = faster); " +
    `requests = the server's request log during the workload, change-feed long-polls counted apart; whole benchmark ${Math.round(report.seconds)} s`
  );
}

function machineLine(m: ReturnType<typeof machineInfo>): string {
  return `${m.cpus} cpus (${m.cpuModel}), ${m.memory}, Node ${m.node}, ${m.os}, load at start ${m.load}`;
}

const TARGET_LINE =
  "Targets: local = a directory on the same disk; sshfs = Debian sshfs 3.7 (default options) over a throwaway OpenSSH sshd on 127.0.0.1; " +
  "txtfs = `txtfs mount --url` of a `txtfs serve` (SQLite, loopback) in another process";

function textReport(report: Report): string {
  const s = summarize(report);
  return [
    `txtfs mount benchmark, ${report.machine.date}, sources at ${report.commit}`,
    machineLine(report.machine),
    TARGET_LINE,
    settingsLine(report),
    "",
    textTable(s.head, s.rows, s.align),
    "",
    ...(s.baseRows
      ? [
          `against the base (${baseLabel(report.settings.base!, report.settings.baseMountOnly)}):`,
          textTable(BASE_HEAD, s.baseRows, [...BASE_ALIGN]),
          "",
        ]
      : []),
    "requests (txtfs):",
    textTable(s.reqHead, s.reqRows, s.reqAlign),
    "",
    "memory (txtfs daemon):",
    textTable(["measure", "result"], s.memRows, ["l", "l"]),
    "",
    "goals:",
    ...s.goals.map((g) => `  ${g}`),
    "",
    "notes:",
    ...s.notes.map((n) => `  ${n}`),
    "",
  ].join("\n");
}

function markdownReport(report: Report): string {
  const s = summarize(report);
  return [
    "## Mount benchmark",
    "",
    `\`npm run bench:mount${report.settings.quick ? " -- --quick" : ""}\` on ${report.machine.date}: ${machineLine(report.machine)}.`,
    "",
    `Sources at ${report.commit}. ${TARGET_LINE}.`,
    "",
    `${settingsLine(report)}.`,
    "",
    markdownTable(s.head, s.rows, s.align),
    "",
    ...(s.baseRows
      ? [
          `### Against the base (${baseLabel(report.settings.base!, report.settings.baseMountOnly)})`,
          "",
          markdownTable(BASE_HEAD, s.baseRows, [...BASE_ALIGN]),
          "",
        ]
      : []),
    "### Requests per operation (txtfs)",
    "",
    markdownTable(s.reqHead, s.reqRows, s.reqAlign),
    "",
    "### Daemon memory",
    "",
    markdownTable(["measure", "result"], s.memRows, ["l", "l"]),
    "",
    "### Goals",
    "",
    ...s.goals.map((g) => `- ${g}`),
    "",
    ...s.notes.map((n) => `> ${n}\n`),
  ].join("\n");
}

try {
  await main();
  process.exit(0);
} catch (err) {
  log(err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.exit(1);
}

// The service benchmark: a real `txtfs serve` in a child process, loaded over loopback, next to a
// bare Fastify route in another child process measured with the same settings in the same run.
//
//   node scripts/bench/service.ts            (npm run bench) 5 s per run, 3 interleaved rounds
//   node scripts/bench/service.ts --quick    smoke run, about 1 s per workload
//
// Workloads: conditional GET answered 304, full GET of a 4 KB note, PUT of a 4 KB note, and paging
// through a 10,000-file account 1,000 at a time (server time per page from Server-Timing).
// Every response is checked (status, body, ETag); a failed check exits non-zero. Results go to
// stdout and to bench-results/service.md. It reports; it asserts no timings.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import type autocannon from "autocannon";
import {
  Checks,
  type ChildServer,
  concat,
  fmtInt,
  fmtMs,
  fmtPct,
  header,
  type LoadResult,
  machineInfo,
  markdownTable,
  median,
  numberOption,
  percentile,
  runLoad,
  serverTimingMs,
  startChild,
  textTable,
} from "./lib.ts";

const root = resolve(import.meta.dirname, "../..");

// ---------------------------------------------------------------------------------------------
// Settings: fixed connections and duration, so runs on this shared 2-core machine compare.

const HELP = `usage: node scripts/bench/service.ts [options]
  --quick              smoke run: 1 s per workload, 1 round
  --duration <s>       seconds per measured run (env BENCH_DURATION, default 5)
  --connections <n>    concurrent keep-alive connections (env BENCH_CONNECTIONS, default 10)
  --rounds <n>         interleaved rounds; medians and ratios come from them (env BENCH_ROUNDS, default 3)
  --walks <n>          sequential listing walks per round (default 3)
  --out <file>         Markdown report (default bench-results/service.md)
  --profile            run both servers with --cpu-prof; profiles land in bench-results/profiles/`;

interface Settings {
  quick: boolean;
  durationSeconds: number;
  warmupSeconds: number;
  connections: number;
  rounds: number;
  walks: number;
  out: string;
  /** Node options for the server processes (CPU profiles), empty normally. */
  serverNodeArgs: string[];
}

function settingsFromArgs(): Settings {
  const { values } = parseArgs({
    options: {
      quick: { type: "boolean", default: false },
      profile: { type: "boolean", default: false },
      duration: { type: "string" },
      connections: { type: "string" },
      rounds: { type: "string" },
      walks: { type: "string" },
      out: { type: "string" },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    process.exit(0);
  }
  const num = (name: string, given: string | undefined, fallback: number, min: number) =>
    numberOption(name, given, fallback, min);
  const env = process.env;
  const quick = values.quick;
  const durationSeconds = num("duration", values.duration ?? env.BENCH_DURATION, quick ? 1 : 5, 0.2);
  return {
    quick,
    durationSeconds,
    // JIT and caches warm on both servers before anything is recorded.
    warmupSeconds: Math.min(1, durationSeconds / 2),
    connections: Math.round(num("connections", values.connections ?? env.BENCH_CONNECTIONS, 10, 1)),
    rounds: Math.round(num("rounds", values.rounds ?? env.BENCH_ROUNDS, quick ? 1 : 3, 1)),
    walks: Math.round(num("walks", values.walks, quick ? 1 : 3, 1)),
    out: resolve(root, values.out ?? "bench-results/service.md"),
    serverNodeArgs: values.profile
      ? ["--cpu-prof", "--cpu-prof-dir", resolve(root, "bench-results/profiles")]
      : [],
  };
}

const log = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);

// ---------------------------------------------------------------------------------------------
// Data

const SEED_FILES = 10_000;
const IMPORT_BATCH = 1000; // the service's per-request import limit
const PAGE_SIZE = 1000;
const NOTE_BYTES = 4096;

/** ASCII, so byte length = string length and response bodies can be compared as strings. */
const NOTE_4K = (() => {
  const line = "The quick brown fox jumps over the lazy dog; notes as files, served over HTTP.\n";
  return `# A 4 KB note\n\n${line.repeat(Math.ceil(NOTE_BYTES / line.length))}`.slice(0, NOTE_BYTES);
})();

/** A different 4 KB body for every PUT, so each one really writes. */
function putContent(n: number): string {
  const tag = `\nput #${n}\n`;
  return NOTE_4K.slice(0, NOTE_BYTES - tag.length) + tag;
}

function seedItems(): { path: string; content: string }[] {
  // The two files the GET/PUT workloads use are part of the 10,000, so the account stays exactly that size.
  const items = [
    { path: "hot/get-4k.md", content: NOTE_4K },
    { path: "hot/put-4k.md", content: NOTE_4K },
  ];
  for (let i = 0; items.length < SEED_FILES; i++) {
    const dir = `dir${i % 100}`;
    items.push({
      path: `${dir}/note${i}.md`,
      content: `# Note ${i}\n\nSeeded by the service benchmark into ${dir}.\n${"- an item\n".repeat(1 + (i % 20))}`,
    });
  }
  return items;
}

// ---------------------------------------------------------------------------------------------
// A small fetch client for setup and the sequential listing walks (the load itself is autocannon's).

interface Reply {
  status: number;
  headers: Headers;
  text: string;
  ms: number;
}

function client(base: string, key?: string) {
  return async (
    method: string,
    path: string,
    opts: { json?: unknown; headers?: Record<string, string> } = {},
  ): Promise<Reply> => {
    const headers: Record<string, string> = { ...opts.headers };
    if (key) headers.authorization = `Bearer ${key}`;
    if (opts.json !== undefined) headers["content-type"] = "application/json";
    const t0 = performance.now();
    const res = await fetch(base + path, {
      method,
      headers,
      body: opts.json === undefined ? undefined : JSON.stringify(opts.json),
      signal: AbortSignal.timeout(120_000),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, text, ms: performance.now() - t0 };
  };
}

function expect(ok: boolean, what: string, reply?: Reply): asserts ok {
  if (!ok)
    throw new Error(
      `check failed: ${what}${reply ? ` (HTTP ${reply.status}: ${reply.text.slice(0, 300)})` : ""}`,
    );
}

// ---------------------------------------------------------------------------------------------
// Workloads

type Target = "txtfs" | "bare";

interface Workload {
  id: string;
  label: string;
  target: Target;
  server: ChildServer;
  url: string;
  requests: () => autocannon.Request[];
  /** Checks after a run, against the server's state. */
  after?: () => Promise<void>;
}

interface PutContext {
  n: number;
}

interface ListingPage {
  path: string;
  count: number;
  next: string | null;
}

interface Walk {
  pages: { serverMs: number; clientMs: number; bytes: number }[];
  totalMs: number;
}

async function main() {
  const settings = settingsFromArgs();
  const machine = machineInfo();
  const tmp = mkdtempSync(join(tmpdir(), "txtfs-bench-"));
  const children: ChildServer[] = [];
  let cleaned = false;
  const cleanup = async () => {
    if (cleaned) return;
    cleaned = true;
    for (const child of children.reverse()) {
      const how = await child.stop().catch((err: Error) => `stop failed: ${err.message}`);
      if (how !== "exit code 0") log(`${child.name} (pid ${child.pid}) ended with ${how}`);
    }
    rmSync(tmp, { recursive: true, force: true });
  };
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => {
      log(`${signal}: stopping the servers`);
      void cleanup().finally(() => process.exit(130));
    });
  }
  // Bounded in time whatever happens: 7 runs per round plus setup, with a generous margin.
  const budgetSeconds =
    7 * (settings.warmupSeconds + settings.rounds * (settings.durationSeconds + 3)) +
    settings.rounds * settings.walks * 10 +
    300;
  setTimeout(() => {
    log(`gave up after ${budgetSeconds} s (watchdog)`);
    void cleanup().finally(() => process.exit(1));
  }, budgetSeconds * 1000).unref();

  try {
    const report = await run(settings, tmp, children);
    const md = markdownReport(settings, machine, report);
    mkdirSync(dirname(settings.out), { recursive: true });
    writeFileSync(settings.out, md);
    process.stdout.write(`\n${textReport(settings, machine, report)}\nMarkdown: ${settings.out}\n`);
  } finally {
    await cleanup();
  }
}

interface Report {
  rows: {
    label: string;
    txtfs: LoadResult[];
    bare?: LoadResult[];
    /** Per-round txtfs/bare throughput ratios (the rounds are interleaved, so each is a fair pair). */
    ratios: number[];
  }[];
  /** Body sizes of the full GET, to show both servers sent the same bytes. */
  getBytes: { txtfs: number; bare: number };
  listing: {
    /** The first walk, right after seeding: what a mount's first listing meets on a fresh server. */
    cold: Walk;
    walks: Walk[];
    loadServerMs: number[];
    pageBytes: number;
  };
  seeding: { seconds: number; serverMs: number[] };
}

async function run(settings: Settings, tmp: string, children: ChildServer[]): Promise<Report> {
  // --- txtfs serve, on a fresh store (it then prints a key with every scope) ---
  // TXTFS_* variables are dropped so a developer's TXTFS_DB can never point the benchmark at real data.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("TXTFS_")));
  const txtfs = startChild(
    "txtfs serve",
    process.execPath,
    [
      ...settings.serverNodeArgs,
      join(root, "bin/txtfs"),
      "serve",
      "--host",
      "127.0.0.1",
      "--port",
      "0",
      "--data",
      join(tmp, "data"),
      "--rate-limit",
      "100000000", // the benchmark measures the server, not its rate limiter's 429s
    ],
    { cwd: root, env },
  );
  children.push(txtfs);
  const txtfsUrl = (await txtfs.waitForLine(/^txtfs (http:\/\/127\.0\.0\.1:\d+)\b/, 30_000))[1]!;
  const key = (await txtfs.waitForLine(/^export TXTFS_API_KEY=(\S+)$/, 10_000))[1]!;
  log(`txtfs serve (pid ${txtfs.pid}) at ${txtfsUrl}`);
  const api = client(txtfsUrl, key);
  const auth = { authorization: `Bearer ${key}` };

  // --- seed the 10,000-file account through the import endpoint ---
  const items = seedItems();
  const ids = new Map<string, string>();
  const seedServerMs: number[] = [];
  const seedStart = performance.now();
  for (let i = 0; i < items.length; i += IMPORT_BATCH) {
    const batch = items.slice(i, i + IMPORT_BATCH);
    const res = await api("POST", "/api/v1/files/import", { json: { files: batch } });
    expect(res.status === 200, `import of files ${i}..${i + batch.length - 1} answers 200`, res);
    const body = JSON.parse(res.text) as {
      files: { path: string; id: string; status: string }[];
      summary: { created: number };
    };
    expect(body.summary.created === batch.length, `import created ${batch.length} files`, res);
    for (const f of body.files) ids.set(f.path, f.id);
    seedServerMs.push(serverTimingMs(res.headers.get("server-timing")) ?? Number.NaN);
  }
  const seedSeconds = (performance.now() - seedStart) / 1000;
  expect(new Set(ids.values()).size === SEED_FILES, `import returned ${SEED_FILES} distinct ids`);
  log(`seeded ${fmtInt(SEED_FILES)} files in ${seedSeconds.toFixed(2)} s`);

  // --- the note the GET and 304 workloads read, checked once by hand ---
  const getPath = `/api/v1/files/${ids.get("hot/get-4k.md")}`;
  const putPath = `/api/v1/files/${ids.get("hot/put-4k.md")}`;
  const full = await api("GET", getPath);
  expect(full.status === 200, "GET of the 4 KB note answers 200", full);
  const note = JSON.parse(full.text) as { content: string; etag: string };
  expect(note.content === NOTE_4K, "GET returns the 4 KB content that was imported", full);
  const etag = full.headers.get("etag") ?? "";
  expect(etag !== "" && etag === note.etag, "GET carries an ETag equal to the body's etag", full);
  const cond = await api("GET", getPath, { headers: { "if-none-match": etag } });
  expect(cond.status === 304 && cond.text === "", "conditional GET answers 304 with no body", cond);
  const expectedBody = full.text;

  // --- the bare Fastify baseline, serving the very same note object ---
  const notePath = join(tmp, "note.json");
  writeFileSync(notePath, expectedBody);
  const bare = startChild(
    "bare fastify",
    process.execPath,
    [...settings.serverNodeArgs, join(import.meta.dirname, "bare-server.ts"), notePath],
    {
      cwd: root,
      env,
    },
  );
  children.push(bare);
  const bareUrl = (await bare.waitForLine(/^bare (http:\/\/127\.0\.0\.1:\d+)$/, 30_000))[1]!;
  log(`bare fastify (pid ${bare.pid}) at ${bareUrl}`);
  const bareApi = client(bareUrl);
  const bareFull = await bareApi("GET", "/note");
  expect(bareFull.status === 200, "bare GET answers 200", bareFull);
  const bareBody = bareFull.text;

  // --- the listing pages, found by one walk; the load run then cycles through them ---
  const pages: ListingPage[] = [];
  const seededIds = new Set(ids.values());
  const walks: Walk[] = [];
  // "discover" notes each page for the load run, "record" keeps the timings; every walk is checked.
  const walk = async (mode: "discover" | "check" | "record"): Promise<Walk> => {
    const seen = new Set<string>();
    const result: Walk = { pages: [], totalMs: 0 };
    let cursor: string | null = null;
    for (let page = 0; ; page++) {
      expect(page <= SEED_FILES / PAGE_SIZE, "listing ends after 10 pages");
      const path = `/api/v1/files?limit=${PAGE_SIZE}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
      const res = await api("GET", path);
      expect(res.status === 200, `listing page ${page + 1} answers 200`, res);
      const serverMs = serverTimingMs(res.headers.get("server-timing"));
      expect(serverMs !== undefined, "listing carries Server-Timing: app;dur=", res);
      const body = JSON.parse(res.text) as {
        files: { id: string }[];
        nextCursor: string | null;
        hasMore: boolean;
      };
      for (const f of body.files) {
        expect(!seen.has(f.id), `listing has no duplicates (${f.id} seen twice)`);
        expect(seededIds.has(f.id), `listing shows only the seeded files (${f.id} is not one)`);
        expect(!("content" in f), "listings carry no file bodies");
        seen.add(f.id);
      }
      expect(body.hasMore === (body.nextCursor !== null), "hasMore agrees with nextCursor", res);
      result.pages.push({ serverMs, clientMs: res.ms, bytes: res.text.length });
      result.totalMs += res.ms;
      if (mode === "discover") pages.push({ path, count: body.files.length, next: body.nextCursor });
      cursor = body.nextCursor;
      if (!cursor) break;
    }
    expect(seen.size === SEED_FILES, `listing has ${SEED_FILES} files in total (got ${seen.size})`);
    expect(result.pages.length === SEED_FILES / PAGE_SIZE, `listing has ${SEED_FILES / PAGE_SIZE} pages`);
    if (mode === "record") walks.push(result);
    return result;
  };
  const coldWalk = await walk("discover");

  // --- the workloads ---
  const checks = new Checks();
  const seenEtags: Record<Target, Set<string>> = { txtfs: new Set([etag]), bare: new Set() };
  let putSeq = 0;

  const conditional =
    (path: string, tag: string, extra: Record<string, string>) => (): autocannon.Request[] => [
      {
        method: "GET",
        path,
        headers: { ...extra, "if-none-match": tag },
        onResponse: (status, body) => {
          if (status !== 304) checks.fail(`304 expected, got ${status}`, body);
          else if (body !== "") checks.fail("304 with a body", body);
        },
      },
    ];
  const fullGet =
    (path: string, expected: string, extra: Record<string, string>) => (): autocannon.Request[] => [
      {
        method: "GET",
        path,
        headers: extra,
        onResponse: (status, body) => {
          if (status !== 200) checks.fail(`200 expected, got ${status}`, body);
          else if (body !== expected)
            checks.fail(`body of ${expected.length} bytes expected`, `${body.length} bytes`);
        },
      },
    ];
  // PUT number -> the ETag its response carried (txtfs), to check the state left behind.
  const answeredPuts = new Map<number, string>();
  const put = (target: Target, path: string, extra: Record<string, string>) => (): autocannon.Request[] => [
    {
      method: "PUT",
      path,
      headers: { ...extra, "content-type": "application/json" },
      // A new body per request; the per-connection context carries its number to the response check.
      setupRequest: (req, context) => {
        (context as PutContext).n = ++putSeq;
        return { ...req, body: JSON.stringify({ content: putContent(putSeq) }) };
      },
      onResponse: (status, body, context, headers) => {
        if (status !== 200) return checks.fail(`200 expected, got ${status}`, body);
        const n = (context as PutContext).n;
        const file = (JSON.parse(body) as { file: { content: string; etag: string } }).file;
        const tag = header(headers, "etag");
        if (file.content !== putContent(n)) checks.fail("PUT did not store the body sent", body);
        if (tag !== file.etag)
          checks.fail("ETag header differs from the body's etag", `${tag} vs ${file.etag}`);
        if (!tag || seenEtags[target].has(tag)) checks.fail("PUT did not change the ETag", String(tag));
        else seenEtags[target].add(tag);
        if (target === "txtfs" && tag) answeredPuts.set(n, tag);
      },
    },
  ];
  const listingLoadServerMs: number[] = [];
  const listing = (): autocannon.Request[] =>
    pages.map((page) => ({
      method: "GET" as const,
      path: page.path,
      headers: auth,
      onResponse: (
        status: number,
        body: string,
        _context: object,
        headers: autocannon.Request["headers"],
      ) => {
        if (status !== 200) return checks.fail(`200 expected, got ${status}`, body);
        const parsed = JSON.parse(body) as { files: unknown[]; nextCursor: string | null };
        if (parsed.files.length !== page.count)
          checks.fail("listing page changed size", `${parsed.files.length}`);
        if (parsed.nextCursor !== page.next)
          checks.fail("listing page changed cursor", String(parsed.nextCursor));
        const ms = serverTimingMs(header(headers, "server-timing"));
        if (ms === undefined) checks.fail("listing without Server-Timing", JSON.stringify(headers));
        else listingLoadServerMs.push(ms);
      },
    }));

  const pairs: [Workload, Workload | undefined][] = [
    [
      {
        id: "304",
        label: "GET 304 (If-None-Match)",
        target: "txtfs",
        server: txtfs,
        url: txtfsUrl,
        requests: conditional(getPath, etag, auth),
      },
      {
        id: "304",
        label: "",
        target: "bare",
        server: bare,
        url: bareUrl,
        requests: conditional("/note", etag, {}),
      },
    ],
    [
      {
        id: "get",
        label: "GET 4 KB note",
        target: "txtfs",
        server: txtfs,
        url: txtfsUrl,
        requests: fullGet(getPath, expectedBody, auth),
      },
      {
        id: "get",
        label: "",
        target: "bare",
        server: bare,
        url: bareUrl,
        requests: fullGet("/note", bareBody, {}),
      },
    ],
    [
      {
        id: "put",
        label: "PUT 4 KB note",
        target: "txtfs",
        server: txtfs,
        url: txtfsUrl,
        requests: put("txtfs", putPath, auth),
        // The note holds one of the bodies sent, with the ETag its response carried (the last few
        // PUTs may have had no response read: autocannon stops with requests in flight).
        after: async () => {
          const res = await api("GET", putPath);
          const file = JSON.parse(res.text) as { etag: string; content: string };
          const n = Number(file.content.match(/\nput #(\d+)\n$/)?.[1]);
          expect(
            res.status === 200 && file.content === putContent(n),
            "after the PUTs the note holds a PUT's body",
            res,
          );
          expect(
            answeredPuts.get(n) === file.etag || (!answeredPuts.has(n) && !seenEtags.txtfs.has(file.etag)),
            `after the PUTs the note has the ETag PUT #${n} answered with`,
            res,
          );
        },
      },
      {
        id: "put",
        label: "",
        target: "bare",
        server: bare,
        url: bareUrl,
        requests: put("bare", "/note", {}),
      },
    ],
    [
      {
        id: "list",
        label: `GET list page (${fmtInt(PAGE_SIZE)} of ${fmtInt(SEED_FILES)})`,
        target: "txtfs",
        server: txtfs,
        url: txtfsUrl,
        requests: listing,
      },
      undefined,
    ],
  ];

  const results = new Map<string, LoadResult[]>();
  const measure = async (w: Workload, seconds: number, label: string): Promise<LoadResult> => {
    const res = await runLoad({
      url: w.url,
      connections: settings.connections,
      durationSeconds: seconds,
      requests: w.requests(),
      serverPid: w.server.pid,
    });
    checks.assertClean(`${w.target} ${w.id} (${label})`);
    if (res.errors > 0 || res.timeouts > 0) {
      throw new Error(
        `${w.target} ${w.id} (${label}): ${res.errors} connection errors, ${res.timeouts} timeouts`,
      );
    }
    if (res.requests === 0) throw new Error(`${w.target} ${w.id} (${label}): no response at all`);
    await w.after?.();
    return res;
  };

  log(`warm-up: ${settings.warmupSeconds} s per workload`);
  for (const pair of pairs) for (const w of pair) if (w) await measure(w, settings.warmupSeconds, "warm-up");
  await walk("check");

  for (let round = 0; round < settings.rounds; round++) {
    // Rotate the order, and alternate which server goes first, so neither gets a systematic slot.
    const order = pairs.map((_, i) => pairs[(i + round) % pairs.length]!);
    for (const [a, b] of order) {
      for (const w of round % 2 === 0 ? [a, b] : [b, a]) {
        if (!w) continue;
        const res = await measure(w, settings.durationSeconds, `round ${round + 1}`);
        const key = `${w.target} ${w.id}`;
        results.set(key, [...(results.get(key) ?? []), res]);
        log(
          `round ${round + 1}/${settings.rounds}  ${key.padEnd(10)} ${fmtInt(res.rps).padStart(7)} req/s  ` +
            `p99 ${fmtMs(percentile(res.latencies, 99))} ms  cpu: server ${fmtPct(res.serverCpu)} client ${fmtPct(res.clientCpu)} other ${fmtPct(res.otherCpu)}`,
        );
      }
    }
    for (let i = 0; i < settings.walks; i++) await walk("record");
  }

  const rows: Report["rows"] = pairs.map(([t, b]) => {
    const txtfsRuns = results.get(`txtfs ${t.id}`) ?? [];
    const bareRuns = b ? (results.get(`bare ${b.id}`) ?? []) : undefined;
    return {
      label: t.label,
      txtfs: txtfsRuns,
      bare: bareRuns,
      ratios: bareRuns ? txtfsRuns.map((r, i) => r.rps / bareRuns[i]!.rps) : [],
    };
  });
  return {
    rows,
    listing: {
      cold: coldWalk,
      walks,
      loadServerMs: listingLoadServerMs,
      pageBytes: median(walks.flatMap((w) => w.pages.map((p) => p.bytes))),
    },
    seeding: { seconds: seedSeconds, serverMs: seedServerMs },
    getBytes: { txtfs: expectedBody.length, bare: bareBody.length },
  };
}

// ---------------------------------------------------------------------------------------------
// Reporting

const GOAL_304_RATIO = 0.5;
const GOAL_PAGE_MS = 20;

function summarize(report: Report) {
  const table = report.rows.map((row) => {
    const rps = median(row.txtfs.map((r) => r.rps));
    const spread =
      (Math.max(...row.txtfs.map((r) => r.rps)) - Math.min(...row.txtfs.map((r) => r.rps))) / rps;
    const p99 = percentile(concat(row.txtfs.map((r) => r.latencies)), 99);
    const bareRps = row.bare ? median(row.bare.map((r) => r.rps)) : Number.NaN;
    const bareP99 = row.bare ? percentile(concat(row.bare.map((r) => r.latencies)), 99) : Number.NaN;
    const ratio = row.ratios.length ? median(row.ratios) : Number.NaN;
    return {
      cells: [
        row.label,
        fmtInt(rps),
        row.txtfs.length > 1 ? `±${Math.round((spread / 2) * 100)}%` : "-",
        fmtMs(p99),
        fmtInt(bareRps),
        fmtMs(bareP99),
        Number.isFinite(ratio) ? `${Math.round(ratio * 100)}%` : "-",
        fmtPct(median(row.txtfs.map((r) => r.serverCpu))),
        row.bare ? fmtPct(median(row.bare.map((r) => r.serverCpu))) : "-",
        fmtPct(median([...row.txtfs, ...(row.bare ?? [])].map((r) => r.clientCpu))),
        fmtPct(median([...row.txtfs, ...(row.bare ?? [])].map((r) => r.otherCpu))),
      ],
      ratio,
    };
  });
  const pageServer = report.listing.walks.flatMap((w) => w.pages.map((p) => p.serverMs));
  const pageClient = report.listing.walks.flatMap((w) => w.pages.map((p) => p.clientMs));
  const walkTotals = report.listing.walks.map((w) => w.totalMs);
  const coldServer = report.listing.cold.pages.map((p) => p.serverMs);
  const listRow = report.rows.find((r) => r.bare === undefined)!;
  const ratio304 = table[0]!.ratio;
  const pageMedian = median(pageServer);
  const pageMax = Math.max(...pageServer);
  const over = pageServer.filter((ms) => ms >= GOAL_PAGE_MS).length;
  return {
    head: [
      "workload",
      "txtfs req/s",
      "spread",
      "txtfs p99 ms",
      "bare req/s",
      "bare p99 ms",
      "txtfs/bare",
      "txtfs cpu",
      "bare cpu",
      "client cpu",
      "other cpu",
    ],
    align: ["l", "r", "r", "r", "r", "r", "r", "r", "r", "r", "r"] as ("l" | "r")[],
    rows: table.map((t) => t.cells),
    listing: [
      [
        "full GET body, txtfs / bare",
        `${fmtInt(report.getBytes.txtfs)} / ${fmtInt(report.getBytes.bare)} bytes (4,096 bytes of content)`,
      ],
      [
        "pages per walk / files",
        `${report.listing.walks[0]?.pages.length ?? 0} / ${fmtInt(SEED_FILES)} (no duplicates)`,
      ],
      ["page body", `${fmtInt(report.listing.pageBytes / 1024)} KB`],
      [
        `server time per page, sequential (${pageServer.length} pages)`,
        `median ${fmtMs(pageMedian)} ms, p90 ${fmtMs(percentile(pageServer, 90))} ms, max ${fmtMs(pageMax)} ms`,
      ],
      [
        "client time per page, sequential",
        `median ${fmtMs(median(pageClient))} ms, max ${fmtMs(Math.max(...pageClient))} ms`,
      ],
      ["whole listing (10 pages), sequential", `median ${fmtMs(median(walkTotals))} ms`],
      [
        "first listing on a cold server (not in the goal)",
        `server time per page median ${fmtMs(median(coldServer))} ms, max ${fmtMs(Math.max(...coldServer))} ms; whole listing ${fmtMs(report.listing.cold.totalMs)} ms`,
      ],
      [
        `server time per page under load (${fmtInt(report.listing.loadServerMs.length)} pages)`,
        `median ${fmtMs(median(report.listing.loadServerMs))} ms, max ${fmtMs(Math.max(...report.listing.loadServerMs))} ms`,
      ],
      [
        "page fetches under load",
        `${fmtInt(median(listRow.txtfs.map((r) => r.rps)))} req/s, p99 ${fmtMs(percentile(concat(listRow.txtfs.map((r) => r.latencies)), 99))} ms`,
      ],
      [
        `seeding ${fmtInt(SEED_FILES)} files (${report.seeding.serverMs.length} imports)`,
        `${report.seeding.seconds.toFixed(2)} s, ${fmtInt(SEED_FILES / report.seeding.seconds)} files/s; ` +
          `server time per import of ${fmtInt(IMPORT_BATCH)}: median ${fmtMs(median(report.seeding.serverMs))} ms, max ${fmtMs(Math.max(...report.seeding.serverMs))} ms`,
      ],
    ],
    goals: [
      `txtfs 304 path at >= ${GOAL_304_RATIO * 100}% of the bare route's throughput: ${Math.round(ratio304 * 100)}% -> ${ratio304 >= GOAL_304_RATIO ? "met" : "NOT met"}`,
      `listing under ${GOAL_PAGE_MS} ms of server time per page of ${fmtInt(PAGE_SIZE)}: median ${fmtMs(pageMedian)} ms, max ${fmtMs(pageMax)} ms -> ${
        pageMedian < GOAL_PAGE_MS
          ? over === 0
            ? "met (every page)"
            : `met at the median; ${over} of ${pageServer.length} pages at or over ${GOAL_PAGE_MS} ms`
          : "NOT met"
      }`,
    ],
    notes: noteLines(report),
  };
}

/** What to keep in mind when reading the numbers, from what the CPU accounting saw. */
function noteLines(report: Report): string[] {
  const all = report.rows.flatMap((r) => [...r.txtfs, ...(r.bare ?? [])]);
  const notes: string[] = [];
  const other = median(all.map((r) => r.otherCpu));
  if (other > 0.2) {
    notes.push(
      `Other processes used a median ${fmtPct(other)} of a core during the runs: the machine was not quiet, ` +
        "so absolute numbers are low; the interleaved ratios are less affected.",
    );
  }
  const clientBound = report.rows.filter((r) => r.bare && median(r.bare.map((b) => b.clientCpu)) > 0.85);
  if (clientBound.length) {
    notes.push(
      `The load generator was near a full core during the bare runs of ${clientBound.map((r) => r.label).join(", ")}: ` +
        "there bare req/s is partly bounded by the client, so the true txtfs/bare ratio is at most the one shown.",
    );
  }
  return notes;
}

function settingsLine(settings: Settings): string {
  return (
    `${settings.connections} connections, ${settings.durationSeconds} s per run after a ${settings.warmupSeconds} s warm-up, ` +
    `${settings.rounds} interleaved round${settings.rounds === 1 ? "" : "s"}${settings.quick ? " (--quick)" : ""}; ` +
    "req/s = median of rounds (spread = half the min-max range), p99 over every response of every round, " +
    "txtfs/bare = median of per-round ratios, cpu = share of one core used during the run (other = all other processes)"
  );
}

function machineLine(machine: ReturnType<typeof machineInfo>): string {
  return `${machine.cpus} cpus (${machine.cpuModel}), ${machine.memory}, Node ${machine.node}, ${machine.os}, load at start ${machine.load}`;
}

function textReport(settings: Settings, machine: ReturnType<typeof machineInfo>, report: Report): string {
  const s = summarize(report);
  return [
    `txtfs service benchmark, ${machine.date}`,
    machineLine(machine),
    settingsLine(settings),
    "",
    textTable(s.head, s.rows, s.align),
    "",
    textTable(["measure", "result"], s.listing, ["l", "l"]),
    "",
    "goals:",
    ...s.goals.map((g) => `  ${g}`),
    ...(s.notes.length ? ["", "notes:", ...s.notes.map((n) => `  ${n}`)] : []),
    "",
  ].join("\n");
}

function markdownReport(settings: Settings, machine: ReturnType<typeof machineInfo>, report: Report): string {
  const s = summarize(report);
  return [
    "## Service benchmark",
    "",
    `\`npm run bench${settings.quick ? " -- --quick" : ""}\` on ${machine.date}: ${machineLine(machine)}.`,
    `A real \`txtfs serve\` (SQLite store, 10,000-file account) and a bare Fastify route, each in its own process, loaded over loopback by autocannon: ${settingsLine(settings)}.`,
    "",
    markdownTable(s.head, s.rows, s.align),
    "",
    markdownTable(["measure", "result"], s.listing, ["l", "l"]),
    "",
    ...s.goals.map((g) => `- ${g}`),
    ...(s.notes.length ? ["", ...s.notes.map((n) => `> ${n}`)] : []),
    "",
  ].join("\n");
}

try {
  await main();
  process.exit(0);
} catch (err) {
  log(err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.exit(1);
}

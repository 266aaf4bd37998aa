// The store benchmark: the same service on SQLite, on PostgreSQL with one server, and on PostgreSQL
// with two server processes sharing the database (the load split evenly between them), in one run.
//
//   node scripts/bench/stores.ts            (npm run bench:stores) 5 s per run, 2 interleaved rounds
//   node scripts/bench/stores.ts --quick    smoke run, 1 s per run, 1 round
//   node scripts/bench/stores.ts --root ../other-checkout   the same against another commit's txtfs
//   node scripts/bench/stores.ts --workloads put            only the PUTs
//
// PostgreSQL is a throwaway cluster (Debian's binaries, 127.0.0.1, a temp dir) with its default,
// durable settings (fsync on), as SQLite runs with synchronous=FULL. Workloads: GET 304, GET of a
// 4 KB note, PUT of a 4 KB note (each server writes its own note of the same account). Every response
// is checked. It reports ratios; it asserts no timings.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import type autocannon from "autocannon";
import { createDatabase, type PgCluster, startPgCluster } from "../../test/helpers/pgCluster.ts";
import {
  type ChildServer,
  concat,
  fmtInt,
  fmtMs,
  fmtPct,
  machineInfo,
  markdownTable,
  median,
  numberOption,
  percentile,
  runLoad,
  startChild,
  textTable,
} from "./lib.ts";

const here = resolve(import.meta.dirname, "../..");
const log = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);

const { values } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    duration: { type: "string" },
    connections: { type: "string" },
    rounds: { type: "string" },
    out: { type: "string" },
    workloads: { type: "string" }, // a comma list of 304, get, put (all by default)
    root: { type: "string" }, // another checkout whose txtfs to measure (to compare two commits)
  },
});
const root = values.root ? resolve(values.root) : here;
const quick = values.quick;
const durationSeconds = numberOption("duration", values.duration, quick ? 1 : 5, 0.2);
const connections = numberOption("connections", values.connections, 10, 2, true);
const rounds = numberOption("rounds", values.rounds, quick ? 1 : 2, 1, true);
const out = resolve(here, values.out ?? "bench-results/stores.md");

const NOTE = "# A 4 KB note\n\n".padEnd(4096, "notes as files, served over HTTP. ");
/** The note as it appears inside a JSON body (newlines escaped). */
const NOTE_JSON = JSON.stringify(NOTE).slice(1, -1);

type Config = "sqlite" | "pg1" | "pg2";
const CONFIGS: { id: Config; label: string }[] = [
  { id: "sqlite", label: "SQLite, 1 server" },
  { id: "pg1", label: "PostgreSQL, 1 server" },
  { id: "pg2", label: "PostgreSQL, 2 servers" },
];
type WorkloadId = "304" | "get" | "put";
const WORKLOADS: { id: WorkloadId; label: string }[] = [
  { id: "304", label: "GET 304 (If-None-Match)" },
  { id: "get", label: "GET 4 KB note" },
  { id: "put", label: "PUT 4 KB note" },
].filter((w) => !values.workloads || values.workloads.split(",").includes(w.id)) as {
  id: WorkloadId;
  label: string;
}[];
if (WORKLOADS.length === 0) throw new Error("--workloads: a comma list of 304, get, put");

interface Target {
  server: ChildServer;
  url: string;
  key: string;
  getPath: string;
  etag: string;
  putPath: string;
}

async function api(base: string, key: string, method: string, path: string, json?: unknown) {
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(json ? { "content-type": "application/json" } : {}) },
    body: json ? JSON.stringify(json) : undefined,
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 200)}`);
  return { body: JSON.parse(text), etag: res.headers.get("etag") ?? "" };
}

function serve(name: string, args: string[]): ChildServer {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("TXTFS_")));
  const argv = [join(root, "bin/txtfs"), "serve", "--port", "0", "--rate-limit", "100000000", ...args];
  return startChild(name, process.execPath, argv, { cwd: root, env });
}

async function main() {
  const machine = machineInfo();
  const tmp = mkdtempSync(join(tmpdir(), "txtfs-bench-stores-"));
  const children: ChildServer[] = [];
  let cluster: PgCluster | undefined;
  const cleanup = async () => {
    for (const c of children.reverse()) await c.stop().catch(() => {});
    cluster?.stop();
    rmSync(tmp, { recursive: true, force: true });
  };
  process.on("SIGINT", () => void cleanup().finally(() => process.exit(130)));
  setTimeout(
    () => {
      log("gave up (watchdog)");
      void cleanup().finally(() => process.exit(1));
    },
    (rounds * 9 * (durationSeconds + 3) + 300) * 1000,
  ).unref();
  try {
    cluster = await startPgCluster({ durable: true });
    const db = await createDatabase(cluster.url, "bench");
    log(`postgres cluster on port ${cluster.port}`);

    const start = async (name: string, args: string[], key?: string): Promise<Target> => {
      const server = serve(name, args);
      children.push(server);
      const url = (await server.waitForLine(/^txtfs (http:\/\/127\.0\.0\.1:\d+)\b/, 30_000))[1]!;
      const k = key ?? (await server.waitForLine(/^export TXTFS_API_KEY=(\S+)$/, 10_000))[1]!;
      const hot = await api(url, k, "POST", "/api/v1/files", { name: `${name}-get.md`, content: NOTE });
      const put = await api(url, k, "POST", "/api/v1/files", { name: `${name}-put.md`, content: NOTE });
      log(`${name} (pid ${server.pid}) at ${url}`);
      return {
        server,
        url,
        key: k,
        getPath: `/api/v1/files/${hot.body.file.id}`,
        etag: hot.etag,
        putPath: `/api/v1/files/${put.body.file.id}`,
      };
    };
    const sqlite = await start("sqlite", ["--data", join(tmp, "sqlite")]);
    const pgA = await start("pg-a", ["--db", db]);
    const pgB = await start("pg-b", ["--db", db], pgA.key);
    const targets: Record<Config, Target[]> = { sqlite: [sqlite], pg1: [pgA], pg2: [pgA, pgB] };

    let failures = 0;
    let putN = 0;
    const requests = (t: Target, w: WorkloadId): autocannon.Request[] => {
      const auth = { authorization: `Bearer ${t.key}` };
      if (w === "304")
        return [
          {
            method: "GET",
            path: t.getPath,
            headers: { ...auth, "if-none-match": t.etag },
            onResponse: (s) => void (s !== 304 && failures++),
          },
        ];
      if (w === "get")
        return [
          {
            method: "GET",
            path: t.getPath,
            headers: auth,
            onResponse: (s, body) => void ((s !== 200 || !body.includes(NOTE_JSON)) && failures++),
          },
        ];
      return [
        {
          method: "PUT",
          path: t.putPath,
          headers: { ...auth, "content-type": "application/json" },
          setupRequest: (req) => ({
            ...req,
            body: JSON.stringify({ content: `${NOTE.slice(0, 4000)}#${++putN}` }),
          }),
          onResponse: (s) => void (s !== 200 && failures++),
        },
      ];
    };
    /** One run of a workload on a configuration: the connections split evenly over its servers. */
    const measure = async (config: Config, w: WorkloadId, seconds: number) => {
      const ts = targets[config];
      const results = await Promise.all(
        ts.map((t) =>
          runLoad({
            url: t.url,
            connections: Math.round(connections / ts.length),
            durationSeconds: seconds,
            requests: requests(t, w),
            serverPid: t.server.pid,
          }),
        ),
      );
      return {
        rps: results.reduce((n, r) => n + r.rps, 0),
        latencies: concat(results.map((r) => r.latencies)),
        errors: results.reduce((n, r) => n + r.errors + r.timeouts, 0),
        cpu: results.reduce((n, r) => n + r.serverCpu, 0),
      };
    };
    type Run = Awaited<ReturnType<typeof measure>>;
    const runs = new Map<string, Run[]>();
    for (const w of WORKLOADS) {
      for (const c of CONFIGS) await measure(c.id, w.id, Math.min(1, durationSeconds)); // warm-up
      for (let r = 0; r < rounds; r++) {
        // Interleaved, so a noisy neighbour hits every configuration alike.
        for (const c of CONFIGS) {
          const run = await measure(c.id, w.id, durationSeconds);
          log(`${w.label} / ${c.label}: ${fmtInt(run.rps)} req/s`);
          runs.set(`${w.id}/${c.id}`, [...(runs.get(`${w.id}/${c.id}`) ?? []), run]);
        }
      }
    }
    if (failures) throw new Error(`${failures} responses failed their check`);

    const rps = (w: WorkloadId, c: Config) => median(runs.get(`${w}/${c}`)!.map((r) => r.rps));
    const p99 = (w: WorkloadId, c: Config) =>
      percentile(concat(runs.get(`${w}/${c}`)!.map((r) => r.latencies)), 99);
    const head = [
      "workload",
      ...CONFIGS.flatMap((c) => [`${c.label} req/s`, "p99 ms"]),
      "PG/SQLite req/s",
      "PG/SQLite p99",
      "2 servers/1 req/s",
      "2 servers/1 p99",
    ];
    const rows = WORKLOADS.map((w) => [
      w.label,
      ...CONFIGS.flatMap((c) => [fmtInt(rps(w.id, c.id)), fmtMs(p99(w.id, c.id))]),
      fmtPct(rps(w.id, "pg1") / rps(w.id, "sqlite")),
      fmtPct(p99(w.id, "pg1") / p99(w.id, "sqlite")),
      fmtPct(rps(w.id, "pg2") / rps(w.id, "pg1")),
      fmtPct(p99(w.id, "pg2") / p99(w.id, "pg1")),
    ]);
    const align = head.map((_, i) => (i === 0 ? "l" : "r")) as ("l" | "r")[];
    const intro =
      `\`npm run bench:stores\` on ${machine.date}: ${machine.cpus} cpus (${machine.cpuModel}), ${machine.memory}, ` +
      `Node ${machine.node}, ${machine.os}, load at start ${machine.load}.\n` +
      `${connections} connections (split evenly over the servers), ${durationSeconds} s per run, ${rounds} interleaved rounds; ` +
      "req/s = median of rounds, p99 over every response; PostgreSQL with its default durable settings.";
    const md = `${intro}\n\n${markdownTable(head, rows, align)}\n`;
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, md);
    process.stdout.write(`\n${intro}\n\n${textTable(head, rows, align)}\n\nMarkdown: ${out}\n`);
  } finally {
    await cleanup();
  }
}

await main();

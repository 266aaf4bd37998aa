// The service's costs as the store grows: notes spread over `--accounts` accounts (scaleData.ts),
// filled through the import endpoint (the store's bulk path) to each size, then each operation on
// the same sampled notes of the first account at every size. Reports p50/p99, the ratio of the
// largest store to the smallest, the server's RSS idle and under load, and its time from start to
// answering /readyz at each size. It asserts no timings.
//
//   node scripts/bench/scale.ts                       sizes 2000,20000, SQLite (npm run bench:scale)
//   node scripts/bench/scale.ts --sizes 10000,100000 --accounts 100 --store postgres --servers 2
//   node scripts/bench/scale.ts --keep DIR            fill DIR once; later runs reuse it (SQLite)
//   node scripts/bench/scale.ts --root ../other-checkout            measure another checkout
//   node scripts/bench/scale.ts --migrate-from ../older-checkout    fill with an older txtfs, then
//                                                     time this one's start (its migrations) on it
//   node scripts/bench/scale.ts --accounts 10000 --first 1000 --sizes 100000   the measured (first)
//                                                     account holds 1,000 notes, the others the rest
//   node scripts/bench/scale.ts --sizes 1000000 --keep DIR --fill-only    fill, measure nothing
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { createDatabase, type PgCluster, startPgCluster } from "../../test/helpers/pgCluster.ts";
import {
  type ChildServer,
  cleanUpOnStop,
  fmtMs,
  machineInfo,
  markdownTable,
  median,
  numberOption,
  percentile,
  startChild,
  textTable,
} from "./lib.ts";
import { createAccounts, note } from "./scaleData.ts";
import { call, operations, type State, topicsAt } from "./scaleOps.ts";

const here = resolve(import.meta.dirname, "../..");
const log = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);
const { values } = parseArgs({
  options: {
    sizes: { type: "string", default: "2000,20000" },
    accounts: { type: "string", default: "1" },
    first: { type: "string" },
    store: { type: "string", default: "sqlite" },
    servers: { type: "string", default: "1" },
    samples: { type: "string", default: "30" },
    keep: { type: "string" },
    root: { type: "string" },
    "migrate-from": { type: "string" },
    "fill-only": { type: "boolean", default: false },
    out: { type: "string" },
  },
});
const root = values.root ? resolve(values.root) : here;
const fillRoot = values["migrate-from"] ? resolve(values["migrate-from"]) : root;
const sizes = values.sizes
  .split(",")
  .map(Number)
  .sort((a, b) => a - b);
const accountCount = numberOption("accounts", values.accounts, 1, 1, true);
const serverCount = numberOption("servers", values.servers, 1, 1, true);
// The measured account's notes at the largest size (the others share the rest evenly): with 10,000
// accounts spread evenly it would hold 10 of 100,000, fewer than the samples need.
const firstNotes = values.first === undefined ? undefined : numberOption("first", values.first, 0, 60, true);
if (firstNotes !== undefined && accountCount < 2) throw new Error("--first needs --accounts 2 or more");
const samples = numberOption("samples", values.samples, 30, 3, true);
const postgres = values.store === "postgres";
if (!postgres && values.store !== "sqlite") throw new Error("--store: sqlite or postgres");
if (!postgres && serverCount > 1)
  throw new Error("--servers 2 needs --store postgres (SQLite has one server)");
if (postgres && values.keep) throw new Error("--keep is for SQLite (the PostgreSQL cluster is a throwaway)");

const rssMiB = (pid: number) => {
  const m = readFileSync(`/proc/${pid}/status`, "utf8").match(/^VmRSS:\s+(\d+) kB/m);
  return m ? Number(m[1]) / 1024 : Number.NaN;
};

interface Server {
  child: ChildServer;
  url: string;
}

/** Starts one server and waits until /readyz answers 200: how long that took is its start time. */
async function serve(txtfsRoot: string, args: string[]): Promise<Server & { readyMs: number }> {
  const t0 = performance.now();
  const child = startChild(
    "serve",
    process.execPath,
    [join(txtfsRoot, "bin/txtfs"), "serve", "--port", "0", "--rate-limit", "100000000", ...args],
    { env: { ...process.env, TXTFS_LOG_LEVEL: "warn" } },
  );
  const url = (await child.waitForLine(/^txtfs (http:\/\/127\.0\.0\.1:\d+)/, 600_000))[1]!;
  for (;;) {
    const res = await fetch(`${url}/readyz`).catch(() => undefined);
    if (res?.status === 200) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  return { child, url, readyMs: performance.now() - t0 };
}

const tmp = mkdtempSync(join(tmpdir(), "txtfs-bench-scale-"));
const data = values.keep ? resolve(values.keep) : join(tmp, "data");
mkdirSync(data, { recursive: true });
const statePath = join(data, "bench-scale.json");
let cluster: PgCluster | undefined;
const servers: Server[] = [];
const stopServers = async () => {
  for (const s of servers.splice(0)) await s.child.stop();
};
// Ctrl-C, a kill or a run past two hours still stops the servers and the cluster started here.
cleanUpOnStop(
  async () => {
    await stopServers();
    cluster?.stop();
    rmSync(tmp, { recursive: true, force: true });
  },
  7200,
  log,
);
try {
  let db: string | undefined;
  if (postgres) {
    cluster = await startPgCluster({ durable: true });
    db = await createDatabase(cluster.url, "scale");
    log(`postgres cluster on port ${cluster.port}`);
  }
  const storeArgs = (n: number) => (db ? ["--data", join(data, `s${n}`), "--db", db] : ["--data", data]);
  let state: State;
  if (existsSync(statePath)) {
    state = JSON.parse(readFileSync(statePath, "utf8"));
    // The accounts asked for and the reader.
    if (state.accounts.length !== accountCount + 1)
      throw new Error(`${data} holds ${state.accounts.length - 1} accounts, not ${accountCount}`);
    log(`reusing ${data}: ${state.total} notes`);
  } else {
    log(`creating ${accountCount + 1} accounts`);
    // One more than asked: a reader the first account shares a folder with (the share check).
    const accounts = await createAccounts(fillRoot, { dataDir: data, db }, 0, accountCount + 1);
    state = { accounts, made: accounts.map(() => 0), sample: [], total: 0 };
  }
  const save = () => writeFileSync(statePath, JSON.stringify(state));

  const start = async (txtfsRoot: string) => {
    const first = await serve(txtfsRoot, storeArgs(0));
    servers.push(first);
    for (let n = 1; n < serverCount; n++) servers.push(await serve(txtfsRoot, storeArgs(n)));
    return first.readyMs;
  };

  /** Fills to `size` notes over the accounts (not the reader), in imports of up to 1,000. */
  const fill = async (size: number) => {
    const url = servers[0]!.url;
    const t0 = performance.now();
    const before = state.total;
    // The first account's notes still to make before this size is reached (--first).
    const firstLeft = () =>
      firstNotes === undefined ? 0 : Math.max(0, Math.min(firstNotes, size) - state.made[0]!);
    let savedAt = performance.now();
    // Notes so far, the rate since the start and over the last stretch (the rate falls as it grows).
    let loggedAt = performance.now();
    let loggedTotal = state.total;
    const progress = () => {
      const now = performance.now();
      const rate = (notes: number, ms: number) => Math.round(notes / (ms / 1000));
      log(
        `  ${state.total} notes (${rate(state.total - before, now - t0)}/s, ` +
          `${rate(state.total - loggedTotal, now - loggedAt)}/s since the last line) at ${new Date().toISOString().slice(11, 19)}`,
      );
      loggedAt = now;
      loggedTotal = state.total;
    };
    while (state.total < size) {
      for (let a = 0; a < accountCount && state.total < size; a++) {
        const want =
          firstNotes === undefined
            ? Math.ceil((size - state.total) / (accountCount - a))
            : a === 0
              ? firstLeft()
              : Math.ceil((size - state.total - firstLeft()) / (accountCount - a));
        if (want <= 0) continue;
        const n = Math.min(1000, want);
        const from = state.made[a]!;
        const files = Array.from({ length: n }, (_, k) => note(from + k));
        const res = await call(url, state.accounts[a]!.key, "POST", "/api/v1/files/import", { files });
        if (a === 0 && state.sample.length < 400)
          state.sample.push(...res.body.files.map((f: { id: string }) => f.id));
        state.made[a] = from + n;
        state.total += n;
        // After every import (one transaction each), so a run stopped mid-fill resumes exactly; with
        // many accounts (imports of a few notes, the state a MiB of keys) at most every 2 s: a
        // resumed run imports the last few again, by the same paths (the import updates them).
        if (accountCount <= 100 || performance.now() - savedAt > 2000) {
          save();
          savedAt = performance.now();
        }
        if (performance.now() - loggedAt > 30_000) progress();
      }
      if (state.total % 20_000 < 1000 * accountCount || state.total >= size) progress();
    }
    save();
    return { notes: state.total - before, seconds: (performance.now() - t0) / 1000 };
  };

  /** Prints the figures so far (`last`: the whole run's) and writes them to --out. */
  function report(last: boolean) {
    const m = machineInfo();
    const title =
      `${join(root, "bin/txtfs")}, ${postgres ? `PostgreSQL (durable), ${serverCount} server(s)` : "SQLite"}, ` +
      `${accountCount} account(s) (notes spread evenly; measured on the first), ${samples} samples per operation`;
    const machine = `${m.cpus} cores, ${m.node}, load at end ${m.load}`;
    const table = markdownTable(["operation", "notes", "p50 ms", "p99 ms"], rows, ["l", "r", "r", "r"]);
    const ratio = markdownTable(
      ["operation", `p50 at ${state.total} / at ${sizes[0]}`],
      [...p50s].map(([name, v]) => [name, `${(v.at(-1)! / v[0]!).toFixed(2)}x`]),
      ["l", "r"],
    );
    const factTable = markdownTable(["measure", "value"], facts, ["l", "r"]);
    const markdown = `${title}\n${machine}\n\n${table}\n\n${ratio}\n\n${factTable}\n`;
    process.stdout.write(`${last ? "" : "(so far) "}${title}\n${machine}\n\n`);
    process.stdout.write(
      `${textTable(["operation", "notes", "p50 ms", "p99 ms"], rows, ["l", "r", "r", "r"])}\n\n`,
    );
    process.stdout.write(
      `${textTable(
        ["operation", "ratio"],
        [...p50s].map(([n, v]) => [n, `${(v.at(-1)! / v[0]!).toFixed(2)}x`]),
        ["l", "r"],
      )}\n\n`,
    );
    process.stdout.write(`${textTable(["measure", "value"], facts, ["l", "r"])}\n`);
    if (values.out) writeFileSync(resolve(values.out), markdown);
  }

  const rows: string[][] = [];
  let topics: number | undefined;
  const p50s = new Map<string, number[]>();
  const facts: string[][] = [];
  for (const size of sizes) {
    if (servers.length === 0) await start(fillRoot);
    const filled = state.total < size ? await fill(size) : undefined;
    if (filled)
      facts.push([`fill to ${state.total}`, `${filled.notes} notes in ${filled.seconds.toFixed(0)} s`]);
    if (values["fill-only"]) {
      // Filled, not measured (bench:scale-compare measures two kept stores side by side).
      if (filled) log(`filled to ${state.total}: ${filled.notes} notes in ${filled.seconds.toFixed(0)} s`);
      continue;
    }
    // A restart at this size: the time to /readyz (with --migrate-from: this txtfs's migrations).
    await stopServers();
    const readyMs = await start(root);
    const urls = servers.map((s) => s.url);
    const pid = servers[0]!.child.pid;
    await new Promise((r) => setTimeout(r, 2000));
    const idle = rssMiB(pid);

    topics ??= topicsAt(state);
    const { sample, ops } = await operations({ urls, data, state, samples, size, topics });
    let peak = idle;
    const sampler = setInterval(() => {
      for (const s of servers) peak = Math.max(peak, rssMiB(s.child.pid));
    }, 100);
    try {
      for (const op of ops) {
        // Warm: the same request first (the "create" one is undone by "delete" below).
        const w0 = performance.now();
        if (op.name !== "create" && op.name !== "rename" && op.name !== "delete") await op.run(sample[0]!, 0);
        // The first search after a start indexes what is still noted (after a migration: everything).
        if (op.name === "search, a rare word")
          facts.push([
            `first search after the start at ${state.total}`,
            `${fmtMs(performance.now() - w0)} ms`,
          ]);
        const times: number[] = [];
        for (const [k, id] of sample.entries()) {
          const t0 = performance.now();
          await op.run(id, k);
          times.push(performance.now() - t0);
        }
        p50s.set(op.name, [...(p50s.get(op.name) ?? []), median(times)]);
        rows.push([op.name, String(state.total), fmtMs(median(times)), fmtMs(percentile(times, 99))]);
      }
    } finally {
      clearInterval(sampler);
    }
    facts.push(
      [`start to /readyz at ${state.total}`, `${fmtMs(readyMs)} ms`],
      [`server RSS at ${state.total}, idle / under load`, `${idle.toFixed(0)} / ${peak.toFixed(0)} MiB`],
    );
    // After every size, so that a run stopped before its largest keeps what it measured.
    report(size === sizes.at(-1));
  }
} finally {
  await stopServers();
  cluster?.stop();
  rmSync(tmp, { recursive: true, force: true });
}

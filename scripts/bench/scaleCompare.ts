// Two stores bench:scale kept (`--keep DIR`, SQLite), side by side: a server on each, and every
// operation's samples alternate between them (small, large, small, ...), so the machine's load falls
// on both alike and the ratio means something on a shared machine. Asserts no timings.
//
//   node scripts/bench/scaleCompare.ts --small DIR --large DIR [--samples 30] [--out FILE]
//   ... --small-db URL --large-db URL     the same stores copied to PostgreSQL (`txtfs admin migrate`):
//                                         the servers run on those, DIR gives the accounts and samples
//   ... --only "search,related"           only the operations whose names hold one of these
//   ... --root ../other-checkout          the servers of another checkout (before and after a change)
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import {
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
import { type Operation, operations, type State, topicsAt } from "./scaleOps.ts";

const here = resolve(import.meta.dirname, "../..");
const { values } = parseArgs({
  options: {
    small: { type: "string" },
    large: { type: "string" },
    samples: { type: "string", default: "30" },
    out: { type: "string" },
    "small-db": { type: "string" },
    "large-db": { type: "string" },
    only: { type: "string" },
    root: { type: "string" },
  },
});
if (!values.small || !values.large) throw new Error("--small DIR and --large DIR: stores bench:scale kept");
if (Boolean(values["small-db"]) !== Boolean(values["large-db"]))
  throw new Error("--small-db and --large-db go together");
const root = values.root ? resolve(values.root) : here;
const only = values.only?.split(",").map((s) => s.trim());
const samples = numberOption("samples", values.samples, 30, 3, true);

const rssMiB = (pid: number) => {
  const m = readFileSync(`/proc/${pid}/status`, "utf8").match(/^VmRSS:\s+(\d+) kB/m);
  return m ? Number(m[1]) / 1024 : Number.NaN;
};

const tmp = mkdtempSync(join(tmpdir(), "txtfs-bench-compare-"));

/** A server on the kept store in `dir`, or (with `db`) on its copy in PostgreSQL. */
async function serve(dir: string, db: string | undefined) {
  const t0 = performance.now();
  const store = db ? ["--data", mkdtempSync(join(tmp, "pg-")), "--db", db] : ["--data", dir];
  const child = startChild(
    "serve",
    process.execPath,
    [join(root, "bin/txtfs"), "serve", "--port", "0", "--rate-limit", "100000000", ...store],
    { env: { ...process.env, TXTFS_LOG_LEVEL: "warn" } },
  );
  const url = (await child.waitForLine(/^txtfs (http:\/\/127\.0\.0\.1:\d+)/, 600_000))[1]!;
  while ((await fetch(`${url}/readyz`).catch(() => undefined))?.status !== 200)
    await new Promise((r) => setTimeout(r, 20));
  return { child, url, readyMs: performance.now() - t0 };
}

const stores = [
  [values.small, values["small-db"]],
  [values.large, values["large-db"]],
].map(([dir, db]) => ({
  dir: resolve(dir!),
  db,
  state: JSON.parse(readFileSync(join(dir!, "bench-scale.json"), "utf8")) as State,
}));
const servers: Awaited<ReturnType<typeof serve>>[] = [];
cleanUpOnStop(
  async () => {
    for (const s of servers.splice(0)) await s.child.stop();
    rmSync(tmp, { recursive: true, force: true });
  },
  3600,
  (msg) => process.stderr.write(`[bench] ${msg}\n`),
);
try {
  for (const s of stores) servers.push(await serve(s.dir, s.db));
  await new Promise((r) => setTimeout(r, 2000));
  const idle = servers.map((s) => rssMiB(s.child.pid));
  const topics = topicsAt(stores[0]!.state); // the small store's rare words, searched in both
  const prepared: { sample: string[]; ops: Operation[] }[] = [];
  for (const [i, s] of stores.entries())
    prepared.push(
      await operations({
        urls: [servers[i]!.url],
        data: s.dir,
        state: s.state,
        samples,
        size: s.state.total,
        topics,
      }),
    );
  const peak = [...idle];
  const sampler = setInterval(() => {
    for (const [i, s] of servers.entries()) peak[i] = Math.max(peak[i]!, rssMiB(s.child.pid));
  }, 100);
  const rows: string[][] = [];
  try {
    for (const [o, op] of prepared[0]!.ops.entries()) {
      if (only && !only.some((w) => op.name.includes(w))) continue;
      const times: number[][] = [[], []];
      for (const p of prepared) {
        // Warm (the "create" one is undone by "delete" below).
        if (!["create", "rename", "delete"].includes(op.name)) await p.ops[o]!.run(p.sample[0]!, 0);
      }
      for (let k = 0; k < samples; k++)
        for (const [i, p] of prepared.entries()) {
          const t0 = performance.now();
          await p.ops[o]!.run(p.sample[k]!, k);
          times[i]!.push(performance.now() - t0);
        }
      rows.push([
        op.name,
        fmtMs(median(times[0]!)),
        fmtMs(median(times[1]!)),
        fmtMs(percentile(times[0]!, 99)),
        fmtMs(percentile(times[1]!, 99)),
        `${(median(times[1]!) / median(times[0]!)).toFixed(2)}x`,
      ]);
    }
  } finally {
    clearInterval(sampler);
  }
  // A store's size, and its accounts when the two differ in them (--accounts: 1 and 10,000).
  const accountsOf = (s: (typeof stores)[number]) => s.state.accounts.length - 1; // not the reader
  const byAccounts = accountsOf(stores[0]!) !== accountsOf(stores[1]!);
  const [small, large] = stores.map(
    (s) =>
      `${s.state.total.toLocaleString("en-US")}${byAccounts ? ` (${accountsOf(s).toLocaleString("en-US")} accounts, ${s.state.made[0]!.toLocaleString("en-US")} measured)` : ""}`,
  );
  const head = ["operation", `p50 at ${small}`, `p50 at ${large}`, "p99 small", "p99 large", "ratio"];
  const align = ["l", "r", "r", "r", "r", "r"] as const;
  const facts = stores.map((s, i) => [
    `${s.state.total.toLocaleString("en-US")} notes, ${accountsOf(s).toLocaleString("en-US")} account(s)`,
    `start to /readyz ${fmtMs(servers[i]!.readyMs)} ms, RSS ${idle[i]!.toFixed(0)} / ${peak[i]!.toFixed(0)} MiB idle / at peak`,
  ]);
  const m = machineInfo();
  const title = `${join(root, "bin/txtfs")}, ${stores[0]!.db ? "PostgreSQL (durable, one server each)" : "SQLite"}, side by side (samples alternate), ${samples} samples per operation; ${m.cpus} cores, ${m.node}, load at end ${m.load}`;
  process.stdout.write(
    `${title}\n\n${textTable(head, rows, [...align])}\n\n${textTable(["store", "server"], facts, ["l", "l"])}\n`,
  );
  if (values.out)
    writeFileSync(
      resolve(values.out),
      `${title}\n\n${markdownTable(head, rows, [...align])}\n\n${markdownTable(["store", "server"], facts, ["l", "l"])}\n`,
    );
} finally {
  for (const s of servers.splice(0)) await s.child.stop();
  rmSync(tmp, { recursive: true, force: true });
}

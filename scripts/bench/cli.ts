// How fast the CLI starts: `txtfs --help`, `--version`, `status` and `serve --help`, each run many
// times (interleaved, so load on the machine falls on every command alike), against `node -e 0`.
// Reported as medians and as a ratio to a bare Node start, cold (no compile cache) and warm.
//
//   node scripts/bench/cli.ts [--runs 20] [--root DIR]
//
// --root measures another checkout (e.g. one at an older commit, to compare before and after).
// Results go to stdout and to bench-results/cli.md.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: { runs: { type: "string", default: "20" }, root: { type: "string" } },
});
const runs = Number(values.runs);
const root = resolve(values.root ?? join(import.meta.dirname, "..", ".."));
const bin = join(root, "bin", "txtfs");
const node = process.execPath;

const commands: Record<string, string[]> = {
  "node -e 0": ["-e", "0"],
  "txtfs --help": [bin, "--help"],
  "txtfs --version": [bin, "--version"],
  "txtfs status": [bin, "status"],
  "txtfs serve --help": [bin, "serve", "--help"],
};

/** Wall time of one run in ms; `status` reads an empty config dir so no mounts are listed. */
function timeOnce(args: string[], env: NodeJS.ProcessEnv): number {
  const started = process.hrtime.bigint();
  const r = spawnSync(node, args, { env, stdio: ["ignore", "ignore", "pipe"] });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (r.status !== 0) throw new Error(`${args.join(" ")} exited ${r.status}: ${r.stderr}`);
  return ms;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

function measure(label: string, envFor: (round: number) => NodeJS.ProcessEnv) {
  const times: Record<string, number[]> = Object.fromEntries(Object.keys(commands).map((k) => [k, []]));
  for (let round = 0; round < runs; round++) {
    for (const [name, args] of Object.entries(commands)) times[name]!.push(timeOnce(args, envFor(round)));
  }
  const base = median(times["node -e 0"]!);
  const rows = Object.entries(times).map(([name, ts]) => {
    const m = median(ts);
    return `| ${name} | ${m.toFixed(0)} ms | ${Math.min(...ts).toFixed(0)} ms | ${(m / base).toFixed(1)}x |`;
  });
  return [`### ${label}`, "", "| command | median | min | vs node -e 0 |", "|---|---|---|---|", ...rows, ""];
}

const config = mkdtempSync(join(tmpdir(), "txtfs-bench-cli-"));
const cache = mkdtempSync(join(tmpdir(), "txtfs-bench-cc-"));
const common = { ...process.env, TXTFS_CONFIG: config, XDG_CONFIG_HOME: config };
let commit = "";
try {
  commit = execFileSync("git", ["-C", root, "rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim();
} catch {}
const out = [
  `## CLI start-up (${root}${commit ? ` at ${commit}` : ""}, Node ${process.version}, ${runs} runs each)`,
  "",
  // Cold: a fresh, empty compile cache for every round (the first run after an install or upgrade).
  ...measure("cold (no compile cache)", () => ({ ...common, NODE_DISABLE_COMPILE_CACHE: "1" })),
  // Warm: the compile cache filled by earlier runs (every later run).
  ...measure("warm (compile cache)", () => ({ ...common, NODE_COMPILE_CACHE: cache })),
];
rmSync(config, { recursive: true, force: true });
rmSync(cache, { recursive: true, force: true });
const text = out.join("\n");
process.stdout.write(`${text}\n`);
const resultsDir = join(import.meta.dirname, "..", "..", "bench-results");
mkdirSync(resultsDir, { recursive: true });
writeFileSync(join(resultsDir, "cli.md"), `${text}\n`);

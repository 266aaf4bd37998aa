// Summary of a soak run (scripts/soak): reads the JSON lines test/mount/model.test.ts appends to
// TXTFS_MODEL_REPORT and prints the mix, the seeds, and what differed. Exit 1 when anything did.
import { readFileSync } from "node:fs";

interface Report {
  label: string;
  seed: number;
  mode: string;
  runs: number;
  ops: number;
  effective: number;
  slowestMs: number;
  mix: Record<string, number>;
  failed: boolean;
  failure?: { step: number; problems: string[] };
  text?: string;
}

const [file, seconds] = process.argv.slice(2);
if (!file) throw new Error("usage: soak-report.ts REPORT.jsonl [SECONDS]");
const reports: Report[] = readFileSync(file, "utf8")
  .split("\n")
  .filter(Boolean)
  .map((l) => JSON.parse(l));

const mix: Record<string, number> = {};
let ops = 0;
let effective = 0;
let runs = 0;
let slowest = 0;
for (const r of reports) {
  ops += r.ops;
  effective += r.effective;
  runs += r.runs;
  slowest = Math.max(slowest, r.slowestMs);
  for (const [k, v] of Object.entries(r.mix)) mix[k] = (mix[k] ?? 0) + v;
}
const failed = reports.filter((r) => r.failed);
const problems = failed.flatMap((r) => r.failure?.problems ?? []);
// A lost or altered save: bytes that differ (mount or service against the model), a note missing,
// or a remote edit that a save which never saw it replaced.
const lost = problems.filter(
  (p) =>
    /lost save|lost remote edit/.test(p) ||
    / mount ".*" model |service: .* is |service: note .* missing|missing on the mount/.test(p),
);
const identity = problems.filter((p) => /identity lost|share id|tags /.test(p));

const out = process.stdout;
const kinds = (f: (r: Report) => string | number) => [...new Set(reports.map(f))].join(", ");
out.write(
  `\nseed/mode pairs: ${reports.length} (properties: ${kinds((r) => r.label)}; seeds: ${kinds((r) => r.seed)}; modes: ${kinds((r) => r.mode)})\n`,
);
out.write(
  `sequences run: ${runs} (shrinking included); operations run: ${ops}, of which ${effective} succeeded on the model\n`,
);
out.write(
  `mix: ${Object.entries(mix)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${v}`)
    .join(", ")}\n`,
);
out.write(
  `slowest operation on the mount: ${Math.round(slowest)} ms${seconds ? `; wall time ${seconds} s` : ""}\n`,
);
out.write(
  `differences: ${failed.length} of ${reports.length} seed/mode pairs differ; lost or altered saves: ${lost.length}; identity/tag differences: ${identity.length}; other: ${problems.length - lost.length - identity.length}\n`,
);
for (const r of failed) out.write(`\n--- [${r.label}] ${r.text ?? `seed ${r.seed} ${r.mode}: failed`}\n`);
process.exitCode = failed.length ? 1 : 0;

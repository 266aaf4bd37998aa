// The service's costs as the store grows: one account filled to each size (notes of 0.5-8 KB of
// words from one vocabulary and their topic's, 50 folders, 1-4 tags each from 200 of varying
// popularity), then each operation on the same sampled notes at every size. Reports medians, p99
// and the ratio of the largest store to the smallest; it asserts no timings.
//
//   node scripts/bench/scale.ts                       sizes 2000,20000 (npm run bench:scale)
//   node scripts/bench/scale.ts --sizes 10000,100000 --samples 40 --root ../other-checkout
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { fmtMs, machineInfo, median, percentile, startChild, textTable } from "./lib.ts";

const root = resolve(import.meta.dirname, "../..");
const log = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);
const { values } = parseArgs({
  options: {
    sizes: { type: "string", default: "2000,20000" },
    samples: { type: "string", default: "30" },
    keep: { type: "string" }, // fill this (new) data dir and keep it, to look into afterwards
    root: { type: "string" }, // another checkout whose txtfs to measure (to compare two commits)
  },
});
const txtfs = join(values.root ? resolve(values.root) : root, "bin/txtfs");
const sizes = values.sizes
  .split(",")
  .map(Number)
  .sort((a, b) => a - b);
const samples = Number(values.samples);

// A deterministic generator, so every run (and every commit compared) builds the same notes.
let seed = 42;
const rand = () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
  return seed / 2_147_483_648;
};
const vocabulary = Array.from({ length: 5000 }, (_, i) => `w${i.toString(36)}x${(i * 7919).toString(36)}`);
// Zipf-like: low indexes are common, as words and tags are in real notes.
const zipf = (n: number) => Math.min(n - 1, Math.floor(n ** rand()) - 1 + Math.floor(rand() * 2));
// Each run of 40 notes shares a topic: 12 words of its own, a few of them in each of its notes, so
// similar text has something to find however large the store grows (as a person's topics grow).
const note = (i: number) => {
  const bytes = 500 + Math.floor(rand() * 7500);
  const topic = Math.floor(i / 40).toString(36);
  const words: string[] = [];
  for (let len = 0; len < bytes; ) {
    const w = rand() < 0.05 ? `t${topic}k${Math.floor(rand() * 12)}` : vocabulary[zipf(vocabulary.length)]!;
    words.push(w);
    len += w.length + 1;
  }
  const tags = [...new Set(Array.from({ length: 1 + Math.floor(rand() * 4) }, () => `tag${zipf(200)}`))];
  return { path: `f${i % 50}/sub${i % 7}/n${i}.md`, content: words.join(" "), tags };
};

const data = values.keep ?? mkdtempSync(join(tmpdir(), "txtfs-bench-scale-"));
const server = startChild(
  "serve",
  process.execPath,
  [txtfs, "serve", "--data", data, "--port", "0", "--rate-limit", "100000000"],
  {
    env: { ...process.env, TXTFS_LOG_LEVEL: "warn" },
  },
);
try {
  const url = (await server.waitForLine(/^txtfs (http:\S+)/, 30_000))[1]!;
  const key = (await server.waitForLine(/^export TXTFS_API_KEY=(\S+)/, 30_000))[1]!;
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(url + path, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<any>;
  };
  const ids: string[] = [];
  // Each operation, measured on the same sampled notes (the first ones made) at every size.
  const ops: { name: string; run: (id: string, k: number) => Promise<unknown> }[] = [
    { name: "related notes", run: (id) => call("GET", `/api/v1/files/${id}/connections`) },
    { name: "GET /api/me", run: () => call("GET", "/api/me") },
    { name: "listing page (100)", run: () => call("GET", "/api/v1/files?limit=100") },
    { name: "read", run: (id) => call("GET", `/api/v1/files/${id}`) },
    { name: "PUT", run: (id, k) => call("PUT", `/api/v1/files/${id}`, { content: `edited ${k} ${id}` }) },
    {
      name: "search, a rare word",
      run: (_id, k) => call("GET", `/api/v1/search?q=t${(k % 40).toString(36)}k3`),
    },
    {
      name: "search, two common words",
      run: () => call("GET", `/api/v1/search?q=${vocabulary[0]}%20${vocabulary[1]}`),
    },
  ];
  const results = new Map<string, number[]>(); // op -> p50 per size
  const rows: string[][] = [];
  for (const size of sizes) {
    log(`filling to ${size} notes`);
    while (ids.length < size) {
      const batch = Array.from({ length: Math.min(1000, size - ids.length) }, (_, k) => note(ids.length + k));
      const res = await call("POST", "/api/v1/files/import", { files: batch });
      ids.push(...res.files.map((f: { id: string }) => f.id));
    }
    const sample = Array.from({ length: samples }, (_, k) => ids[Math.floor((k * sizes[0]!) / samples)]!);
    for (const op of ops) {
      await op.run(sample[0]!, 0); // warm
      const times: number[] = [];
      for (const [k, id] of sample.entries()) {
        const t0 = performance.now();
        await op.run(id, k);
        times.push(performance.now() - t0);
      }
      results.set(op.name, [...(results.get(op.name) ?? []), median(times)]);
      rows.push([op.name, String(size), fmtMs(median(times)), fmtMs(percentile(times, 99))]);
    }
  }
  const m = machineInfo();
  process.stdout.write(`${txtfs}, SQLite, one account (${m.cpus} cores, ${m.node}, load ${m.load})\n`);
  process.stdout.write(
    `${textTable(["operation", "notes", "p50 ms", "p99 ms"], rows, ["l", "r", "r", "r"])}\n\n`,
  );
  process.stdout.write(
    `${textTable(
      ["operation", `p50 at ${sizes.at(-1)} / at ${sizes[0]}`],
      [...results].map(([name, p50s]) => [name, `${(p50s.at(-1)! / p50s[0]!).toFixed(2)}x`]),
      ["l", "r"],
    )}\n`,
  );
} finally {
  await server.stop();
  if (!values.keep) rmSync(data, { recursive: true, force: true });
}

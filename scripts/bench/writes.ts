// Writes against the disk's limit: this disk's fsync rate (one thread: write 4 KiB, fsync, in the
// data directory), then PUT of a 4 KB note by 32 concurrent writers, each on a note of its own, on
// the embedded store, in one run. Reports writes/s and their ratio to fsyncs/s; asserts no timings.
//
//   node scripts/bench/writes.ts                     (npm run bench:writes) 5 s per workload
//   node scripts/bench/writes.ts --seconds 3 --writers 32 --accounts 8 --root ../other-checkout

import { execFileSync } from "node:child_process";
import { closeSync, fsyncSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { machineInfo, median, percentile, startChild, textTable } from "./lib.ts";

const root = resolve(import.meta.dirname, "../..");
const log = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);
const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "5" },
    writers: { type: "string", default: "32" },
    accounts: { type: "string", default: "1" },
    root: { type: "string" }, // another checkout whose txtfs to measure (to compare two commits)
  },
});
const seconds = Number(values.seconds);
const writers = Number(values.writers);
const accounts = Number(values.accounts);
const txtfs = join(values.root ? resolve(values.root) : root, "bin/txtfs");
const NOTE = "# A 4 KB note\n\n".padEnd(4096, "notes as files, served over HTTP. ");

function fsyncsPerSecond(dir: string): number {
  const fd = openSync(join(dir, "fsync-probe"), "w");
  const block = Buffer.alloc(4096, 7);
  let n = 0;
  const end = performance.now() + seconds * 1000;
  while (performance.now() < end) {
    writeSync(fd, block, 0, block.length, 0);
    fsyncSync(fd);
    n++;
  }
  closeSync(fd);
  return n / seconds;
}

const data = mkdtempSync(join(tmpdir(), "txtfs-bench-writes-"));
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
  const keys = [(await server.waitForLine(/^export TXTFS_API_KEY=(\S+)/, 30_000))[1]!];
  for (let a = 1; a < accounts; a++) {
    const email = `writer${a}@localhost`;
    execFileSync(process.execPath, [txtfs, "admin", "user", "add", email, "--data", data]);
    keys.push(
      execFileSync(process.execPath, [txtfs, "admin", "key", "add", email, "--data", data], {
        encoding: "utf8",
      })
        .trim()
        .split("\n")
        .at(-1)!,
    );
  }
  const call = async (key: string, method: string, path: string, body: unknown) => {
    const res = await fetch(url + path, {
      method,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<{ file: { id: string } }>;
  };
  const notes = await Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      const key = keys[w % keys.length]!;
      const res = await call(key, "POST", "/api/v1/files", { name: `w${w}.md`, content: NOTE });
      return { key, id: res.file.id };
    }),
  );
  const fsyncs = fsyncsPerSecond(data);
  log(`fsyncs: ${fsyncs.toFixed(0)}/s`);
  const latencies: number[] = [];
  const end = performance.now() + seconds * 1000;
  let done = 0;
  await Promise.all(
    notes.map(async ({ key, id }, w) => {
      for (let i = 0; performance.now() < end; i++) {
        const t0 = performance.now();
        await call(key, "PUT", `/api/v1/files/${id}`, { content: `${NOTE}${w}.${i}` });
        latencies.push(performance.now() - t0);
        done++;
      }
    }),
  );
  const puts = done / seconds;
  const m = machineInfo();
  process.stdout.write(
    `${txtfs}: ${writers} writers over ${accounts} account(s), SQLite (${m.cpus} cores, load ${m.load})\n`,
  );
  process.stdout.write(
    `${textTable(
      ["fsyncs/s", "PUT/s", "PUT/fsync", "p50 ms", "p99 ms"],
      [
        [
          fsyncs.toFixed(0),
          puts.toFixed(0),
          (puts / fsyncs).toFixed(2),
          median(latencies).toFixed(1),
          percentile(latencies, 99).toFixed(1),
        ],
      ],
      ["r", "r", "r", "r", "r"],
    )}\n`,
  );
} finally {
  await server.stop();
  rmSync(data, { recursive: true, force: true });
}

// What one request of `/dav/` on `txtfs serve` costs as its folder grows: PUT (new, over), GET,
// PROPFIND depth 0, MOVE and DELETE of one note in a folder of --small notes and one of --big,
// measured side by side in one run on one service. A ratio near 1 is O(1)/O(log n) per request;
// near big/small, the request reads the whole folder.
//
//   node scripts/bench/davScale.ts [--small 100] [--big 5000] [--reps 30]
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import {
  argValue,
  cleanEnv,
  cleanUpOnStop,
  fmtMs,
  machineInfo,
  markdownTable,
  median,
  numberOption,
  startChild,
} from "./lib.ts";

const arg = argValue;
const SMALL = numberOption("small", arg("small"), 100, 1, true);
const BIG = numberOption("big", arg("big"), 5000, 2, true);
const REPS = numberOption("reps", arg("reps"), 30, 3, true);
const BIN = join(import.meta.dirname, "..", "..", "bin", "txtfs");
const log = (m: string) => process.stderr.write(`bench:davScale: ${m}\n`);

const base = mkdtempSync("/var/tmp/txtfs-bench-davscale-");
const serve = startChild(
  "serve",
  process.execPath,
  [BIN, "serve", "--data", join(base, "data"), "--port", "0", "--rate-limit", "100000000"],
  { env: cleanEnv({ TXTFS_CONFIG: join(base, "config"), TXTFS_CACHE: join(base, "cache") }) },
);
cleanUpOnStop(
  async () => {
    await serve.stop();
    rmSync(base, { recursive: true, force: true });
  },
  900,
  log,
);

const time = async (fn: () => Promise<unknown>) => {
  const t = performance.now();
  await fn();
  return performance.now() - t;
};

try {
  const serviceUrl = (await serve.waitForLine(/^txtfs (http:\/\/\S+)/, 30_000))[1]!;
  const key = (await serve.waitForLine(/TXTFS_API_KEY=(txt_\w+)/, 30_000))[1]!;
  const headers = { authorization: `Bearer ${key}` };
  const api = (path: string, json: unknown) =>
    fetch(serviceUrl + path, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify(json),
    }).then((r) => r.json() as Promise<{ folder: { id: string } }>);
  const dav = async (method: string, path: string, extra: Record<string, string> = {}, body?: string) => {
    const res = await fetch(`${serviceUrl}/dav/${path}`, { method, body, headers: { ...headers, ...extra } });
    await res.arrayBuffer();
    if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status}`);
  };
  const seed = async (name: string, n: number) => {
    const folderId = (await api("/api/v1/folders", { name, parentFolderId: null })).folder.id;
    for (let i = 0; i < n; i += 50)
      await Promise.all(
        Array.from({ length: Math.min(50, n - i) }, (_, j) =>
          api("/api/v1/files", { name: `n${i + j}.md`, folderId, content: `# Note ${i + j}\n` }),
        ),
      );
  };
  log(`seeding ${SMALL} and ${BIG} notes`);
  await seed("small", SMALL);
  await seed("big", BIG);

  // Each operation, in each folder, alternating the folders so that load drifts hit both alike.
  const ops: [string, (folder: string, r: number) => Promise<unknown>][] = [
    ["PUT of a new note", (f, r) => dav("PUT", `${f}/new${r}.md`, {}, `new ${r}\n`)],
    ["PUT over a note", (f, r) => dav("PUT", `${f}/n${r}.md`, {}, `changed ${r}\n`)],
    ["GET of a note", (f, r) => dav("GET", `${f}/n${r}.md`)],
    ["PROPFIND depth 0 of a note", (f, r) => dav("PROPFIND", `${f}/n${r}.md`, { depth: "0" })],
    [
      "MOVE of a note",
      (f, r) => dav("MOVE", `${f}/new${r}.md`, { destination: `${serviceUrl}/dav/${f}/moved${r}.md` }),
    ],
    ["DELETE of a note", (f, r) => dav("DELETE", `${f}/moved${r}.md`)],
  ];
  const rows: string[][] = [];
  for (const [what, op] of ops) {
    const small: number[] = [];
    const big: number[] = [];
    for (let r = 0; r < REPS; r++) {
      small.push(await time(() => op("small", r)));
      big.push(await time(() => op("big", r)));
    }
    const [s, b] = [median(small), median(big)];
    rows.push([what, fmtMs(s), fmtMs(b), (b / s).toFixed(2)]);
  }
  const m = machineInfo();
  console.log(`\n/dav/ on txtfs serve (SQLite), median of ${REPS} in ms; ${m.cpus} on ${m.os}\n`);
  console.log(
    markdownTable(["request", `folder of ${SMALL}`, `folder of ${BIG}`, "ratio"], rows, ["l", "r", "r", "r"]),
  );
} finally {
  await serve.stop();
  rmSync(base, { recursive: true, force: true });
}

// The context brain's figures: the server time an ideation adds beyond the provider's own time, and
// full-text search latency on a 10,000-note account, on SQLite and on PostgreSQL.
//
//   node scripts/bench/brain.ts            10,000 notes, 300 searches and 30 ideations per store
//   node scripts/bench/brain.ts --quick    2,000 notes, 50 searches, 5 ideations
//
// The provider is the tests' stand-in (a real OpenAI-compatible HTTP server on 127.0.0.1, answering at
// once); its time is what it spends per request, measured where it answers. The server's time is its
// Server-Timing. It reports figures; it asserts nothing.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { createLogger } from "../../src/lib/logger.ts";
import { createKey, createUser } from "../../src/server/domain/accounts.ts";
import { startServer } from "../../src/server/serve.ts";
import { startFakeOpenAi } from "../../test/helpers/fakeOpenAi.ts";
import { createDatabase, startPgCluster } from "../../test/helpers/pgCluster.ts";
import { fmtMs, machineInfo, markdownTable, percentile, serverTimingMs } from "./lib.ts";

const root = resolve(import.meta.dirname, "../..");
const log = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);
const { values } = parseArgs({
  options: { quick: { type: "boolean", default: false }, out: { type: "string" } },
});
const NOTES = values.quick ? 2000 : 10_000;
const SEARCHES = values.quick ? 50 : 300;
const IDEATIONS = values.quick ? 5 : 30;
const out = resolve(root, values.out ?? "bench-results/brain.md");

// A deterministic vocabulary and notes of ~120 words each (Zipf-like: some words are common).
let seed = 42;
const rand = () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
  return seed / 2 ** 31;
};
const SYL = [
  "ka",
  "lo",
  "mi",
  "ren",
  "tor",
  "vel",
  "sha",
  "pu",
  "dri",
  "zen",
  "ol",
  "fa",
  "nir",
  "qu",
  "bes",
];
const VOCAB = Array.from({ length: 3000 }, () =>
  Array.from({ length: 2 + Math.floor(rand() * 3) }, () => SYL[Math.floor(rand() * SYL.length)]).join(""),
);
const word = () => VOCAB[Math.floor(VOCAB.length * rand() ** 2)]!;
const text = (n: number) => Array.from({ length: n }, word).join(" ");

interface Figures {
  store: string;
  searchP50: number;
  searchP99: number;
  searchServerP50: number;
  ideationTotalP50: number;
  providerP50: number;
  addedP50: number;
  addedP99: number;
}

async function measure(store: string, db: string | undefined): Promise<Figures> {
  const fake = await startFakeOpenAi();
  const dataDir = mkdtempSync(join(tmpdir(), "txtfs-bench-brain-"));
  const server = await startServer({
    host: "127.0.0.1",
    port: 0,
    dataDir,
    db,
    rateLimit: { limit: 1_000_000_000, anonymousLimit: 1_000_000 },
    retentionDays: 90,
    logger: createLogger("bench", "error"),
    brain: {
      operator: {
        baseUrl: fake.baseUrl,
        apiKey: "sk-bench",
        chatModel: "fake-chat",
        embeddingModel: null,
        transcriptionModel: null,
      },
      requestsPerDay: 1_000_000,
      tokensPerDay: 1_000_000_000,
    },
  });
  try {
    const key = await server.store.transaction(async (tx) => {
      const u = await createUser(tx, "bench@example.com", "Bench");
      await tx.users.setPlan(u.id, "pro");
      return (await createKey(tx, u.id, { label: "bench" })).secret;
    });
    const api = (method: string, path: string, body?: unknown) =>
      fetch(server.url + path, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
    log(`${store}: importing ${NOTES} notes`);
    for (let i = 0; i < NOTES; i += 1000) {
      const files = Array.from({ length: Math.min(1000, NOTES - i) }, (_, j) => ({
        path: `folder${(i + j) % 50}/note${i + j}.md`,
        content: `# ${text(4)}\n\n${text(120)}\n`,
        tags: [word()],
      }));
      const res = await api("POST", "/api/v1/files/import", { files });
      if (res.status !== 200) throw new Error(`import: ${res.status} ${await res.text()}`);
    }
    // Warm-up, then searches of one or two words.
    for (let i = 0; i < 10; i++) await (await api("GET", `/api/v1/search?q=${word()}`)).text();
    const wall: number[] = [];
    const srv: number[] = [];
    let hits = 0;
    for (let i = 0; i < SEARCHES; i++) {
      const q = i % 2 ? `${word()} ${word()}` : word();
      const t0 = performance.now();
      const res = await api("GET", `/api/v1/search?q=${encodeURIComponent(q)}&limit=20`);
      const body = (await res.json()) as { results: unknown[] };
      wall.push(performance.now() - t0);
      srv.push(serverTimingMs(res.headers.get("server-timing")) ?? Number.NaN);
      if (res.status !== 200) throw new Error(`search: ${res.status}`);
      hits += body.results.length;
    }
    log(`${store}: ${SEARCHES} searches, ${(hits / SEARCHES).toFixed(1)} results each`);
    const added: number[] = [];
    const total: number[] = [];
    const provider: number[] = [];
    for (let i = 0; i < IDEATIONS; i++) {
      fake.timings.length = 0;
      const res = await api("POST", "/api/v1/ideation", { seed: `${word()} ${word()} ${word()}` });
      await res.text();
      if (res.status !== 201) throw new Error(`ideation: ${res.status}`);
      const app = serverTimingMs(res.headers.get("server-timing"))!;
      const own = fake.timings.reduce((s, t) => s + t.ms, 0);
      total.push(app);
      provider.push(own);
      added.push(app - own);
    }
    return {
      store,
      searchP50: percentile(wall, 50),
      searchP99: percentile(wall, 99),
      searchServerP50: percentile(srv, 50),
      ideationTotalP50: percentile(total, 50),
      providerP50: percentile(provider, 50),
      addedP50: percentile(added, 50),
      addedP99: percentile(added, 99),
    };
  } finally {
    await server.close();
    await fake.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const results: Figures[] = [await measure("SQLite", undefined)];
const cluster = await startPgCluster({ durable: true });
try {
  results.push(await measure("PostgreSQL", await createDatabase(cluster.url)));
} finally {
  cluster.stop();
}
const m = machineInfo();
const table = markdownTable(
  [
    "store",
    "search p50 ms",
    "search p99 ms",
    "search server p50 ms",
    "ideation p50 ms",
    "provider p50 ms",
    "added p50 ms",
    "added p99 ms",
  ],
  results.map((r) => [
    r.store,
    fmtMs(r.searchP50),
    fmtMs(r.searchP99),
    fmtMs(r.searchServerP50),
    fmtMs(r.ideationTotalP50),
    fmtMs(r.providerP50),
    fmtMs(r.addedP50),
    fmtMs(r.addedP99),
  ]),
  ["l", "r", "r", "r", "r", "r", "r", "r"],
);
const report = `# Context brain figures\n\n${NOTES} notes in one account, ${SEARCHES} searches (one or two words, 20 results), ${IDEATIONS} ideations (stand-in provider on loopback answering at once; "added" = server time minus the provider's own time). ${m.cpus} CPUs (${m.cpuModel}), Node ${process.version}.\n\n${table}\n`;
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, report);
process.stdout.write(report);

// The store's search (SearchRepo.search, SQLite) of two checkouts on two stores bench:scale kept,
// side by side in one run: every sample alternates store and checkout, so the machine's load falls
// on all four alike. Reports medians and each checkout's large/small ratio for two common words,
// one common word and a rare word. Indexes what the stores still note first (as a search would),
// then only reads them; asserts no timings.
//
//   node scripts/bench/searchAb.ts --small DIR --large DIR --before OTHER_CHECKOUT [--samples 30]
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { parseArgs } from "node:util";
import type { SearchHit, SearchQuery } from "../../src/store/repos/search.ts";
import type { Sql } from "../../src/store/store.ts";
import { fmtMs, machineInfo, median, numberOption, textTable } from "./lib.ts";
import { topicWord, vocabulary } from "./scaleData.ts";

const here = resolve(import.meta.dirname, "../..");
const { values } = parseArgs({
  options: {
    small: { type: "string" },
    large: { type: "string" },
    before: { type: "string" },
    samples: { type: "string", default: "30" },
  },
});
if (!values.small || !values.large || !values.before)
  throw new Error("--small DIR --large DIR (stores bench:scale kept) --before CHECKOUT");
const samples = numberOption("samples", values.samples, 30, 3, true);

type Search = (filter: { ownerId: string }, q: SearchQuery) => Promise<SearchHit[]>;
async function searchOf(root: string, db: DatabaseSync): Promise<Search> {
  const { SearchRepo } = (await import(
    join(root, "src/store/repos/search.ts")
  )) as typeof import("../../src/store/repos/search.ts");
  const sql: Sql = {
    all: async (q, p = []) => db.prepare(q).all(...(p as never[])) as never[],
    get: async (q, p = []) => db.prepare(q).get(...(p as never[])) as never,
    run: async (q, p = []) => ({ changes: Number(db.prepare(q).run(...(p as never[])).changes) }),
  };
  const repo = new SearchRepo(sql, "sqlite");
  return (filter, q) => repo.search(filter, q);
}

const checkouts = [
  ["before", resolve(values.before)],
  ["after", here],
] as const;
const stores = await Promise.all(
  [resolve(values.small), resolve(values.large)].map(async (dir) => {
    const db = new DatabaseSync(join(dir, "txtfs.db"));
    const state = JSON.parse(readFileSync(join(dir, "bench-scale.json"), "utf8"));
    const notes = Number((db.prepare("SELECT count(*) AS n FROM files").get() as { n: number }).n);
    const impls = await Promise.all(checkouts.map(([, root]) => searchOf(root, db)));
    return { dir, notes, owner: state.accounts[0].id as string, impls };
  }),
);

const cases: [string, string[]][] = [
  ["two common words", [vocabulary[0]!, vocabulary[1]!]],
  ["one common word", [vocabulary[0]!]],
  ["a rare word", [topicWord(3, 5)]],
];
const rows: string[][] = [];
for (const [name, terms] of cases) {
  // times[store][checkout]
  const times = stores.map(() => checkouts.map(() => [] as number[]));
  for (let i = 0; i < samples + 2; i++)
    for (let k = 0; k < stores.length * checkouts.length; k++) {
      const j = (k + i) % (stores.length * checkouts.length); // the order rotates every sample
      const s = Math.floor(j / checkouts.length);
      const c = j % checkouts.length;
      const store = stores[s]!;
      const t0 = performance.now();
      const hits = await store.impls[c]!({ ownerId: store.owner }, { terms, match: "all", limit: 20 });
      const ms = performance.now() - t0;
      if (hits.length === 0) throw new Error(`${name}: nothing found in ${store.dir}`);
      if (i >= 2) times[s]![c]!.push(ms); // the first two warm the caches
    }
  for (const [c, [label]] of checkouts.entries()) {
    const [small, large] = [median(times[0]![c]!), median(times[1]![c]!)];
    rows.push([name, label, fmtMs(small), fmtMs(large), `${(large / small).toFixed(2)}x`]);
  }
}
const m = machineInfo();
process.stdout.write(
  `SearchRepo.search, SQLite, ${stores[0]!.notes} vs ${stores[1]!.notes} notes, ${samples} samples, medians (ms); ${JSON.stringify(m)}\n`,
);
process.stdout.write(
  `${textTable(["search", "checkout", `${stores[0]!.notes}`, `${stores[1]!.notes}`, "large/small"], rows, ["l", "l", "r", "r", "r"])}\n`,
);

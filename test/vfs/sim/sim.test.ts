// Many devices, every fault (issue 50): one real service on loopback and N Vfs instances in-process,
// each with its own cache dir behind its own fault proxy, driven by one seed (ops.ts, runner.ts,
// checks.ts). A failure prints its seed and the shrunk sequence; TXTFS_SIM_SEED replays it.
//
// Budget: TXTFS_SIM_SEED (default 1), TXTFS_SIM_RUNS (sequences, default 3), TXTFS_SIM_STEPS (steps
// per sequence, default 50), TXTFS_SIM_DEVICES (default 3), TXTFS_SIM_MINUTES (a soak: sequences
// from consecutive seeds until then; scripts/soak-devices), TXTFS_SIM_SHRINK_MS (shrinking's time per
// failure), TXTFS_SIM_PG=1 (the service on PostgreSQL: two servers on one database, a `restart`
// killing one of them).
import { readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import type { Exchange } from "../../helpers/faultProxy.ts";
import { type SimStep, showStep, stepArb } from "./ops.ts";
import { newStats, runSim, type SimFailure, type SimStats } from "./runner.ts";
import { stopSimPostgres } from "./world.ts";

const env = process.env;
const SEED = Number(env.TXTFS_SIM_SEED ?? 1);
const RUNS = Number(env.TXTFS_SIM_RUNS ?? 3);
const STEPS = Number(env.TXTFS_SIM_STEPS ?? 50);
const DEVICES = Number(env.TXTFS_SIM_DEVICES ?? 3);
const MINUTES = Number(env.TXTFS_SIM_MINUTES ?? 0);
/** The service on PostgreSQL: two servers on one database, `restart` killing one (world.ts). */
const POSTGRES = env.TXTFS_SIM_PG === "1";
/**
 * The clock faults: in every soak (and with TXTFS_SIM_CLOCK=1); CI's fixed budget keeps the mix it
 * had, whose seed 1 passes: with them seed 1 meets the open identity bug in cases/README.md
 * (`ci-seed-1-vim-save-undoes-rename.json`), which is not the clock's.
 */
const CLOCK = env.TXTFS_SIM_CLOCK ? env.TXTFS_SIM_CLOCK === "1" : MINUTES > 0;
/** A sequence saved by a failure (a JSON file), run TXTFS_SIM_REPLAY_TIMES times (default 5). */
const REPLAY = env.TXTFS_SIM_REPLAY;

interface Report {
  failed: boolean;
  text: string;
  steps?: SimStep[];
  failure?: SimFailure;
}

/** Sequences from `seed`; a failing one is shrunk within `shrinkMs` and printed. */
async function check(
  seed: number,
  o: { runs: number; steps: number; stats: SimStats; selfTest?: boolean; shrinkMs: number },
): Promise<Report> {
  // Every sequence `steps` long; shrinking turns steps into nothing (fast-check shrinks an option
  // to none), so a counterexample is what is left.
  const random = fc
    .array(fc.option(stepArb(DEVICES, CLOCK), { nil: undefined, freq: 30 }), {
      minLength: o.steps,
      maxLength: o.steps,
    })
    .map((steps) => steps.filter((s): s is SimStep => s !== undefined));
  // The self-test: a save made while its device is cut off, then a kill that loses the journal,
  // among random steps (which shrinking must take away).
  const arb = o.selfTest
    ? fc.tuple(random, random).map(([before, after]): SimStep[] => [
        ...before,
        // (A name no random step uses: a later save of it here would replace it by design.)
        { k: "fault", f: { k: "cut", d: 0 } },
        { k: "ops", ops: [{ k: "rewrite", p: "journal-only.md", text: "only in the journal\n" }] },
        // An attachment's too (bytes that are not text).
        { k: "ops", ops: [{ k: "bin", p: "journal-only.bin", off: -1, hex: "00ff4a" }] },
        { k: "fault", f: { k: "lossykill", d: 0 } },
        ...after,
      ])
    : random;
  let last: { steps: SimStep[]; failure: SimFailure } | undefined;
  let started: number | undefined;
  const result = await fc.check(
    fc.asyncProperty(arb, async (steps) => {
      if (last) started ??= Date.now();
      if (started && Date.now() - started > o.shrinkMs) return true; // shrinking's time is up
      const failure = await runSim(steps, { devices: DEVICES, seed, postgres: POSTGRES, stats: o.stats });
      if (env.TXTFS_SIM_DEBUG)
        console.log(
          `[sim debug] ${steps.map(showStep).join(" / ")} => ${failure?.problems.join("; ") ?? "held"}`,
        );
      if (failure) last = { steps, failure };
      return failure === undefined;
    }),
    { seed, numRuns: o.runs, endOnFailure: false },
  );
  if (!result.failed || !last) return { failed: false, text: "" };
  const saved = join(tmpdir(), `txtfs-sim-seed-${seed}.json`);
  writeFileSync(saved, JSON.stringify(last.steps));
  const text = [
    `multi-device simulation failed: TXTFS_SIM_SEED=${seed} TXTFS_SIM_DEVICES=${DEVICES} TXTFS_SIM_STEPS=${o.steps} TXTFS_SIM_RUNS=${o.runs} replays it`,
    `shrunk to ${last.steps.length} steps (fast-check path ${result.counterexamplePath}; TXTFS_SIM_REPLAY=${saved} runs them again):`,
    ...last.steps.map((s, i) => `${String(i).padStart(3)}: ${showStep(s)}`),
    `problems at ${last.failure.step >= last.steps.length ? "the last phase end" : `step ${last.failure.step}`}:`,
    ...last.failure.problems.map((p) => `  ${p}`),
  ].join("\n");
  return { failed: true, text, steps: last.steps, failure: last.failure };
}

const line = (label: string, s: SimStats, seconds: number) =>
  `[sim] ${label}: ${s.steps} steps, ${s.ops} operations (${s.acked} acknowledged saves checked, ${s.ackedAttachments} of them attachments), ${s.phases} phase checks (${s.attachmentsCompared} attachments compared), ${seconds.toFixed(1)} s, ${(s.ops / seconds).toFixed(1)} operations/s; faults ${JSON.stringify(s.faults)}`;

afterAll(() => stopSimPostgres());

describe("many devices, every fault: the service and N mounts agree", () => {
  it.skipIf(REPLAY)(
    "harness self-test: a kill that loses its journal is found (acknowledged saves lost, a note's and an attachment's) and shrunk",
    async () => {
      const stats = newStats();
      const report = await check(7, { runs: 1, steps: 6, stats, selfTest: true, shrinkMs: 60_000 });
      expect(report.failed, "a lost journal went unseen").toBe(true);
      expect(report.failure!.problems.join("\n")).toMatch(
        /^lost: dev0's save of journal-only\.md .*"only in the journal\\n"/m,
      );
      expect(report.failure!.problems.join("\n")).toMatch(
        /^lost: dev0's save of journal-only\.bin .*\(3 bytes 00ff4a\) is in no attachment/m,
      );
      expect(report.steps!.length).toBeLessThanOrEqual(5); // shrunk: the random steps gone
    },
    240_000,
  );

  it.runIf(REPLAY)(
    "replay of a saved sequence (TXTFS_SIM_REPLAY)",
    async () => {
      const steps = JSON.parse(readFileSync(REPLAY!, "utf8")) as SimStep[];
      const times = Number(env.TXTFS_SIM_REPLAY_TIMES ?? 5);
      let failed = 0;
      for (let i = 0; i < times; i++) {
        // Every exchange of every device and each step, kept for a failing replay (TXTFS_SIM_TRACE=1).
        const trace: string[] = [];
        // A check that threw (a device's tree changing under its walk) fails the replay too, traced.
        const failure = await runSim(steps, {
          devices: DEVICES,
          seed: SEED,
          postgres: POSTGRES,
          stats: newStats(),
          ...(env.TXTFS_SIM_TRACE
            ? {
                onStep: (n: number, s: SimStep) => trace.push(`--- step ${n}: ${showStep(s)}`),
                trace: (d: number, e: Exchange) =>
                  trace.push(
                    `dev${d} ${e.method} ${e.path} ${e.request.slice(0, 3000)} -> ${e.status} ${e.answer.slice(0, 3000)}`,
                  ),
              }
            : {}),
        }).catch((err: Error): SimFailure => ({ step: -1, problems: [`threw: ${err.stack ?? err}`] }));
        if (failure) failed++;
        if (failure && env.TXTFS_SIM_TRACE) {
          const file = join(tmpdir(), `txtfs-sim-trace-${i}.txt`);
          writeFileSync(file, `${trace.join("\n")}\n${failure.problems.join("\n")}\n`);
          console.log(`[sim] replay ${i}: trace in ${file}`);
        }
        console.log(
          `[sim] replay ${i}: ${failure ? `failed at step ${failure.step}:\n  ${failure.problems.join("\n  ")}` : "held"}`,
        );
      }
      console.log(`[sim] replays: ${failed} of ${times} failed`);
    },
    3_600_000,
  );

  it.skipIf(REPLAY)(
    `random operations on ${DEVICES} devices with faults between them${POSTGRES ? " (two servers on PostgreSQL)" : ""} (seed ${SEED}, ${MINUTES ? `${MINUTES} minutes` : `${RUNS} x ${STEPS} steps`})`,
    async () => {
      const stats = newStats();
      const started = Date.now();
      const until = started + MINUTES * 60_000;
      let seed = SEED;
      // A soak goes on past a failure (each one printed and saved for TXTFS_SIM_REPLAY); CI stops.
      const failures: string[] = [];
      do {
        const report = await check(seed++, {
          runs: RUNS,
          steps: STEPS,
          stats,
          shrinkMs: Number(env.TXTFS_SIM_SHRINK_MS ?? (MINUTES ? 180_000 : 60_000)),
        });
        if (report.failed) {
          failures.push(report.text);
          console.error(report.text);
        }
        if (MINUTES)
          console.log(
            `${line(`seeds ${SEED}..${seed - 1}`, stats, (Date.now() - started) / 1000)}; ${failures.length} failed`,
          );
      } while ((MINUTES ? true : failures.length === 0) && Date.now() < until);
      console.log(
        `${line(`seeds ${SEED}..${seed - 1} (${DEVICES} devices)`, stats, (Date.now() - started) / 1000)}; ${failures.length} failed`,
      );
      expect(failures, failures.join("\n\n")).toEqual([]);
    },
    Math.max(240_000, MINUTES * 60_000 + 400_000),
  );
});

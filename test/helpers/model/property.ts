// fast-check around runSequence: random sequences from a fixed seed, a failure shrunk to a minimal
// sequence, printed as a bash script that reproduces it by hand.
import { appendFileSync } from "node:fs";
import fc from "fast-check";
import { type Op, opArb, resolveSticky, showOp } from "./ops.ts";
import type { RunFailure, RunStats } from "./runner.ts";

export interface SeedRun<T extends { k: string } = Op> {
  seed: number;
  mode: "step" | number;
  maxOps: number;
  /** Runs one sequence on fresh trees; undefined when target and model agree. */
  run(ops: T[], stats: RunStats): Promise<RunFailure | undefined>;
  /** Operations for the harness's self-test (default: the everyday ones). */
  arb?: fc.Arbitrary<T>;
  /** Turns a generated sequence into the one run (default: resolveSticky for the everyday ops). */
  prepare?: (ops: T[]) => T[];
  /** Which property this is, for reports ("local", "remote"). */
  label?: string;
  /** What runs before each sequence, for the printed failure. */
  setup?: string;
  /** How an operation is printed (default: its bash line). */
  show?: (op: T) => string;
  /** Time allowed for the whole check, shrinking included (ms); a run still going then counts as hung. */
  timeLimitMs?: number;
  numRuns?: number;
}

export interface SeedReport {
  label: string;
  seed: number;
  mode: string;
  runs: number;
  ops: number;
  /** Operations that succeeded on the model (the rest failed the same way on both sides, e.g. ENOENT). */
  effective: number;
  slowestMs: number;
  mix: Record<string, number>;
  failed: boolean;
  /** The shrunk sequence and what differed. */
  counterexample?: { k: string }[];
  failure?: RunFailure;
  text?: string;
}

export const modeName = (mode: "step" | number) => (mode === "step" ? "step" : `burst ${mode} ms`);

export function describeFailure<T extends { k: string }>(
  seed: number,
  mode: "step" | number,
  ops: T[],
  failure: RunFailure,
  path?: string,
  show: (op: T) => string = showOp as unknown as (op: T) => string,
  setup = "mkdir d1 and four notes, delivered",
) {
  const pause = typeof mode === "number" && mode > 0 ? `sleep ${mode / 1000}` : undefined;
  const lines = ops.map(
    (op, i) => `${String(i).padStart(3)}: ${show(op)}${pause && i < ops.length - 1 ? `; ${pause}` : ""}`,
  );
  const where =
    failure.step < 0
      ? "during setup"
      : failure.step >= ops.length
        ? "after txtfs sync"
        : `after operation ${failure.step}`;
  return [
    `seed ${seed}, mode ${modeName(mode)}${path ? `, fast-check path ${path}` : ""}: ${ops.length} operations`,
    `(cwd: a fresh folder; setup first: ${setup})`,
    ...lines,
    `differences ${where}:`,
    ...failure.problems.map((p) => `  ${p}`),
  ].join("\n");
}

/** Runs `numRuns` sequences from `seed`; on a difference shrinks it and returns the minimal one. */
export async function checkSeed<T extends { k: string } = Op>(s: SeedRun<T>): Promise<SeedReport> {
  const mix: Record<string, number> = {};
  let runs = 0;
  let opsRun = 0;
  const stats: RunStats = { effective: 0, slowestMs: 0 };
  let last: { ops: T[]; failure: RunFailure } | undefined;
  const prepare = s.prepare ?? (resolveSticky as unknown as (ops: T[]) => T[]);
  const sequences = new FixedLengthArray<T>(s.arb ?? (opArb as unknown as fc.Arbitrary<T>), s.maxOps).map(
    prepare,
  );
  const failures = new Map<string, RunFailure>();
  // fast-check stops waiting for a run when the time limit passes, but the run goes on: it must end
  // before the next check starts, or two runs share the mount (a kill -9 and a restart of one
  // meeting the other's).
  let running: Promise<unknown> | undefined;
  const property = fc.asyncProperty(sequences, async (ops) => {
    runs++;
    opsRun += ops.length;
    for (const op of ops) mix[op.k] = (mix[op.k] ?? 0) + 1;
    const run = s.run(ops, stats);
    running = run.catch(() => undefined);
    const failure = await run;
    if (failure) {
      failures.set(JSON.stringify(ops), failure);
      last = { ops, failure };
      return false;
    }
    return true;
  });
  const details = await fc.check(property, {
    seed: s.seed,
    numRuns: s.numRuns ?? 1,
    interruptAfterTimeLimit: s.timeLimitMs ?? 60_000,
    markInterruptAsFailure: false,
    endOnFailure: false,
  });
  await running;
  const report: SeedReport = {
    label: s.label ?? "local",
    seed: s.seed,
    mode: modeName(s.mode),
    runs,
    ops: opsRun,
    ...stats,
    mix,
    failed: details.failed,
  };
  if (details.failed && !failures.size) {
    // fast-check gave up (the time limit ran out inside one run): that run hung.
    report.text = `seed ${s.seed}, mode ${modeName(s.mode)}: a run did not end within ${s.timeLimitMs ?? 60_000} ms (${String(details.errorInstance ?? "")})`;
  } else if (details.failed) {
    const ops = (details.counterexample?.[0] as T[] | undefined) ?? last?.ops ?? [];
    // The counterexample's own failure (the last failing run is the shrunk one, or a later try).
    const failure = failures.get(JSON.stringify(ops)) ?? (await s.run(ops, stats)) ?? last?.failure;
    report.counterexample = ops;
    report.failure = failure;
    report.text = failure
      ? describeFailure(
          s.seed,
          s.mode,
          ops,
          failure,
          details.counterexamplePath ?? undefined,
          s.show,
          s.setup,
        )
      : `seed ${s.seed}: failed, but the shrunk sequence passed when run again (timing)`;
  }
  const file = process.env.TXTFS_MODEL_REPORT;
  if (file) appendFileSync(file, `${JSON.stringify(report)}\n`);
  return report;
}

/**
 * Arrays generated at exactly `length` items (a sequence as long as asked) but shrunk like any
 * array down to none: fast-check's array shrinker drops halves, then single items, then shrinks the
 * items left.
 */
class FixedLengthArray<T> extends fc.Arbitrary<T[]> {
  private readonly full: fc.Arbitrary<T[]>;
  private readonly any: fc.Arbitrary<T[]>;
  constructor(item: fc.Arbitrary<T>, length: number) {
    super();
    this.full = fc.array(item, { minLength: length, maxLength: length });
    this.any = fc.array(item, { minLength: 0, maxLength: length });
  }
  generate(mrng: fc.Random, biasFactor: number | undefined): fc.Value<T[]> {
    return this.full.generate(mrng, biasFactor);
  }
  canShrinkWithoutContext(value: unknown): value is T[] {
    return this.any.canShrinkWithoutContext(value);
  }
  shrink(value: T[], context: unknown): fc.Stream<fc.Value<T[]>> {
    return this.any.shrink(value, context);
  }
}

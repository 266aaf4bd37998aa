// Replays a counterexample from a soak report (scripts/soak) many times, and shrinks it further by
// delta debugging (Zeller's ddmin): timing-dependent differences rarely shrink well inside
// fast-check's budget, and a sequence that fails 1 run in 10 needs a rerun per candidate.
import { readFileSync } from "node:fs";
import type { RunFailure } from "./runner.ts";

export interface Replay<T> {
  label: string;
  mode: "step" | number;
  ops: T[];
}

/** A report line of scripts/soak (or a bare JSON array of operations, then `fallback` says which property). */
export function readReplay<T>(file: string, fallback: { label: string; mode: "step" | number }): Replay<T> {
  const text = readFileSync(file, "utf8").trim();
  // a report line, or a case file formatted over many lines
  const doc = JSON.parse(
    text.startsWith("{\n") || text.startsWith("[\n") ? text : text.split("\n")[0]!,
  ) as unknown;
  if (Array.isArray(doc)) return { ...fallback, ops: doc as T[] };
  const r = doc as { label?: string; mode?: string; counterexample?: T[] };
  const m = /^burst (\d+) ms$/.exec(r.mode ?? "");
  return {
    label: r.label ?? fallback.label,
    mode: r.mode === "step" ? "step" : m ? Number(m[1]) : fallback.mode,
    ops: r.counterexample ?? [],
  };
}

/** Whether `ops` fails (a problem matching `match`) in any of `tries` runs: the first such problem. */
async function failing<T>(
  ops: T[],
  run: (ops: T[]) => Promise<RunFailure | undefined>,
  match: RegExp,
  tries: number,
): Promise<string | undefined> {
  for (let t = 0; t < tries; t++) {
    const problem = (await run(ops))?.problems.find((p) => match.test(p));
    if (problem) return problem;
  }
  return undefined;
}

/** ddmin: the smallest sequence found (within `deadline`) that still fails, and how it fails. */
export async function shrink<T>(
  ops: T[],
  run: (ops: T[]) => Promise<RunFailure | undefined>,
  opts: { match: RegExp; tries: number; deadline: number; log: (line: string) => void },
): Promise<{ ops: T[]; problem?: string }> {
  let current = ops;
  let problem = await failing(current, run, opts.match, opts.tries);
  if (!problem) return { ops };
  let parts = 2;
  while (current.length >= 2 && Date.now() < opts.deadline) {
    const size = Math.ceil(current.length / parts);
    let reduced = false;
    for (let i = 0; i < current.length && Date.now() < opts.deadline; i += size) {
      const candidate = [...current.slice(0, i), ...current.slice(i + size)];
      const p = await failing(candidate, run, opts.match, opts.tries);
      if (p) {
        current = candidate;
        problem = p;
        parts = Math.max(parts - 1, 2);
        reduced = true;
        opts.log(`${current.length} operations still fail: ${p}`);
        break;
      }
    }
    if (!reduced) {
      if (size === 1) break;
      parts = Math.min(parts * 2, current.length);
    }
  }
  return { ops: current, problem };
}

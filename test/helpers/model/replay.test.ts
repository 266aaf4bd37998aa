// The replay tool's delta debugging (test/helpers/model/replay.ts), on a stand-in for a mount run.
import { describe, expect, it } from "vitest";
import { shrink } from "./replay.ts";

describe("shrink (ddmin)", () => {
  it("finds the two operations that together make the difference, among 40", async () => {
    const ops = Array.from({ length: 40 }, (_, i) => i);
    let runs = 0;
    const run = async (seq: number[]) => {
      runs++;
      return seq.includes(7) && seq.includes(31)
        ? { step: seq.length, problems: ["lost save: 7 then 31"] }
        : undefined;
    };
    const lines: string[] = [];
    const out = await shrink(ops, run, {
      match: /lost save/,
      tries: 1,
      deadline: Date.now() + 10_000,
      log: (l) => lines.push(l),
    });
    expect(out.ops).toEqual([7, 31]);
    expect(out.problem).toBe("lost save: 7 then 31");
    expect(lines.at(-1)).toMatch(/^2 operations still fail/);
    expect(runs).toBeLessThan(200);
  });

  it("keeps a sequence that fails only now and then, trying each candidate several times", async () => {
    let calls = 0;
    const run = async (seq: number[]) =>
      seq.includes(2) && ++calls % 3 === 0 ? { step: 0, problems: ["x"] } : undefined;
    const out = await shrink([1, 2, 3, 4], run, {
      match: /x/,
      tries: 3,
      deadline: Date.now() + 10_000,
      log: () => {},
    });
    expect(out.ops).toEqual([2]);
  });

  it("returns the sequence unchanged when it does not fail (or fails otherwise)", async () => {
    const run = async () => ({ step: 0, problems: ["something else"] });
    expect(
      await shrink([1, 2, 3], run, { match: /lost/, tries: 2, deadline: Date.now() + 1000, log: () => {} }),
    ).toEqual({
      ops: [1, 2, 3],
    });
  });
});

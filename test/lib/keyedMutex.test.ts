import { describe, expect, it } from "vitest";
import { KeyedMutex } from "../../src/lib/keyedMutex.ts";

const tick = () => new Promise((r) => setTimeout(r, 5));

describe("KeyedMutex", () => {
  it("runs units of work sharing a key one at a time, others in parallel, and forgets idle keys", async () => {
    const m = new KeyedMutex();
    const log: string[] = [];
    const unit = (name: string, keys: string[]) =>
      m.run(keys, async () => {
        log.push(`${name}+`);
        await tick();
        log.push(`${name}-`);
      });
    await Promise.all([unit("a", ["x"]), unit("b", ["x", "y"]), unit("c", ["z"]), unit("d", ["y", "x"])]);
    // a, b and d share x: never overlapping, in FIFO order; c overlaps a.
    const span = (n: string) => [log.indexOf(`${n}+`), log.indexOf(`${n}-`)] as const;
    expect(span("a")[1]).toBeLessThan(span("b")[0]);
    expect(span("b")[1]).toBeLessThan(span("d")[0]);
    expect(span("c")[0]).toBeLessThan(span("a")[1]);
    expect((m as unknown as { entries: Map<string, unknown> }).entries.size).toBe(0);
  });

  it("releases the keys when the unit of work fails", async () => {
    const m = new KeyedMutex();
    await expect(m.run(["k"], async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect(await m.run(["k"], async () => 42)).toBe(42);
  });
});

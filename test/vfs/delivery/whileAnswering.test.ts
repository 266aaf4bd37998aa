// Waiting on the service while it answers (src/vfs/delivery/whileAnswering.ts), on fake timers: a
// silent service fails the wait after one read deadline, a probe is sent at half of it, and any
// answer arriving puts the deadline off; the work's own outcome wins while it comes first.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Unanswered, whileAnswering } from "../../../src/vfs/delivery/whileAnswering.ts";
import { fakeAnswers } from "./fakeAnswers.ts";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

const service = (answering: boolean) => fakeAnswers(answering, 1000);

const never = () => new Promise<string>(() => {});

describe("whileAnswering", () => {
  it("fails with Unanswered once a whole read deadline passed with no answer (a probe went at half of it)", async () => {
    const s = service(false);
    const waiting = whileAnswering(never(), s);
    const outcome = waiting.catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(600);
    expect(s.probes).toBe(1);
    await vi.advanceTimersByTimeAsync(500);
    expect(await outcome).toBeInstanceOf(Unanswered);
  });

  it("goes on while the service answers (probes, or other requests' answers), and gives the work's outcome", async () => {
    const s = service(true);
    let finish!: (v: string) => void;
    const work = new Promise<string>((r) => (finish = r));
    let settled = false;
    const waiting = whileAnswering(work, s).finally(() => (settled = true));
    await vi.advanceTimersByTimeAsync(10_000);
    expect(settled).toBe(false);
    expect(s.probes).toBeGreaterThan(5);
    finish("done");
    expect(await waiting).toBe("done");
  });

  it("an answer to another request counts: no probe while answers keep coming", async () => {
    const s = service(false);
    let finish!: (v: string) => void;
    const waiting = whileAnswering(new Promise<string>((r) => (finish = r)), s);
    for (let i = 0; i < 20; i++) {
      await vi.advanceTimersByTimeAsync(300);
      s.answeredAt = performance.now();
    }
    expect(s.probes).toBe(0);
    finish("done");
    expect(await waiting).toBe("done");
  });

  it("the work's failure is its own", async () => {
    const s = service(false);
    await expect(whileAnswering(Promise.reject(new Error("refused")), s)).rejects.toThrow("refused");
  });
});

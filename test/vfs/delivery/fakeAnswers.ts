// A service for whileAnswering's tests: it answers probes when `answering`, never otherwise.
import type { Answers } from "../../../src/vfs/delivery/whileAnswering.ts";

export function fakeAnswers(answering: boolean, readDeadlineMs: number) {
  const s = {
    readDeadlineMs,
    answeredAt: 0,
    probes: 0,
    answering,
    probe() {
      s.probes++;
      if (!s.answering) return new Promise<void>(() => {});
      s.answeredAt = performance.now();
      return Promise.resolve();
    },
  };
  return s satisfies Answers;
}

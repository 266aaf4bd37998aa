// The wall clock jumps while a program waits on the service (src/vfs/delivery/whileAnswering.ts):
// NTP setting it back an hour after a resumed VM, or forward. Silence is elapsed time: a wait on
// a black hole still ends after one read deadline, and a wait on a service that answers still
// goes on. Only the clock is faked (`toFake: ["Date"]`): timers and performance.now() run.
// (Read from the clock before: set back an hour, the black hole held the program an hour more;
// set forward, a service answering every probe was declared silent at once.)
import { afterEach, expect, it, vi } from "vitest";
import { Unanswered, whileAnswering } from "../../../src/vfs/delivery/whileAnswering.ts";
import { fakeAnswers } from "./fakeAnswers.ts";

afterEach(() => vi.useRealTimers());

const HOUR = 3_600_000;

const service = (answering: boolean) => fakeAnswers(answering, 200);

const until = async (check: () => boolean) => {
  while (!check()) await new Promise((r) => setTimeout(r, 5));
};

it("a wait on a black hole ends after a read deadline though the clock was set back an hour meanwhile", async () => {
  vi.useFakeTimers({ toFake: ["Date"], now: Date.now() });
  const s = service(false);
  const waiting = whileAnswering(new Promise<string>(() => {}), s).catch((e: unknown) => e);
  vi.setSystemTime(Date.now() - HOUR);
  expect(await waiting).toBeInstanceOf(Unanswered);
});

it("a wait on a service that answers goes on though the clock was set forward an hour meanwhile", async () => {
  vi.useFakeTimers({ toFake: ["Date"], now: Date.now() });
  const s = service(true);
  let finish!: (v: string) => void;
  let settled: unknown;
  const waiting = whileAnswering(new Promise<string>((r) => (finish = r)), s).then(
    (v) => (settled = v),
    (e: unknown) => (settled = e),
  );
  vi.setSystemTime(Date.now() + HOUR);
  await until(() => s.probes >= 3 || settled !== undefined); // several read deadlines' worth of probes
  expect(settled).toBeUndefined();
  finish("done");
  await waiting;
  expect(settled).toBe("done");
});

// The steps of a multi-device simulation: a round of everyday operations on every device at once
// (the vfs model test's local mix, on one shared folder), a fault, an identity scenario (one note
// edited on one device while another renames it), or the end of a phase (faults healed, every
// device synced, the checks run). One seed gives one sequence; fast-check shrinks a failing one.
import fc from "fast-check";
import { localOpArb, type VfsOp } from "../model/ops.ts";

export type LocalOp = Exclude<
  VfsOp,
  {
    k:
      | "redit"
      | "rcreate"
      | "rrename"
      | "rdelete"
      | "drain"
      | "feed"
      | "sync"
      | "kill"
      | "lossykill"
      | "corrupt";
  }
>;

export type Fault =
  | { k: "kill"; d: number; rollback: boolean } // kill -9; rollback: the cache dir back to its snapshot (a power cut)
  | { k: "snapshot"; d: number } // what a power cut may roll the cache dir back to
  | { k: "cut"; d: number }
  | { k: "heal"; d: number }
  | { k: "delay"; d: number; ms: number } // answers held back 0..ms: reordered
  | { k: "lossy"; d: number; p: number } // answers lost after the service applied the request
  | { k: "dup"; d: number; p: number } // requests delivered twice
  | { k: "pause"; d: number } // SIGSTOP: no operations, no network, longer than the client's timeout
  | { k: "restart" } // the service stops and starts again
  | { k: "skew"; d: number; ms: number } // the device's clock set `ms` ahead (or behind: negative) of the service's
  | { k: "clockback"; d: number; ms: number } // the device's clock jumps back `ms` mid-run (NTP correcting it)
  | { k: "lossykill"; d: number }; // self-test only: a kill whose cache dir loses its journal and local files

export type SimStep =
  | { k: "ops"; ops: (LocalOp | null)[] }
  | { k: "fault"; f: Fault }
  | { k: "ident"; a: number; b: number; pick: number }
  | { k: "check" };

const local = localOpArb.filter((op) => op.k !== "kill") as fc.Arbitrary<LocalOp>;

/** How far a device's clock is set from the service's: seconds to an hour, ahead or behind. */
const SKEWS = [-3_600_000, -600_000, -120_000, -5_000, -150, 150, 5_000, 120_000, 600_000, 3_600_000];
/** How far a clock jumps back mid-run: past a delete's grace (200 ms), an attachment's (1 s), minutes. */
const CLOCK_BACKS = [100, 500, 1_500, 60_000, 600_000];

/** `clock`: the clock faults (skew, clockback) in the mix too. */
export function stepArb(devices: number, clock = true): fc.Arbitrary<SimStep> {
  const d = fc.integer({ min: 0, max: devices - 1 });
  const fault = (f: fc.Arbitrary<Fault>) => f.map((x) => ({ k: "fault" as const, f: x }));
  const faults: { arbitrary: fc.Arbitrary<SimStep>; weight: number }[] = [
    {
      arbitrary: fault(fc.record({ k: fc.constant("kill" as const), d, rollback: fc.boolean() })),
      weight: 2,
    },
    { arbitrary: fault(fc.record({ k: fc.constant("snapshot" as const), d })), weight: 2 },
    { arbitrary: fault(fc.record({ k: fc.constant("cut" as const), d })), weight: 2 },
    { arbitrary: fault(fc.record({ k: fc.constant("heal" as const), d })), weight: 2 },
    {
      arbitrary: fault(
        fc.record({ k: fc.constant("delay" as const), d, ms: fc.integer({ min: 5, max: 300 }) }),
      ),
      weight: 2,
    },
    {
      arbitrary: fault(fc.record({ k: fc.constant("lossy" as const), d, p: fc.constantFrom(0.1, 0.3, 0.6) })),
      weight: 2,
    },
    {
      arbitrary: fault(fc.record({ k: fc.constant("dup" as const), d, p: fc.constantFrom(0.2, 0.5) })),
      weight: 1,
    },
    { arbitrary: fault(fc.record({ k: fc.constant("pause" as const), d })), weight: 1 },
    { arbitrary: fault(fc.constant({ k: "restart" as const })), weight: 1 },
  ];
  if (clock)
    faults.push(
      {
        arbitrary: fault(fc.record({ k: fc.constant("skew" as const), d, ms: fc.constantFrom(...SKEWS) })),
        weight: 2,
      },
      {
        arbitrary: fault(
          fc.record({ k: fc.constant("clockback" as const), d, ms: fc.constantFrom(...CLOCK_BACKS) }),
        ),
        weight: 2,
      },
    );
  const ops = fc
    .array(fc.option(local, { freq: 4 }), { minLength: devices, maxLength: devices })
    .map((list) => ({ k: "ops" as const, ops: list }));
  const ident = fc
    .record({ a: d, b: d, pick: fc.nat(1000) })
    .filter((x) => x.a !== x.b)
    .map((x) => ({ k: "ident" as const, ...x }));
  return fc.oneof(
    { arbitrary: ops, weight: 60 },
    ...faults,
    { arbitrary: ident, weight: 1 },
    { arbitrary: fc.constant({ k: "check" as const }), weight: 2 },
  );
}

export function showStep(step: SimStep): string {
  switch (step.k) {
    case "ops":
      return step.ops.map((op, d) => (op ? `dev${d}: ${JSON.stringify(op)}` : `dev${d}: -`)).join(" | ");
    case "fault":
      return `fault ${JSON.stringify(step.f)}`;
    case "ident":
      return `identity: dev${step.a} rewrites note #${step.pick} while dev${step.b} renames it`;
    case "check":
      return "phase end: faults healed, every device synced, checks";
  }
}

// The FUSE boundary, fuzzed: several child processes at once make seeded random filesystem calls on
// one real mount (test/helpers/fuzzfs.py: open with random flags, reads and writes at random
// offsets, truncates, lseek, mmap, renames, unlinks, mkdir/rmdir, listings, links, xattrs, on a
// pool of paths that holds invalid ones). Every answer must be success or an errno from that call's
// allowed set; the daemon must live through it, deliver what it kept and stop cleanly (exit 0:
// under scripts/sanitize's ASan build a leak or a memory error fails that too).
// TXTFS_FUZZ_SEED=N replays a seed (each failure prints it); TXTFS_FUZZ_ROUNDS, TXTFS_FUZZ_OPS and
// TXTFS_FUZZ_WORKERS make a soak (rounds use seeds N, N+1, ...); TXTFS_FUZZ_STRICT=1 fails on the
// known wrong answers too.
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PYTHON } from "../helpers/model/ops.ts";
import { type MountFixture, mountFixture, sh } from "../helpers/mount.ts";

const FUZZ = fileURLToPath(new URL("../helpers/fuzzfs.py", import.meta.url));
const SEED = Number(process.env.TXTFS_FUZZ_SEED ?? 1);
const ROUNDS = Number(process.env.TXTFS_FUZZ_ROUNDS ?? 1);
const OPS = Number(process.env.TXTFS_FUZZ_OPS ?? 400);
const WORKERS = Number(process.env.TXTFS_FUZZ_WORKERS ?? 3);
// Known wrong answers (fuzzfs.py's KNOWN: ENOENT from an open descriptor) fail too.
const STRICT = process.env.TXTFS_FUZZ_STRICT === "1" ? " --strict" : "";

interface WorkerResult {
  seed: number;
  worker: number;
  ops: number;
  ok: number;
  errnos: Record<string, number>;
  known: Record<string, number>;
}

let m: MountFixture;
beforeAll(async () => {
  m = mountFixture();
  await m.start();
}, 60_000);
afterAll(() => m?.close());

describe("random FUSE request sequences from concurrent processes", () => {
  const totals: Record<string, number> = {};
  const known: Record<string, number> = {};
  let calls = 0;
  let succeeded = 0;
  const started = Date.now();

  for (let round = 0; round < ROUNDS; round++) {
    const seed = SEED + round;
    it(
      `seed ${seed}: ${WORKERS} processes x ${OPS} calls, every answer an allowed errno, the daemon alive`,
      async () => {
        const runs = await Promise.all(
          Array.from({ length: WORKERS }, (_, worker) =>
            sh(`${PYTHON} ${FUZZ} . --seed ${seed} --ops ${OPS} --worker ${worker}${STRICT}`, {
              cwd: m.dirs.mnt,
              timeoutMs: 60_000 + OPS * 100,
            }),
          ),
        );
        for (const r of runs) {
          expect(r.stderr, `replay: TXTFS_FUZZ_SEED=${seed}`).toBe("");
          expect(r.code).toBe(0);
          const result = JSON.parse(r.stdout) as WorkerResult;
          calls += result.ops;
          succeeded += result.ok;
          for (const [key, n] of Object.entries(result.errnos)) totals[key] = (totals[key] ?? 0) + n;
          for (const [key, n] of Object.entries(result.known)) known[key] = (known[key] ?? 0) + n;
        }
        expect(m.current.child.exitCode, m.current.stderr()).toBeNull();
        // Still answering, and every save it kept is delivered.
        const alive = await sh("ls -la . d >/dev/null 2>&1; ls -la . >/dev/null", { cwd: m.dirs.mnt });
        expect(alive.code, alive.stderr).toBe(0);
        await m.sync();
      },
      120_000 + OPS * 200,
    );
  }

  it("the daemon stops cleanly after it all (exit 0)", async () => {
    expect(await m.current.stop()).toBe(0);
    const errnos = Object.entries(totals)
      .sort((x, y) => y[1] - x[1])
      .map(([k, n]) => `${k} ${n}`)
      .join(", ");
    process.stderr.write(
      `[fuzz] seeds ${SEED}..${SEED + ROUNDS - 1}: ${calls} calls (${succeeded} succeeded) in ${Date.now() - started} ms; errnos: ${errnos}; known wrong: ${JSON.stringify(known)}\n`,
    );
  }, 60_000);
});

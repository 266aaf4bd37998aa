import { mkdirSync, mkdtempSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, it } from "vitest";
import type { Op } from "../helpers/model/ops.ts";
import { removeLocal, runSequence } from "../helpers/model/runner.ts";
import { lazyUnmount, type MountFixture, mountFixture } from "../helpers/mount.ts";

const OPS: Op[] = JSON.parse(process.env.REPRO_OPS ?? "[]");
const N = Number(process.env.REPRO_N ?? 3);
const MODE = process.env.REPRO_MODE === "step" ? "step" : Number(process.env.REPRO_MODE ?? 0);
const base = mkdtempSync("/var/tmp/txtfs-lrepro-");
let m: MountFixture;
beforeAll(async () => {
  m = mountFixture();
  await m.start();
});
afterAll(() => m?.close());
let n = 0;
it("repro", async () => {
  for (let i = 0; i < N; i++) {
    const k = ++n;
    const dir = join(base, `r${k}`);
    mkdirSync(dir);
    const f = await runSequence(OPS, {
      target: join(m.dirs.mnt, `r${k}`),
      model: join(dir, "model"),
      stage: join(dir, "stage"),
      mode: MODE as "step" | number,
      service: {
        api: () => m.current.api,
        folder: `r${k}`,
        sync: () => m.sync(),
        async kill() {
          m.current.child.kill("SIGKILL");
          await m.current.exited;
          await lazyUnmount(m.dirs.mnt);
          await m.start();
        },
      },
      stats: { effective: 0, slowestMs: 0 },
    }).finally(() => removeLocal(dir));
    console.log(`run ${i}: ${f ? `step ${f.step}: ${f.problems.join("; ")}` : "ok"}`);
  }
}, 900_000);

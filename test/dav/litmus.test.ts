// litmus 0.13, the WebDAV conformance suite, against a real `txtfs dav --serve`: every test of
// every suite passes (basic, copymove, props, locks, http: 104).
import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningDav, runLitmus, startDav } from "../helpers/dav.ts";
import { type MountDirs, makeMountDirs, removeMountDirs } from "../helpers/mount.ts";

const hasLitmus = (() => {
  try {
    execFileSync("sh", ["-c", "command -v litmus"]);
    return true;
  } catch {
    return false;
  }
})();

describe.skipIf(!hasLitmus)("litmus against txtfs dav", () => {
  let dirs: MountDirs;
  let dav: RunningDav;
  beforeAll(async () => {
    dirs = makeMountDirs("txtfs-dav-litmus-");
    // Each request logged (debug): a failure shows what the server answered.
    dav = await startDav(dirs, { args: ["--log-level", "debug"] });
  });
  afterAll(async () => {
    await dav?.stop();
    await removeMountDirs(dirs);
  });

  it("passes all 104 tests of basic, copymove, props, locks and http", { timeout: 240_000 }, async () => {
    const score = await runLitmus(dav.url, dav.key, dirs.base);
    const summary = Object.entries(score.suites).map(([s, r]) => `${s} ${r.passed}/${r.run}`);
    const refusals = dav
      .stderr()
      .split("\n")
      .filter((l) => /"msg":"WebDAV"/.test(l) && /"status":(4|5)\d\d/.test(l))
      .slice(-40)
      .join("\n");
    const told = `${score.output}\n--- the server's last refusals:\n${refusals}`;
    expect(score.failures, told).toEqual([]);
    expect(score.warnings, told).toEqual([]);
    expect(summary).toEqual(["basic 16/16", "copymove 13/13", "props 30/30", "locks 41/41", "http 4/4"]);
  });
});

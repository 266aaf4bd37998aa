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
    dav = await startDav(dirs);
  });
  afterAll(async () => {
    await dav?.stop();
    await removeMountDirs(dirs);
  });

  it("passes all 104 tests of basic, copymove, props, locks and http", { timeout: 240_000 }, async () => {
    const score = await runLitmus(dav.url, dav.key, dirs.base);
    const summary = Object.entries(score.suites).map(([s, r]) => `${s} ${r.passed}/${r.run}`);
    expect(score.failures, score.output).toEqual([]);
    expect(score.warnings, score.output).toEqual([]);
    expect(summary).toEqual(["basic 16/16", "copymove 13/13", "props 30/30", "locks 41/41", "http 4/4"]);
  });
});

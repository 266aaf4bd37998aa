// A reader that went away (`txtfs status | head -2`) ends a command quietly: no EPIPE stack trace,
// exit 0, whatever the command prints.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BIN } from "../helpers/cli.ts";

const config = mkdtempSync(join(tmpdir(), "txtfs-pipe-"));
afterAll(() => rmSync(config, { recursive: true, force: true }));

// The command's stdout is a pipe whose reader is closed before it starts: every write fails (EPIPE).
const CLOSED_PIPE =
  "import os, subprocess, sys\nr, w = os.pipe()\nos.close(r)\nsys.exit(subprocess.call(sys.argv[1:], stdout=w))";

function withClosedStdout(args: string[]) {
  return spawnSync("python3", ["-c", CLOSED_PIPE, process.execPath, BIN, ...args], {
    encoding: "utf8",
    env: { ...process.env, TXTFS_CONFIG: config },
    timeout: 30_000,
  });
}

describe("a closed pipe", () => {
  for (const args of [
    ["status"],
    ["status", "--json"],
    ["man"],
    ["completion", "bash"],
    ["--version"],
    ["--help"],
  ]) {
    it(`txtfs ${args.join(" ")} into a closed pipe ends quietly`, () => {
      const r = withClosedStdout(args);
      expect(r.stderr).toBe("");
      expect(r.status).toBe(0);
    });
  }

  it("txtfs man | head -2 prints two lines and nothing else", () => {
    const r = spawnSync("bash", ["-o", "pipefail", "-c", `'${process.execPath}' '${BIN}' man | head -2`], {
      encoding: "utf8",
      env: { ...process.env, TXTFS_CONFIG: config },
    });
    expect(r.stderr).toBe("");
    expect(r.stdout.split("\n")).toHaveLength(3);
    expect(r.status).toBe(0);
  });
});

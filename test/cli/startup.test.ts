// The CLI starts fast because a command loads only what it needs: checked by the modules loaded,
// not by timing (timings are for scripts/bench/cli.ts).
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { BIN, ROOT } from "../helpers/cli.ts";

// Node's module hooks report every module a run loads (on stderr, one URL a line).
const HOOK = `data:text/javascript,${encodeURIComponent(
  'import { registerHooks } from "node:module"; registerHooks({ load(url, ctx, next) { if (!url.startsWith("node:")) process.stderr.write(url + "\\n"); return next(url, ctx); } });',
)}`;

function loaded(args: string[]): string[] {
  const r = spawnSync(process.execPath, ["--import", HOOK, BIN, ...args], {
    encoding: "utf8",
    env: { ...process.env, TXTFS_CONFIG: "/nonexistent-txtfs-config" },
  });
  expect(r.status, r.stderr).toBe(0);
  return r.stderr
    .split("\n")
    .filter((l) => l.startsWith("file://"))
    .map((l) => l.replace(`file://${ROOT}/`, ""));
}

describe("CLI start-up", () => {
  const heavy =
    /node_modules\/(pino|fastify|pg|undici|jose|oidc-provider|prom-client|oauth4webapi)\/|src\/(server|store|fuse|vfs|client)\//;
  for (const args of [
    ["--help"],
    ["--version"],
    ["status"],
    ["serve", "--help"],
    ["admin", "key", "--help"],
  ]) {
    it(`txtfs ${args.join(" ")} loads commander and the command definitions only`, () => {
      const modules = loaded(args);
      expect(modules).toContain("src/cli/main.ts");
      expect(modules.filter((m) => heavy.test(m))).toEqual([]);
    });
  }
});

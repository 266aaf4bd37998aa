// `txtfs pin PATH...` / `txtfs unpin PATH...`: set this device's availability of notes and folders
// in a mount. The daemon does the work when the `user.txtfs.state` attribute is set (records the
// state on the service, downloads pinned notes to its on-disk cache, frees unpinned ones), so
// this command only writes the attribute, from its own process (never the daemon's).
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { promisify } from "node:util";
import type { Command } from "commander";
import { listMounts } from "../lib/mountRegistry.ts";
import { mountHolding } from "./mountPaths.ts";

const run = promisify(execFile);
type State = "online-only" | "available" | "pinned";

async function setState(paths: string[], state: State): Promise<void> {
  let failed = 0;
  let missing = 0;
  const mounts = listMounts();
  for (const p of paths) {
    const path = resolve(p);
    if (!existsSync(path)) {
      failed++;
      missing++;
      process.stderr.write(`txtfs: ${path}: no such file or directory\n`);
      continue;
    }
    if (!mountHolding(path, mounts)) {
      failed++;
      process.stderr.write(`txtfs: ${path}: not inside a txtfs mount of this user (see txtfs status)\n`);
      continue;
    }
    try {
      await run("setfattr", ["-n", "user.txtfs.state", "-v", state, path], { timeout: 120_000 });
      process.stdout.write(`${state}\t${path}\n`);
    } catch (err) {
      failed++;
      const e = err as { stderr?: string; code?: string; message: string };
      if (e.code === "ENOENT") throw new Error("setfattr not found: install the `attr` package");
      process.stderr.write(`txtfs: ${path}: ${(e.stderr || e.message).trim()}\n`);
    }
  }
  if (failed) {
    const why = missing === failed ? "they do not exist" : "are they in a txtfs mount?";
    throw new Error(`${failed} of ${paths.length} paths could not be set (${why})`);
  }
}

export function registerPin(program: Command): void {
  program
    .command("pin")
    .description("Keep notes (folders: everything below) complete on this device, readable offline.")
    .argument("<paths...>", "notes or folders inside a txtfs mount")
    .option("--available", "only keep them once read (may be evicted) instead of pinning")
    .action((paths: string[], opts) => setState(paths, opts.available ? "available" : "pinned"));
  program
    .command("unpin")
    .description("Make notes (folders: everything below) online-only again and free their disk copies.")
    .argument("<paths...>", "notes or folders inside a txtfs mount")
    .action((paths: string[]) => setState(paths, "online-only"));
}

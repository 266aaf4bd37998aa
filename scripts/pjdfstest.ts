// pjdfstest (POSIX conformance) in a txtfs mount, or in any directory: every subtest's outcome by
// group, and how the failures compare with the by-design list of docs/pjdfstest.md.
//
//   scripts/pjdfstest                          # a fresh `txtfs mount --serve`, names as notes (.md)
//   scripts/pjdfstest --names local            # names as pjdfstest makes them (local-only files)
//   scripts/pjdfstest --groups chmod,symlink   # some groups only
//   scripts/pjdfstest --scripts rename/10.t    # some scripts only
//   scripts/pjdfstest --dir /mnt/other/x       # another file system, nothing mounted
//   scripts/pjdfstest --sshfs                  # sshfs over a throwaway sshd on 127.0.0.1, the same options
//   scripts/pjdfstest --list                   # the failures as by-design lines
//   scripts/pjdfstest --json FILE              # every script's outcome, with each failure's line
//
// pjdfstest is looked for in $TXTFS_PJDFSTEST, then /usr/local/lib/pjdfstest (docs/pjdfstest.md).
// The mount is `--allow-other -o default_permissions` (its tests switch to other users and expect
// the kernel to check permissions). Exit status: 0 when every failure is by design.
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { makeMountDirs, type RunningMount, removeMountDirs, startMount } from "../test/helpers/mount.ts";
import {
  compare,
  expectedFailures,
  findPjdfstest,
  groups,
  type Names,
  prepareTree,
  ranges,
  runScript,
  type ScriptResult,
  scripts,
} from "../test/helpers/pjdfstest.ts";
import { type Sshfs, type SshfsResources, startSshfs } from "./bench/sshfs.ts";

const { values } = parseArgs({
  options: {
    names: { type: "string", default: "note" },
    groups: { type: "string" },
    scripts: { type: "string" },
    dir: { type: "string" },
    list: { type: "boolean", default: false },
    json: { type: "string" },
    sshfs: { type: "boolean", default: false },
  },
});
const names = values.names as Names;
if (names !== "note" && names !== "local") {
  process.stderr.write("pjdfstest: --names is note or local\n");
  process.exit(2);
}
const installed = findPjdfstest();
if (!installed) {
  process.stderr.write(
    "pjdfstest: not found in $TXTFS_PJDFSTEST or /usr/local/lib/pjdfstest (docs/pjdfstest.md)\n",
  );
  process.exit(2);
}
const chosen = values.groups
  ? values.groups.split(",")
  : values.scripts
    ? [...new Set(values.scripts.split(",").map((s) => s.split("/")[0]!))]
    : groups(installed);
const tree = prepareTree(installed, names);
const dirs = values.dir ? undefined : makeMountDirs("txtfs-pjdfstest-");
let mount: RunningMount | undefined;
let sshfs: Sshfs | undefined;
const sshRes: SshfsResources = { children: [], mountpoints: [], createdRunSshd: false };
const results: ScriptResult[] = [];
const started = Date.now();
// Interrupted: the finally below still unmounts and removes what was made.
let interrupted = false;
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.once(signal, () => {
    interrupted = true;
  });
try {
  if (dirs && values.sshfs) {
    sshfs = await startSshfs({
      base: dirs.base,
      remote: dirs.data,
      mnt: join(dirs.base, "sshfs"),
      res: sshRes,
      log: (msg) => process.stderr.write(`${msg}\n`),
      options: ["allow_other", "default_permissions"],
    });
  } else if (dirs) mount = await startMount(dirs, { args: ["--allow-other", "-o", "default_permissions"] });
  const base = values.dir ?? join(sshfs?.mnt ?? dirs!.mnt, `run-${names}`);
  for (const group of chosen) {
    let passed = 0;
    let total = 0;
    for (const file of scripts(installed, group)) {
      if (interrupted) break;
      const script = `${group}/${file}`;
      if (values.scripts && !values.scripts.split(",").includes(script)) continue;
      const r = await runScript(tree, script, join(base, script.replace(/[/.]/g, "_")));
      results.push(r);
      passed += r.passed.length;
      total += r.passed.length + r.failed.length;
    }
    process.stdout.write(`${group.padEnd(16)} ${passed}/${total}\n`);
  }
} finally {
  await mount?.stop();
  await sshfs?.unmount();
  for (const child of sshRes.children) await child.stop(5000);
  if (sshRes.createdRunSshd) rmSync("/run/sshd", { recursive: true, force: true });
  if (dirs) await removeMountDirs(dirs);
  rmSync(tree, { recursive: true, force: true });
}
const passed = results.reduce((n, r) => n + r.passed.length, 0);
const total = results.reduce((n, r) => n + r.passed.length + r.failed.length, 0);
process.stdout.write(
  `${"all".padEnd(16)} ${passed}/${total} (${((Date.now() - started) / 1000).toFixed(0)} s)\n`,
);

if (values.json) writeFileSync(values.json, JSON.stringify(results, null, 1));
if (interrupted) process.exit(130);
const lists = expectedFailures(readFileSync(new URL("../docs/pjdfstest.md", import.meta.url), "utf8"));
const { unexpected, nowPassing, defectsSeen } = compare(results, lists.byDesign[names], lists.defects[names]);
if (values.list)
  for (const r of results)
    if (r.failed.length) process.stdout.write(`- \`${r.script}\` ${ranges(r.failed.map((f) => f.n))}\n`);
if (nowPassing.length)
  process.stdout.write(`listed as failing but passing now:\n  ${nowPassing.join("\n  ")}\n`);
if (defectsSeen.length)
  process.stdout.write(`known defects (docs/pjdfstest.md):\n  ${defectsSeen.join("\n  ")}\n`);
if (unexpected.length) process.stdout.write(`failing, not listed:\n  ${unexpected.join("\n  ")}\n`);
process.exit(unexpected.length ? 1 : 0);

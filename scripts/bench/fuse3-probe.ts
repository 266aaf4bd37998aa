// What moving the mount to libfuse3's low-level API would buy on reads (issue 19, "toward the
// local directory"): scripts/bench/fuse3-probe/probe.c serves an in-memory copy of a local tree in
// three modes (today / dirs / cached, see its header), timed beside that directory itself (the
// floor) and sshfs over a throwaway loopback sshd serving it. Each target must first show what the
// local directory holds (folders, names, sizes, bytes), every timed output must match the local
// directory's, and a change made behind the kernel's back must show in every mode (else the run
// fails).
//
//   node scripts/bench/fuse3-probe.ts [--runs 5] [--files 2000] [--folders 120] [--out FILE] (npm run bench:fuse3-probe)
//
// Needs gcc and libfuse3-dev (installed with apt-get when missing). Reports; asserts no timings.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { cleanUpOnStop, fmtMs, machineInfo, markdownTable, median, numberOption } from "./lib.ts";
import { isMounted, mountsUnder, type SshfsResources, startSshfs, unmountFuse, waitFor } from "./sshfs.ts";

const root = resolve(import.meta.dirname, "../..");
const log = (msg: string) => process.stderr.write(`[bench:fuse3-probe] ${msg}\n`);
const HELP = `usage: node scripts/bench/fuse3-probe.ts [options]
  --runs <n>      interleaved runs; times are their medians (default 5)
  --files <n>     files in the tree (default 2000)
  --folders <n>   nested folders (default 120)
  --lines <n>     each file has 20 to 20 + n lines of eight words (default 180)
  --only <ids>    only these workloads (comma-separated: ls-cold, ls-warm, ls-later, find-later,
                  grep-warm, grep-later)
  --out <file>    Markdown report (default bench-results/fuse3-probe.md)
  --timeout <s>   watchdog: give up (and unmount) after this many seconds (default 1800)`;

function settings() {
  const { values } = parseArgs({
    options: {
      runs: { type: "string" },
      files: { type: "string" },
      folders: { type: "string" },
      lines: { type: "string" },
      only: { type: "string" },
      out: { type: "string" },
      timeout: { type: "string" },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    process.exit(0);
  }
  try {
    return {
      runs: numberOption("runs", values.runs, 5, 1, true),
      files: numberOption("files", values.files, 2000, 1, true),
      folders: numberOption("folders", values.folders, 120, 0, true),
      lines: numberOption("lines", values.lines, 180, 1, true),
      only: values.only?.split(",").filter(Boolean),
      out: resolve(values.out ?? join(root, "bench-results/fuse3-probe.md")),
      timeoutSeconds: numberOption("timeout", values.timeout, 1800, 30, true),
    };
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(2);
  }
}
const {
  runs: RUNS,
  files: FILES,
  folders: FOLDERS,
  lines: LINES,
  only: ONLY,
  out: OUT,
  timeoutSeconds,
} = settings();
const MODES = ["today", "dirs", "cached"] as const;
type Mode = (typeof MODES)[number];

/** Builds the probe (apt-get installs libfuse3-dev first when pkg-config does not know fuse3). */
function buildProbe(dir: string): string {
  if (spawnSync("pkg-config", ["--exists", "fuse3"]).status !== 0) {
    log("installing libfuse3-dev (apt-get)");
    execFileSync("apt-get", ["install", "-y", "-q", "libfuse3-dev", "pkg-config"], { stdio: "inherit" });
  }
  const flags = execFileSync("pkg-config", ["--cflags", "--libs", "fuse3"], { encoding: "utf8" })
    .trim()
    .split(/\s+/);
  const bin = join(dir, "probe");
  execFileSync(
    "gcc",
    ["-O2", "-Wall", "-o", bin, join(import.meta.dirname, "fuse3-probe/probe.c"), ...flags],
    {
      stdio: "inherit",
    },
  );
  return bin;
}

/** A seeded tree like bench:mount's: nested folders, notes of 20 to 20 + LINES lines of words. */
function writeCorpus(dir: string): void {
  let seed = 20261129; // mulberry32
  const rand = (n: number) => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) % n;
  };
  const words = "amber river stone cloud zephyr note lamp field quiet north table glass".split(" ");
  const dirs = [dir];
  for (let i = 0; i < FOLDERS; i++) {
    const d = join(dirs[rand(dirs.length)]!, `d${i}`);
    mkdirSync(d);
    dirs.push(d);
  }
  for (let i = 0; i < FILES; i++) {
    const lines = Array.from({ length: 20 + rand(LINES) }, () =>
      Array.from({ length: 8 }, () => words[rand(words.length)]).join(" "),
    );
    // The first in the root: the change made elsewhere (probe.c, SIGUSR1) is to a file there.
    const d = i === 0 ? dir : dirs[rand(dirs.length)]!;
    writeFileSync(join(d, `n${i}${i % 3 ? ".md" : ".txt"}`), `${lines.join("\n")}\n`);
  }
}

interface Workload {
  id: string;
  label: string;
  script: string;
  /** Fresh mount and dropped page cache before it. */
  cold?: boolean;
  /** Seconds to wait after priming (the kernel's 1 s caches of `today` have then expired). */
  pauseSeconds?: number;
}

const ALL_WORKLOADS: Workload[] = [
  { id: "ls-cold", label: "`ls -lR`, fresh mount, caches dropped", script: "ls -lR | wc -l", cold: true },
  { id: "ls-warm", label: "`ls -lR` again at once", script: "ls -lR | wc -l" },
  { id: "ls-later", label: "`ls -lR` again 2 s later", script: "ls -lR | wc -l", pauseSeconds: 2 },
  {
    id: "find-later",
    label: "`find -name '*.md'` 2 s later",
    script: "find . -name '*.md' | wc -l",
    pauseSeconds: 2,
  },
  { id: "grep-warm", label: "`grep -r zephyr` again at once", script: "grep -r zephyr . | wc -l" },
  {
    id: "grep-later",
    label: "`grep -r zephyr` 2 s later",
    script: "grep -r zephyr . | wc -l",
    pauseSeconds: 2,
  },
];

const WORKLOADS = ALL_WORKLOADS.filter((w) => !ONLY || ONLY.includes(w.id));
for (const id of ONLY ?? []) {
  if (!ALL_WORKLOADS.some((w) => w.id === id)) {
    process.stderr.write(`--only: no workload ${id} (${ALL_WORKLOADS.map((w) => w.id).join(", ")})\n`);
    process.exit(2);
  }
}

/**
 * Runs bash in a child process in `dir`; returns the script's wall time as bash measured it (what
 * starting bash costs is left out) and its output (it must succeed).
 */
function timed(dir: string, script: string): { ms: number; out: string } {
  const wrapped = `s=$EPOCHREALTIME; out=$( ${script} ) || exit 1; e=$EPOCHREALTIME; echo "$s $e"; echo "$out"`;
  const r = spawnSync("bash", ["-c", wrapped], { cwd: dir, encoding: "utf8", timeout: 120_000 });
  if (r.status !== 0) throw new Error(`${script} in ${dir} failed: ${r.stderr}`);
  const [times = "", ...rest] = r.stdout.split("\n");
  const [s0, e0] = times.split(" ").map(Number) as [number, number];
  return { ms: (e0 - s0) * 1000, out: rest.join("\n").trim() };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main() {
  const base = mkdtempSync(join(tmpdir(), "txtfs-fuse3-probe-"));
  const res: SshfsResources = { children: [], mountpoints: [], createdRunSshd: false };
  const probes = new Map<Mode, { pid: number; mnt: string; stderr: string }>();
  const cleanup = async () => {
    for (const m of mountsUnder(base)) await unmountFuse(m);
    for (const c of res.children) await c.stop(2000).catch(() => {});
    if (res.createdRunSshd) rmSync("/run/sshd", { recursive: true, force: true });
    rmSync(base, { recursive: true, force: true });
  };
  cleanUpOnStop(cleanup, timeoutSeconds, log);
  try {
    const bin = buildProbe(base);
    const src = join(base, "local");
    mkdirSync(src);
    writeCorpus(src);
    const sshfs = await startSshfs({ base, remote: src, mnt: join(base, "sshfs"), res, log });

    const mountProbe = async (mode: Mode) => {
      const mnt = join(base, `probe-${mode}`);
      mkdirSync(mnt, { recursive: true });
      const child = spawn(bin, [src, mnt, mode], { stdio: ["ignore", "ignore", "pipe"] });
      const probe = { pid: child.pid!, mnt, stderr: "" };
      child.stderr.on("data", (d: Buffer) => {
        probe.stderr += d.toString();
      });
      await waitFor(`probe ${mode} mounted`, () => isMounted(mnt), 120_000, 5); // it reads the whole tree first
      probes.set(mode, probe);
    };
    const unmountProbe = async (mode: Mode) => {
      const p = probes.get(mode);
      if (!p) return;
      await unmountFuse(p.mnt);
      probes.delete(mode);
    };
    for (const mode of MODES) await mountProbe(mode);

    type Target = { name: string; dir: () => string; fresh: () => Promise<void> };
    const targets: Target[] = [
      { name: "local", dir: () => src, fresh: async () => {} },
      {
        name: "sshfs",
        dir: () => sshfs.mnt,
        fresh: async () => {
          await sshfs.unmount();
          await sshfs.mount();
        },
      },
      ...MODES.map((mode) => ({
        name: `probe ${mode}`,
        dir: () => probes.get(mode)!.mnt,
        fresh: async () => {
          await unmountProbe(mode);
          await mountProbe(mode);
        },
      })),
    ];

    // Each target shows what the local directory holds: every folder, every file's name and size,
    // the bytes of (the first, in path order) 2,000 files; the timed workloads are then checked by
    // their counts.
    const CONTENTS =
      "ls -lR | awk '$1 ~ /^-/ {print $5, $NF} /:$/ {print}' | md5sum; find . -type f | sort | head -2000 | xargs cat | md5sum";
    const local = timed(src, CONTENTS).out;
    for (const t of targets) {
      const seen = timed(t.dir(), CONTENTS).out;
      if (seen !== local) throw new Error(`${t.name} does not show what the local directory holds`);
    }
    const expected = new Map(WORKLOADS.map((w) => [w.id, timed(src, w.script).out]));
    const times = new Map<string, number[]>(); // `${workload}|${target}`
    for (let run = 0; run < RUNS; run++) {
      const order = targets.map((_, i) => targets[(i + run) % targets.length]!);
      for (const w of WORKLOADS) {
        for (const t of order) {
          if (w.cold) {
            await t.fresh();
            execFileSync("bash", ["-c", "sync; echo 3 > /proc/sys/vm/drop_caches"]);
          } else {
            timed(t.dir(), w.script); // primed
            if (w.pauseSeconds) await sleep(w.pauseSeconds * 1000);
          }
          const { ms, out } = timed(t.dir(), w.script);
          if (out !== expected.get(w.id))
            throw new Error(`${t.name} ${w.id}: ${out}, local ${expected.get(w.id)}`);
          if (process.env.PROBE_VERBOSE) log(`run ${run + 1} ${w.id} ${t.name}: ${ms.toFixed(1)} ms`);
          const key = `${w.id}|${t.name}`;
          times.set(key, [...(times.get(key) ?? []), ms]);
        }
      }
      log(`run ${run + 1} of ${RUNS} done`);
    }

    // A change made behind the kernel's back (the feed's case): seen at once where names are kept an hour.
    const freshness: string[] = [];
    for (const mode of MODES) {
      const p = probes.get(mode)!;
      timed(p.mnt, "ls -lR > /dev/null; cat $(find . -type f | head -50) > /dev/null"); // all kept
      const before = Number(timed(p.mnt, "ls | wc -l").out);
      // Polled by one bash started before the change (starting a process from here is slow and
      // uneven): the first change of a probe adds probe-new-1.md and a line to one root file.
      const poller = spawn(
        "bash",
        [
          "-c",
          `echo ready; for i in $(seq 20000); do
             if [ "$(ls | wc -l)" = ${before + 1} ] && [ -e probe-new-1.md ] &&
                [ "$(tail -qn 1 -- * 2>/dev/null | grep -c '^changed elsewhere$')" = 1 ]; then
               echo $EPOCHREALTIME; exit 0
             fi
             sleep 0.001
           done; exit 1`,
        ],
        { cwd: p.mnt, stdio: ["ignore", "pipe", "ignore"] },
      );
      let polled = "";
      poller.stdout.on("data", (d: Buffer) => {
        polled += d.toString();
      });
      const ended = new Promise<number | null>((r) => poller.on("exit", r));
      await waitFor(`probe ${mode}: the poller`, () => polled.startsWith("ready"), 10_000, 1);
      process.kill(p.pid, "SIGUSR1");
      const code = await ended;
      const at = / at (\S+)/.exec(p.stderr)?.[1];
      const seenAt = polled.trim().split("\n").pop();
      const seen = code === 0 && at ? Math.round((Number(seenAt) - Number(at)) * 1000) : -1;
      if (seen < 0) throw new Error(`probe ${mode}: a change made elsewhere was not seen`);
      freshness.push(`${mode} ${seen} ms`);
    }

    const rows = WORKLOADS.map((w) => {
      const m = (t: string) => median(times.get(`${w.id}|${t}`) ?? []);
      const local = m("local");
      const ssh = m("sshfs");
      return [
        w.label,
        ...targets.map((t) => `${fmtMs(m(t.name))} ms`),
        ...MODES.map(
          (mode) => `${(m(`probe ${mode}`) / local).toFixed(1)}x / ${(m(`probe ${mode}`) / ssh).toFixed(2)}x`,
        ),
      ];
    });
    const info = machineInfo();
    const report = [
      "# libfuse3 low-level probe (`node scripts/bench/fuse3-probe.ts`)",
      "",
      `${new Date().toISOString()}, ${info.cpus} cpus, ${info.os}, load ${info.load}; ${FILES} files (20 to ${20 + LINES} lines each) in ${FOLDERS} nested folders; ${RUNS} interleaved runs, medians; each target first shown to hold the local directory's folders, names, sizes and bytes, every timed output checked (its count) against the local directory's; timed inside bash.`,
      "",
      markdownTable(
        ["workload", ...targets.map((t) => t.name), ...MODES.map((m) => `${m}: x local / x sshfs`)],
        rows,
        ["l", ...targets.map(() => "r" as const), ...MODES.map(() => "r" as const)],
      ),
      "",
      `A change made elsewhere (a line appended to a file, a file added to the root), until \`ls\` and \`tail\` through the mount show it: ${freshness.join(", ")} (today: the kernel's 1 s; dirs and cached: told to the kernel at once).`,
      "",
    ].join("\n");
    mkdirSync(resolve(OUT, ".."), { recursive: true });
    writeFileSync(OUT, report);
    process.stdout.write(`${report}\n`);
  } finally {
    await cleanup();
  }
}

await main();

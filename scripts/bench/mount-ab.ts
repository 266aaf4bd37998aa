// A/B of two checkouts' mounts (issue 46's "within 5%" on warm listings): one `txtfs serve` of this
// checkout (SQLite, 127.0.0.1) holding N notes, mounted in turn by this checkout's `txtfs mount` and
// by another's (--base). Each round, per target (which goes first alternates): a fresh mount,
// `find` (the kernel learns the tree), `find` again (warm), `ls -lR` twice (the second timed).
// Prints medians, this/base as the median of per-round ratios, and the daemon's CPU time;
// --strace counts the daemon's syscalls over each timed pass (how many requests it answered).
//   node scripts/bench/mount-ab.ts --base /work/base --notes 100000 --folders 2000 --runs 11
// Every action on a mount runs in a child `bash -c`; the daemons and the server are stopped by pid,
// the mounts unmounted and the scratch dir removed in any case.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import {
  type ChildServer,
  cleanEnv,
  cleanUpOnStop,
  cpuSecondsOf,
  fmtMs,
  median,
  numberOption,
  startChild,
} from "./lib.ts";
import { isMounted, unmountFuse } from "./sshfs.ts";

const root = resolve(import.meta.dirname, "../..");
const log = (msg: string) => process.stderr.write(`[bench:mount-ab] ${msg}\n`);

const { values } = parseArgs({
  options: {
    base: { type: "string" },
    notes: { type: "string" },
    folders: { type: "string" },
    runs: { type: "string" },
    trace: { type: "boolean", default: false },
    /** Count the daemon's syscalls (strace -c) over each warm pass instead of trusting its times. */
    strace: { type: "boolean", default: false },
  },
});
if (!values.base) throw new Error("--base <checkout> is required");
const notes = numberOption("notes", values.notes, 20_000, 1, true);
const folders = numberOption("folders", values.folders, 400, 1, true);
const runs = numberOption("runs", values.runs, 15, 1, true);

function sh(script: string): Promise<{ stdout: string; ms: number }> {
  return new Promise((done, fail) => {
    const t0 = performance.now();
    const child = spawn("bash", ["-c", script], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("exit", (code) => {
      const ms = performance.now() - t0;
      if (code === 0) done({ stdout, ms });
      else fail(new Error(`${script}: exit ${code}: ${stderr.slice(0, 300)}`));
    });
  });
}

/** strace -c -f of `pid` from now until the returned function is called, its summary printed. */
async function straced(pid: number, what: string): Promise<() => Promise<void>> {
  const out = join(scratch, `strace-${pid}.txt`);
  const child = spawn("strace", ["-c", "-f", "-o", out, "-p", String(pid)], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let attached = false;
  await new Promise<void>((done) => {
    child.stderr.on("data", (d: Buffer) => {
      if (!attached && d.toString().includes("attached")) {
        attached = true;
        done();
      }
    });
    child.on("exit", () => done());
  });
  return async () => {
    const ended = new Promise((done) => child.on("exit", done));
    child.kill("SIGINT");
    await ended;
    const summary = await sh(`head -12 '${out}'`);
    console.log(`${what}\n${summary.stdout}`);
  };
}

const scratch = mkdtempSync(join(tmpdir(), "txtfs-mount-ab-"));
const children: ChildServer[] = [];
const mounts: string[] = [];
const cleanup = async () => {
  for (const c of children.splice(0)) await c.stop(30_000);
  for (const m of mounts.splice(0)) if (isMounted(m)) await unmountFuse(m);
  rmSync(scratch, { recursive: true, force: true });
};
cleanUpOnStop(cleanup, 3600, log);

async function main() {
  const server = startChild(
    "serve",
    process.execPath,
    [join(root, "bin/txtfs"), "serve", "--host", "127.0.0.1", "--port", "0", "--data", join(scratch, "data")],
    { cwd: root, env: cleanEnv({}) },
  );
  children.push(server);
  const url = (await server.waitForLine(/^txtfs (http:\/\/127\.0\.0\.1:\d+)\b/, 60_000))[1]!;
  const key = (await server.waitForLine(/^export TXTFS_API_KEY=(\S+)$/, 10_000))[1]!;
  for (let i = 0; i < notes; i += 1000) {
    const files = [];
    for (let j = i; j < Math.min(notes, i + 1000); j++) {
      const f = Math.floor((j * folders) / notes);
      const folder = `g${String(Math.floor(f / 20)).padStart(3, "0")}/f${String(f).padStart(5, "0")}`;
      files.push({ path: `${folder}/note${String(j).padStart(6, "0")}.md`, content: `# Note ${j}\n` });
    }
    const r = await fetch(`${url}/api/v1/files/import`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ files }),
    });
    if (r.status !== 200) throw new Error(`import: ${r.status} ${await r.text()}`);
  }
  log(`imported ${notes} notes in ${folders} folders`);

  const targets = [
    { name: "this", bin: join(root, "bin/txtfs") },
    { name: "base", bin: join(resolve(values.base!), "bin/txtfs") },
  ].map((t) => ({
    ...t,
    dir: join(scratch, `${t.name}-mnt`),
    first: [] as number[],
    find: [] as number[],
    ls: [] as number[],
    cpu: [] as number[],
    cpuWarm: [] as number[],
  }));
  for (const t of targets) {
    mkdirSync(t.dir);
    mkdirSync(join(scratch, `${t.name}-config`));
    mounts.push(t.dir);
  }
  let daemon: ChildServer | undefined;
  const mount = async (t: (typeof targets)[number]) => {
    const cache = join(scratch, `${t.name}-cache`);
    rmSync(cache, { recursive: true, force: true }); // every mount starts with an empty cache
    mkdirSync(cache);
    const args = [t.bin, "mount", t.dir, "--url", url, "--key", key, "--cache-dir", cache];
    if (values.trace) args.push("--trace");
    daemon = startChild(`${t.name} mount`, process.execPath, args, {
      cwd: root,
      env: cleanEnv({ TXTFS_CONFIG: join(scratch, `${t.name}-config`) }),
      onStderrLine: values.trace ? (l) => process.stdout.write(`${t.name}: ${l}\n`) : undefined,
    });
    children.push(daemon);
    await daemon.waitForLine(/^mounted \S+/, 300_000);
  };
  const unmount = async (t: (typeof targets)[number]) => {
    const d = daemon!;
    children.splice(children.indexOf(d), 1);
    await d.stop(30_000);
    await unmountFuse(t.dir);
  };
  const timed = async (t: (typeof targets)[number], script: string, into: number[]) => {
    const strace = values.strace ? await straced(daemon!.pid, `${t.name}: ${script}`) : undefined;
    const r = await sh(`cd '${t.dir}' && ${script}`);
    await strace?.();
    if (Number(r.stdout.trim()) !== notes) throw new Error(`${t.name} ${script}: counted ${r.stdout.trim()}`);
    into.push(r.ms);
  };
  // As bench:mount-large does: a fresh mount, `find` once (the kernel learns the tree), then again
  // (warm); then `ls -lR` twice, the second warm.
  const ratios = { first: [] as number[], find: [] as number[], ls: [] as number[] };
  for (let run = 0; run < runs; run++) {
    const order = run % 2 === 0 ? targets : [...targets].reverse();
    for (const t of order) {
      await mount(t);
      const cpu0 = cpuSecondsOf(daemon!.pid);
      await timed(t, "find . -name '*.md' | wc -l", t.first);
      const cpu1 = cpuSecondsOf(daemon!.pid);
      await timed(t, "find . -name '*.md' | wc -l", t.find);
      t.cpuWarm.push((cpuSecondsOf(daemon!.pid) - cpu1) * 1000);
      t.cpu.push((cpuSecondsOf(daemon!.pid) - cpu0) * 1000);
      await sh(`cd '${t.dir}' && ls -lR >/dev/null`);
      await timed(t, "ls -lR | grep -c '\\.md$'", t.ls);
      await unmount(t);
    }
    const [a, b] = targets as [(typeof targets)[number], (typeof targets)[number]];
    ratios.first.push(a.first[run]! / b.first[run]!);
    ratios.find.push(a.find[run]! / b.find[run]!);
    ratios.ls.push(a.ls[run]! / b.ls[run]!);
  }
  for (const t of targets)
    console.log(
      `${t.name}: find after mount ${fmtMs(median(t.first))} ms, warm find ${fmtMs(median(t.find))} ms, warm ls -lR ${fmtMs(median(t.ls))} ms; daemon CPU over both finds ${fmtMs(median(t.cpu))} ms, over the warm one ${fmtMs(median(t.cpuWarm))} ms`,
    );
  const r = (xs: number[]) => `${median(xs).toFixed(2)}x`;
  console.log(
    `this/base (median of ${runs} per-round ratios): find after mount ${r(ratios.first)}, warm find ${r(ratios.find)}, warm ls -lR ${r(ratios.ls)}`,
  );
}

main()
  .catch((err) => {
    log(String(err?.stack ?? err));
    process.exitCode = 1;
  })
  .finally(cleanup);

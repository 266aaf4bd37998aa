// Shared pieces of the benchmarks in scripts/bench: servers in child processes, load runs with
// autocannon, CPU accounting, statistics and the tables they print. Kept free of txtfs specifics
// so that the mount benchmark can reuse it.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import os from "node:os";
import { createInterface } from "node:readline";
import autocannon from "autocannon";

// ---------------------------------------------------------------------------------------------
// Child processes

export interface ChildServer {
  name: string;
  pid: number;
  /** Resolves with the first stdout line (already printed or still to come) that matches. */
  waitForLine(pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray>;
  /** The last lines the child wrote to stderr, for error messages. */
  stderrTail(): string;
  /** SIGTERM by PID, then SIGKILL if it has not exited within `graceMs`. Resolves with how it ended. */
  stop(graceMs?: number): Promise<string>;
}

/**
 * Starts a server in its own process, so it never shares an event loop with the load generator.
 * Both output pipes are always drained: a child blocked on a full pipe would look like a slow server.
 */
export function startChild(
  name: string,
  command: string,
  args: string[],
  opts: {
    cwd?: string;
    env?: NodeJS.ProcessEnv;
    /** Called with every stderr line as it arrives (request logs, traces). */
    onStderrLine?: (line: string) => void;
  } = {},
): ChildServer {
  const child: ChildProcess = spawn(command, args, {
    cwd: opts.cwd,
    env: opts.env ?? process.env,
    stdio: ["pipe", "pipe", "pipe"],
  });
  if (child.pid === undefined) throw new Error(`${name}: could not start ${command}`);
  const pid = child.pid;
  const stdout: string[] = [];
  const stderr: string[] = [];
  const waiters = new Set<() => void>();
  let ended: string | undefined;
  const exited = new Promise<string>((resolve) => {
    child.on("exit", (code, signal) => {
      ended = signal ? `signal ${signal}` : `exit code ${code}`;
      for (const w of waiters) w();
      resolve(ended);
    });
  });
  createInterface({ input: child.stdout! }).on("line", (line) => {
    stdout.push(line);
    for (const w of waiters) w();
  });
  createInterface({ input: child.stderr! }).on("line", (line) => {
    opts.onStderrLine?.(line);
    stderr.push(line);
    if (stderr.length > 200) stderr.shift();
  });
  const stderrTail = () => stderr.slice(-20).join("\n");

  return {
    name,
    pid,
    stderrTail,
    waitForLine(pattern, timeoutMs) {
      return new Promise((resolve, reject) => {
        const check = () => {
          for (const line of stdout) {
            const m = line.match(pattern);
            if (m) return done(() => resolve(m));
          }
          if (ended) {
            done(() =>
              reject(new Error(`${name} ended (${ended}) before printing ${pattern}:\n${stderrTail()}`)),
            );
          }
        };
        const timer = setTimeout(
          () => done(() => reject(new Error(`${name}: no line ${pattern} within ${timeoutMs} ms`))),
          timeoutMs,
        );
        const done = (finish: () => void) => {
          clearTimeout(timer);
          waiters.delete(check);
          finish();
        };
        waiters.add(check);
        check();
      });
    },
    async stop(graceMs = 10_000) {
      if (ended) return ended;
      process.kill(pid, "SIGTERM");
      const timer = setTimeout(() => {
        if (!ended) process.kill(pid, "SIGKILL");
      }, graceMs);
      const how = await exited;
      clearTimeout(timer);
      return how;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// CPU accounting: who is saturated tells whether a number measures the server or the client.

const clockTicks = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** CPU seconds (user + system) a process has used so far; NaN where /proc is not available. */
export function cpuSecondsOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may contain spaces: count fields from after its closing paren.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / clockTicks;
  } catch {
    return Number.NaN;
  }
}

/** CPU seconds the whole machine has been busy (all cores, /proc/stat), to tell how much went elsewhere. */
export function machineBusySeconds(): number {
  try {
    const cpu = readFileSync("/proc/stat", "utf8").split("\n", 1)[0]!.split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal: busy is everything but idle and iowait.
    const busy = cpu[0]! + cpu[1]! + cpu[2]! + cpu[5]! + cpu[6]! + cpu[7]!;
    return busy / clockTicks;
  } catch {
    return Number.NaN;
  }
}

const ownCpuSeconds = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

// ---------------------------------------------------------------------------------------------
// Load runs

export interface LoadOptions {
  url: string;
  connections: number;
  durationSeconds: number;
  requests: autocannon.Request[];
  /** The server process, to report how busy it was. */
  serverPid: number;
}

export interface LoadResult {
  requests: number;
  seconds: number;
  rps: number;
  /** Every response's latency in ms, as the client saw it (write of the request to end of the response). */
  latencies: Float64Array;
  errors: number;
  timeouts: number;
  /** Fraction of one core the server process used during the run. */
  serverCpu: number;
  /** Fraction of one core this process (the load generator) used during the run. */
  clientCpu: number;
  /** Cores' worth of CPU that went to other processes (other servers, other users) during the run. */
  otherCpu: number;
}

/** Pause after each run: autocannon stops with requests in flight, and the server must finish them
 * before the next measurement starts, or their work lands in it. */
const SETTLE_MS = 300;

/**
 * One fixed-duration run with a fixed number of keep-alive connections, no pipelining. Latencies are
 * kept exactly (autocannon's own histogram rounds to whole milliseconds, too coarse on loopback).
 */
export function runLoad(opts: LoadOptions): Promise<LoadResult> {
  const latencies: number[] = [];
  const server0 = cpuSecondsOf(opts.serverPid);
  const client0 = ownCpuSeconds();
  const machine0 = machineBusySeconds();
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: opts.url,
        connections: opts.connections,
        duration: opts.durationSeconds,
        pipelining: 1,
        timeout: 10,
        requests: opts.requests,
      },
      (err, summary) => {
        if (err) return reject(err);
        const seconds = (performance.now() - t0) / 1000;
        const serverCpu = (cpuSecondsOf(opts.serverPid) - server0) / seconds;
        const clientCpu = (ownCpuSeconds() - client0) / seconds;
        const machineCpu = (machineBusySeconds() - machine0) / seconds;
        const measured: LoadResult = {
          requests: latencies.length,
          seconds,
          rps: latencies.length / seconds,
          latencies: Float64Array.from(latencies),
          errors: summary.errors,
          timeouts: summary.timeouts,
          serverCpu,
          clientCpu,
          otherCpu: Math.max(0, machineCpu - serverCpu - clientCpu),
        };
        setTimeout(() => resolve(measured), SETTLE_MS);
      },
    );
    instance.on("response", (_client, _status, _bytes, responseTime) => {
      latencies.push(responseTime);
    });
  });
}

/** Collects failed checks during a run (throwing inside autocannon's parser callbacks would kill it). */
export class Checks {
  private failures = new Map<string, { count: number; example: string }>();

  fail(what: string, example: string): void {
    const f = this.failures.get(what);
    if (f) f.count++;
    else this.failures.set(what, { count: 1, example: example.slice(0, 300) });
  }

  /** Throws with every failure seen so far (and forgets them). */
  assertClean(context: string): void {
    if (this.failures.size === 0) return;
    const lines = [...this.failures].map(([what, f]) => `  ${what}: ${f.count}x, e.g. ${f.example}`);
    this.failures.clear();
    throw new Error(`check failed in ${context}:\n${lines.join("\n")}`);
  }
}

/** Header lookup that does not care how the server spelled the name. */
export function header(headers: Record<string, unknown> | undefined, name: string): string | undefined {
  if (!headers) return undefined;
  const lower = name.toLowerCase();
  for (const [k, v] of Object.entries(headers)) {
    if (k.toLowerCase() === lower) return Array.isArray(v) ? String(v[0]) : String(v);
  }
  return undefined;
}

/** The `app;dur=` value of a Server-Timing header, in ms. */
export function serverTimingMs(value: string | null | undefined): number | undefined {
  const m = value?.match(/(?:^|,)\s*app;dur=([\d.]+)/);
  return m ? Number(m[1]) : undefined;
}

// ---------------------------------------------------------------------------------------------
// Statistics

/** Nearest-rank percentile (p in 0..100) of an unsorted sample. */
export function percentile(values: ArrayLike<number>, p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = Float64Array.from(values).sort();
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

export const median = (values: ArrayLike<number>) => percentile(values, 50);

export function concat(arrays: Float64Array[]): Float64Array {
  const out = new Float64Array(arrays.reduce((n, a) => n + a.length, 0));
  let at = 0;
  for (const a of arrays) {
    out.set(a, at);
    at += a.length;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Output

export type Align = "l" | "r";

export function textTable(head: string[], rows: string[][], align: Align[]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (align[i] === "r" ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd();
  return [line(head), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
}

export function markdownTable(head: string[], rows: string[][], align: Align[]): string {
  const row = (cells: string[]) => `| ${cells.map((c) => c.replaceAll("|", "\\|")).join(" | ")} |`;
  const rule = `|${align.map((a) => (a === "r" ? "---:" : "---")).join("|")}|`;
  return [row(head), rule, ...rows.map(row)].join("\n");
}

export const fmtInt = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString("en-US") : "-");
export const fmtMs = (n: number) => (Number.isFinite(n) ? n.toFixed(n < 10 ? 2 : 1) : "-");
export const fmtPct = (n: number) => (Number.isFinite(n) ? `${Math.round(n * 100)}%` : "-");

export interface MachineInfo {
  date: string;
  cpus: number;
  cpuModel: string;
  memory: string;
  node: string;
  os: string;
  load: string;
}

export function machineInfo(): MachineInfo {
  return {
    date: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
    cpus: os.availableParallelism(),
    cpuModel: os.cpus()[0]?.model.trim() ?? "unknown",
    memory: `${(os.totalmem() / 2 ** 30).toFixed(1)} GiB`,
    node: process.version,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    load: os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" "),
  };
}

/** The value after `--NAME` on the command line, if given. */
export function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? undefined : process.argv[i + 1];
}

/** A numeric command-line option: the fallback when absent, a clear error when malformed. */
export function numberOption(
  name: string,
  given: string | undefined,
  fallback: number,
  min: number,
  integer = false,
): number {
  if (given === undefined || given === "") return fallback;
  const n = Number(given);
  if (!(integer ? Number.isInteger(n) : Number.isFinite(n)) || n < min) {
    throw new Error(`--${name}: expected ${integer ? "an integer" : "a number"} >= ${min}, got ${given}`);
  }
  return n;
}

/**
 * A benchmark's cleanup (unmount, stop what it started) runs on Ctrl-C, SIGTERM and SIGHUP, and
 * after `timeoutSeconds` (a watchdog: a hung workload never leaves mounts behind).
 */
export function cleanUpOnStop(
  cleanup: () => Promise<void>,
  timeoutSeconds: number,
  log: (msg: string) => void,
): void {
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.on(signal, () => {
      log(`${signal}: cleaning up`);
      void cleanup().finally(() => process.exit(130));
    });
  }
  setTimeout(() => {
    log(`gave up after ${timeoutSeconds} s (watchdog)`);
    void cleanup().finally(() => process.exit(1));
  }, timeoutSeconds * 1000).unref();
}

/** Environment of txtfs children: no TXTFS_* of the developer's (a TXTFS_DB must never be used). */
export function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  return {
    ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("TXTFS_"))),
    ...extra,
  };
}

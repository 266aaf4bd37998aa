// Whether a pid still names the process that wrote a record. kill(pid, 0) alone is not enough: a
// process killed a moment ago is still there while it dies (exiting, or a zombie its parent has not
// reaped: a closed terminal's session may never reap it), and a pid is reused by later processes.
import { readFileSync } from "node:fs";

/** Clock ticks of /proc/PID/stat: USER_HZ, which Linux fixes at 100 on every architecture it runs Node on. */
const TICKS_PER_SECOND = 100;

/** PF_EXITING in /proc/PID/stat's flags: the process is dying (set before its files are closed). */
const PF_EXITING = 0x4;

/** /proc/stat's btime is whole seconds (and moves with the wall clock): a margin against both. */
const START_MARGIN_MS = 2000;

function bootTimeMs(): number | null {
  try {
    const m = /^btime (\d+)$/m.exec(readFileSync("/proc/stat", "utf8"));
    return m ? Number(m[1]) * 1000 : null;
  } catch {
    return null;
  }
}

function signalZero(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM"; // another user's: it exists
  }
}

/** /proc/PID/stat's fields after the command name, or null when there is no such process (undefined: no /proc). */
function statFields(pid: number): string[] | null | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "ENOENT" ? null : undefined;
  }
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after the last ")".
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

const dead = (fields: string[]) =>
  ["Z", "X", "x"].includes(fields[0] ?? "") || (Number(fields[6]) & PF_EXITING) !== 0;

/** The process is a zombie or dying: it runs no more code of its own and holds (or soon holds) nothing. */
export function isDeadOrDying(pid: number): boolean {
  const fields = statFields(pid);
  return fields === null || (fields !== undefined && dead(fields));
}

/** What names one process for as long as the machine runs: its start in clock ticks since boot, and the boot. */
export interface ProcessIdentity {
  /** Field 22 of /proc/PID/stat, kept as the kernel writes it: compared exactly, it cannot drift. */
  startTicks: string;
  /** /proc/sys/kernel/random/boot_id: ticks start again at every boot. */
  bootId: string | null;
}

function readBootId(): string | null {
  try {
    return readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim() || null;
  } catch {
    return null;
  }
}

/** The identity of the running process `pid`, or null without /proc (or no such process). */
export function processIdentity(pid: number): ProcessIdentity | null {
  const fields = statFields(pid);
  const startTicks = fields?.[19];
  return startTicks ? { startTicks, bootId: readBootId() } : null;
}

/**
 * The process `pid` runs (not dying, not a zombie) and is the one `identity` names: same start
 * ticks, same boot. Nothing here reads a clock, so clock steps, drift or a suspended machine
 * cannot make a running process look gone. Without /proc: kill(pid, 0).
 */
export function isSameProcess(pid: number, identity: ProcessIdentity): boolean {
  const fields = statFields(pid);
  if (fields === null) return false;
  if (fields === undefined) return signalZero(pid);
  if (dead(fields)) return false;
  const bootId = readBootId();
  if (identity.bootId && bootId && identity.bootId !== bootId) return false;
  return fields[19] === identity.startTicks;
}

/**
 * For records written without an identity (older txtfs): the process `pid` runs (not dying, not
 * a zombie) and started no later than `since` (the time
 * its record says it started): so it is the one that wrote the record. Without /proc: kill(pid, 0).
 */
export function isRunningSince(pid: number, since: string | number): boolean {
  const fields = statFields(pid);
  if (fields === null) return false;
  if (fields === undefined) return signalZero(pid);
  if (dead(fields)) return false;
  const boot = bootTimeMs();
  const sinceMs = typeof since === "number" ? since : Date.parse(since);
  if (boot === null || Number.isNaN(sinceMs)) return true;
  const startedMs = boot + (Number(fields[19]) / TICKS_PER_SECOND) * 1000;
  return startedMs <= sinceMs + START_MARGIN_MS;
}

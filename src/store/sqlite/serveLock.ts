// One server per embedded store. Two `txtfs serve` (or `mount --serve`) processes on one SQLite
// file would each keep caches and long-poll wake-ups that the other's commits never reach, so the
// second one is refused, naming the first. The lock is a file beside the store holding the owner's
// pid, host, boot and process start time: a lock left by a crash (a dead pid, another boot, a
// recycled pid with another start time, a killed process not yet reaped) is taken over, never obeyed.
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import { dirname } from "node:path";
import { isDeadOrDying } from "../../lib/processLiveness.ts";

export interface LockOwner {
  pid: number;
  host: string;
  bootId: string | null;
  startTicks: string | null;
  startedAt: string;
  command: string;
}

export class StoreLockedError extends Error {
  readonly owner: LockOwner;
  constructor(path: string, owner: LockOwner) {
    super(
      `another txtfs (pid ${owner.pid} on ${owner.host}, since ${owner.startedAt}: ${owner.command}) serves the embedded store ${path}; stop it first, or give this one another --data`,
    );
    this.name = "StoreLockedError";
    this.owner = owner;
  }
}

export const lockPathOf = (dbPath: string) => `${dbPath}.serve-lock`;

function read(path: string): string | null {
  try {
    return readFileSync(path, "utf8").trim();
  } catch {
    return null;
  }
}

/** Linux: the boot and the process's start time (clock ticks since boot, field 22 of /proc/PID/stat). */
function identity(pid: number): { bootId: string | null; startTicks: string | null } {
  const stat = read(`/proc/${pid}/stat`);
  // The command name (field 2) may hold spaces and parentheses: count fields after its last ')'.
  const fields = stat ? stat.slice(stat.lastIndexOf(")") + 2).split(" ") : [];
  return { bootId: read("/proc/sys/kernel/random/boot_id"), startTicks: fields[19] ?? null };
}

/** Is the lock's owner still running (on this host: checked; on another: assumed, it cannot be)? */
export function ownerAlive(owner: LockOwner): boolean {
  if (owner.host !== hostname()) return true;
  try {
    process.kill(owner.pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ESRCH") return false;
  }
  // Killed, and a zombie until its parent reaps it (maybe never): its connection to the store is closed.
  if (isDeadOrDying(owner.pid)) return false;
  const now = identity(owner.pid);
  if (owner.bootId && now.bootId && owner.bootId !== now.bootId) return false;
  if (owner.startTicks && now.startTicks && owner.startTicks !== now.startTicks) return false;
  return true;
}

/** The owner recorded in the lock beside `dbPath`, if a live one holds it. */
export function liveOwner(dbPath: string): LockOwner | null {
  const text = read(lockPathOf(dbPath));
  if (!text) return null;
  try {
    const owner = JSON.parse(text) as LockOwner;
    return ownerAlive(owner) ? owner : null;
  } catch {
    return null; // half-written by a crash: nobody holds it
  }
}

/** Takes the lock for this process or throws StoreLockedError; returns its release. */
export function acquireServeLock(dbPath: string): () => void {
  const path = lockPathOf(dbPath);
  const me: LockOwner = {
    pid: process.pid,
    host: hostname(),
    ...identity(process.pid),
    startedAt: new Date().toISOString(),
    command: ["txtfs", ...process.argv.slice(2)].join(" "),
  };
  mkdirSync(dirname(path), { recursive: true });
  for (let attempt = 0; ; attempt++) {
    let fd: number;
    try {
      fd = openSync(path, "wx", 0o644);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST" || attempt > 0) throw err;
      const owner = liveOwner(dbPath);
      if (owner) throw new StoreLockedError(dbPath, owner);
      rmSync(path, { force: true }); // stale: its owner is gone
      continue;
    }
    writeSync(fd, `${JSON.stringify(me)}\n`);
    closeSync(fd);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      // Only our own lock: never remove one another process took over meanwhile.
      if (read(path)?.includes(`"pid":${process.pid},`)) rmSync(path, { force: true });
    };
  }
}

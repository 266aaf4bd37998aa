// The FUSE connection of a mount whose daemon is gone. A daemon killed -9 normally closes its
// /dev/fuse as it dies, and the kernel ends the connection: programs on the mount get ENOTCONN.
// But a thread of the daemon blocked writing a reverse invalidation (on a folder's lock that a
// program holds while it waits for the daemon) keeps /dev/fuse open: the process stays a zombie,
// the connection never ends, and every program waiting on the mount waits for good, even after a
// lazy unmount. Writing 1 to fusectl's `abort` of the connection ends it as the close would: the
// waiting requests fail, the blocked thread returns, the zombie goes. Nothing here touches the
// mountpoint itself (on a dead connection a stat of it hangs or fails with ENOTCONN).
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { goneMounts, isDavRecord } from "./mountRegistry.ts";
import { isFuseType, mountsAt } from "./mountWatch.ts";

const CONNECTIONS = "/sys/fs/fuse/connections";

/** The FUSE connection of a mount's device "0:MINOR" (the number is its minor), or undefined. */
export function fuseConnectionOf(device: string): number | undefined {
  const m = /^0:(\d+)$/.exec(device);
  return m ? Number(m[1]) : undefined;
}

const firstLine = (err: unknown) =>
  (
    String((err as { stderr?: Buffer | string }).stderr ?? "").trim() ||
    (err as NodeJS.ErrnoException).code ||
    (err as Error).message
  ).split("\n")[0];

/**
 * Aborts FUSE connection `n` (fusectl is mounted at /sys/fs/fuse/connections first if it is not:
 * root only). "gone": the connection had already ended. Throws a one-line reason.
 */
export function abortFuseConnection(n: number): "aborted" | "gone" {
  if (!(mountsAt(CONNECTIONS) ?? []).some((m) => m.fstype === "fusectl")) {
    try {
      execFileSync("mount", ["-t", "fusectl", "none", CONNECTIONS], { stdio: "pipe" });
    } catch (err) {
      throw new Error(`fusectl is not mounted at ${CONNECTIONS} and could not be: ${firstLine(err)}`);
    }
  }
  try {
    writeFileSync(`${CONNECTIONS}/${n}/abort`, "1");
    return "aborted";
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return "gone";
    throw new Error(`${CONNECTIONS}/${n}/abort: ${firstLine(err)}`);
  }
}

/** What `abortIfDaemonGone` did: the gone daemon's pid, its connection, and the abort's outcome. */
export interface GoneDaemonAbort {
  pid: number;
  connection: number;
  /** Why the abort failed (one line); absent: aborted, or it had ended already. */
  failed?: string;
  /** The connection was still up (it had not ended with the daemon). */
  aborted: boolean;
}

/**
 * Aborts the FUSE connection of the mount on `mountpoint` only when a record says it is the one of
 * a txtfs daemon now gone (pid gone, a zombie, or reused; the device it recorded is the mount's).
 * Never for another kind of mount, another daemon's, or one no record names.
 */
export function abortIfDaemonGone(mountpoint: string): GoneDaemonAbort | undefined {
  const top = mountsAt(mountpoint)?.at(-1);
  if (!top || !isFuseType(top.fstype)) return undefined;
  const own = goneMounts().find(
    (r) =>
      r.mountpoint === mountpoint && !isDavRecord(r) && (r.device === undefined || r.device === top.device),
  );
  const connection = fuseConnectionOf(top.device);
  if (!own || connection === undefined) return undefined;
  try {
    return { pid: own.pid, connection, aborted: abortFuseConnection(connection) === "aborted" };
  } catch (err) {
    return { pid: own.pid, connection, aborted: false, failed: (err as Error).message };
  }
}

/** One line of what `abortIfDaemonGone` did (undefined: nothing worth saying, the connection was gone). */
export function describeGoneAbort(mountpoint: string, a: GoneDaemonAbort): string | undefined {
  if (a.failed)
    return `the daemon of ${mountpoint} (pid ${a.pid}) is gone, but its FUSE connection ${a.connection} could not be aborted (${a.failed}): programs waiting on it may stay blocked`;
  return a.aborted
    ? `the daemon of ${mountpoint} (pid ${a.pid}) is gone: its FUSE connection ${a.connection} is aborted`
    : undefined;
}

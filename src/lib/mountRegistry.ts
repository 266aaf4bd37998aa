// Running mounts (and `txtfs dav` servers) announce themselves in ~/.config/txtfs/mounts/<pid>.json
// (with their counters, refreshed every few seconds) so `txtfs status`, `sync` and `unmount` can
// find them.
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isFuseType, mountsAt } from "./mountWatch.ts";
import { configDir } from "./paths.ts";
import { isRunningSince, isSameProcess, type ProcessIdentity } from "./processLiveness.ts";
import type { UnsentCopy } from "./refusedSaves.ts";

/** A FUSE mount, or a WebDAV server over the same vfs (`txtfs dav`). */
export type MountKind = "mount" | "dav";

export interface MountRecord {
  pid: number;
  /** Absent from older records: a mount. */
  kind?: MountKind;
  /** A mount's directory; a dav server's URL (`http://127.0.0.1:PORT/`). */
  mountpoint: string;
  url: string;
  cacheDir: string;
  startedAt: string;
  /** Who wrote the record (absent from older records: then `startedAt` is compared, with a margin). */
  process?: ProcessIdentity;
  updatedAt: string;
  stats: Record<string, number>;
  conflicts: string[];
  /** Saves the service refused (kept as local files) and the local-only files, with the reason. */
  refused?: { path: string; reason: string; keptAs?: string; at: string }[];
  localOnly?: { path: string; why: string }[];
  /** The `.txtfsignore` lines skipped as not patterns. */
  excludeProblems?: string[];
  /** Since when the service cannot be reached (null: it answers). */
  unreachableSince?: string | null;
  /** The last sidecar or xattr write refused per path (EINVAL), with the rule it broke. */
  refusedMetadata?: { path: string; reason: string; at: string }[];
  /** Refused saves whose bytes are still only in their local copy (`NAME.unsent`), also from earlier mounts. */
  unsent?: UnsentCopy[];
  /**
   * A mount's st_dev as the kernel reports it once mounted ("0:MINOR", /proc/self/mountinfo): the
   * minor is its FUSE connection, which `txtfs unmount` aborts once this daemon is gone.
   */
  device?: string;
}

export const isDavRecord = (rec: Pick<MountRecord, "kind">) => rec.kind === "dav";

/** What a path inside it is put after: a mount's directory, a dav server's URL without its last "/". */
export const recordRoot = (rec: Pick<MountRecord, "kind" | "mountpoint">) =>
  isDavRecord(rec) ? rec.mountpoint.replace(/\/$/, "") : rec.mountpoint;

/** How the CLI names it: the mountpoint, or "WebDAV URL". */
export const recordLabel = (rec: Pick<MountRecord, "kind" | "mountpoint">) =>
  isDavRecord(rec) ? `WebDAV ${rec.mountpoint}` : rec.mountpoint;

const dir = () => join(configDir(), "mounts");

export function writeMountRecord(record: MountRecord): void {
  mkdirSync(dir(), { recursive: true, mode: 0o700 });
  const file = join(dir(), `${record.pid}.json`);
  writeFileSync(`${file}.tmp`, JSON.stringify(record, null, 2), { mode: 0o600 });
  renameSync(`${file}.tmp`, file);
}

export function removeMountRecord(pid: number): void {
  rmSync(join(dir(), `${pid}.json`), { force: true });
}

/** The process that wrote `rec` still runs: by its start ticks when recorded, else by its start time. */
function isRecordOwnerRunning(rec: MountRecord): boolean {
  return rec.process ? isSameProcess(rec.pid, rec.process) : isRunningSince(rec.pid, rec.startedAt);
}

/**
 * The mount of a record whose daemon is gone (a kill -9) is still there: the same FUSE mount
 * (by its device, when recorded) on its mountpoint. Its record is kept for `txtfs unmount`, the
 * evidence that the connection there is this dead daemon's and may be aborted.
 */
function isLeftMounted(rec: MountRecord): boolean {
  if (isDavRecord(rec)) return false;
  return (mountsAt(rec.mountpoint) ?? []).some(
    (m) => isFuseType(m.fstype) && (rec.device === undefined || m.device === rec.device),
  );
}

/** Every record, with whether its daemon runs; records of dead daemons with no mount left are removed. */
function readRecords(): { rec: MountRecord; running: boolean }[] {
  let names: string[];
  try {
    names = readdirSync(dir());
  } catch {
    return [];
  }
  const out: { rec: MountRecord; running: boolean }[] = [];
  for (const name of names.filter((n) => n.endsWith(".json"))) {
    try {
      const rec = JSON.parse(readFileSync(join(dir(), name), "utf8")) as MountRecord;
      if (isRecordOwnerRunning(rec)) out.push({ rec, running: true });
      else if (isLeftMounted(rec)) out.push({ rec, running: false });
      else removeMountRecord(rec.pid);
    } catch {}
  }
  // A mount on that mountpoint by a running daemon is that daemon's (a device number is reused
  // once its mount is gone): the dead daemon's record has nothing left to end.
  const live = new Set(out.filter((r) => r.running).map((r) => r.rec.mountpoint));
  return out.filter((r) => {
    if (r.running || !live.has(r.rec.mountpoint)) return true;
    removeMountRecord(r.rec.pid);
    return false;
  });
}

/** Records of running mounts; records left by dead (dying, zombie) processes or reused pids are dropped. */
export function listMounts(): MountRecord[] {
  return readRecords()
    .filter((r) => r.running)
    .map((r) => r.rec);
}

/**
 * Records of mounts whose daemon is gone (killed: the pid is gone, a zombie, or reused) while
 * their FUSE mount is still on the mountpoint: what `txtfs unmount` ends.
 */
export function goneMounts(): MountRecord[] {
  return readRecords()
    .filter((r) => !r.running)
    .map((r) => r.rec);
}

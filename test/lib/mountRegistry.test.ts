// Liveness of a mount's record: the process is named by its start ticks (field 22 of
// /proc/PID/stat), which no clock step, drift or suspended VM can move; the wall-clock start
// is only for records older txtfs wrote.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { listMounts, type MountRecord, writeMountRecord } from "../../src/lib/mountRegistry.ts";
import { processIdentity } from "../../src/lib/processLiveness.ts";

let config: string;
let child: ChildProcess;
const savedConfig = process.env.TXTFS_CONFIG;

beforeEach(() => {
  config = mkdtempSync(join(tmpdir(), "txtfs-registry-"));
  process.env.TXTFS_CONFIG = config;
  child = spawn("sleep", ["600"], { stdio: "ignore" });
});

afterEach(() => {
  if (child.pid) process.kill(child.pid, "SIGKILL");
  if (savedConfig === undefined) delete process.env.TXTFS_CONFIG;
  else process.env.TXTFS_CONFIG = savedConfig;
  rmSync(config, { recursive: true, force: true });
});

function record(pid: number, startedAt: Date, extra: Partial<MountRecord> = {}): MountRecord {
  return {
    pid,
    mountpoint: "/mnt/notes",
    url: "http://127.0.0.1:1",
    cacheDir: join(config, "cache"),
    startedAt: startedAt.toISOString(),
    updatedAt: new Date().toISOString(),
    stats: {},
    conflicts: [],
    ...extra,
  };
}

const minutesAgo = (n: number) => new Date(Date.now() - n * 60_000);
const recordFiles = () => readdirSync(join(config, "mounts")).filter((n) => n.endsWith(".json"));

describe("mount records", () => {
  it("a running mount whose recorded start is minutes off its clock ticks is still running", () => {
    const pid = child.pid as number;
    const identity = processIdentity(pid);
    expect(identity?.startTicks).toMatch(/^\d+$/);
    // The wall clock said the mount started 5 minutes before the kernel's ticks put it.
    writeMountRecord(record(pid, minutesAgo(5), { process: identity ?? undefined }));
    expect(listMounts().map((m) => m.pid)).toEqual([pid]);
    expect(recordFiles()).toEqual([`${pid}.json`]);
  });

  it("a record whose ticks name another process (a reused pid) is dropped, however right its start time", () => {
    const pid = child.pid as number;
    const identity = processIdentity(pid);
    if (!identity) throw new Error("no /proc");
    const other = { ...identity, startTicks: String(Number(identity.startTicks) + 1) };
    writeMountRecord(record(pid, new Date(), { process: other }));
    expect(listMounts()).toEqual([]);
    expect(recordFiles()).toEqual([]);
  });

  it("a record from another boot is dropped", () => {
    const pid = child.pid as number;
    const identity = processIdentity(pid);
    if (!identity) throw new Error("no /proc");
    writeMountRecord(record(pid, new Date(), { process: { ...identity, bootId: "not-this-boot" } }));
    expect(listMounts()).toEqual([]);
  });

  it("an older record (no ticks) is still read by its start time", () => {
    const pid = child.pid as number;
    writeMountRecord(record(pid, new Date(Date.now() + 60_000)));
    expect(listMounts().map((m) => m.pid)).toEqual([pid]);
    // Started after the record says: another process has that pid.
    writeMountRecord(record(pid, minutesAgo(5)));
    expect(listMounts()).toEqual([]);
  });
});

// A daemon serving a vfs (`txtfs mount`, `txtfs dav`) makes itself known to `txtfs status`, `sync`
// and `unmount`: a control socket in its cache dir (sync drains, stats counts now), its record in
// the mount registry (rewritten every 2 s), and the refused saves whose bytes only a local copy
// holds (src/cli/refusalRecords.ts). Nothing here knows FUSE or HTTP.
import type { Server } from "node:net";
import type { Logger } from "../lib/logger.ts";
import { type MountKind, removeMountRecord, writeMountRecord } from "../lib/mountRegistry.ts";
import { processIdentity } from "../lib/processLiveness.ts";
import type { Refusal } from "../lib/refusedSaves.ts";
import type { Vfs } from "../vfs/vfs.ts";
import { RefusalRecords } from "./refusalRecords.ts";

/** How often the record is rewritten (what `txtfs status` shows of a daemon that does not answer). */
const RECORD_EVERY_MS = 2000;

export interface DaemonIdentity {
  kind: MountKind;
  /** A mount's directory, or the URL a dav server serves (`http://127.0.0.1:PORT/`). */
  mountpoint: string;
  /** The service its saves go to. */
  url: string;
  cacheDir: string;
  /** When the daemon started (ms since the epoch). */
  started: number;
  /** A mount's st_dev, "0:MINOR" (its FUSE connection), as /proc/self/mountinfo says once mounted. */
  device?: string;
}

export interface Announcement {
  /** Writes the record (at once, then every 2 s); before the daemon says it is up, so status finds it. */
  record(): void;
  /** The daemon stops: the record is no longer rewritten (its last copy stays until `withdraw`). */
  stopRecording(): void;
  /** Once the vfs stopped: the refusals that kept nothing, recorded for the next sync; returned. */
  refusalsAtStop(): Refusal[];
  /** No more sync or stats requests. */
  closeControl(): void;
  /** The daemon is gone (its last save delivered or journalled): control socket and record removed. */
  withdraw(): void;
}

/**
 * Serves the control socket of `vfs` (started: its local files loaded) and prepares its record;
 * `record()` writes it. A control socket that cannot be made is logged: status then reads the record.
 */
export async function announceDaemon(vfs: Vfs, who: DaemonIdentity, log: Logger): Promise<Announcement> {
  const { serveControl } = await import("../lib/mountControl.ts");
  const { kind, mountpoint, url, cacheDir, started, device } = who;
  const refusals = new RefusalRecords(cacheDir, vfs, log);
  let control: Server | undefined = await serveControl(
    cacheDir,
    async (waitMs) => {
      // While the service is unreachable, try again every second until the wait is over.
      const deadline = Date.now() + waitMs;
      let pending = await vfs.drain();
      while (pending > 0 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, Math.min(1000, deadline - Date.now())));
        pending = await vfs.drain();
      }
      return {
        pending,
        refused: vfs.takeRefused(),
        unsent: refusals.kept(),
        // Why what is left waits: the service, or this machine (status and sync name it).
        unreachableSince: vfs.unreachableSince(),
        journal: vfs.journalHealth(),
      };
    },
    () => ({
      pid: process.pid,
      kind,
      mountpoint,
      uptimeSeconds: (Date.now() - started) / 1000,
      ...vfs.metrics(),
      // What `txtfs status` prints of the tree, as it is now (the record's copy is up to 2 s old).
      stats: vfs.stats(),
      localOnly: vfs.localOnly(),
      excludeProblems: vfs.excludeProblems(),
      conflicts: [...vfs.conflicts],
      unsent: refusals.kept(),
    }),
  ).catch((err) => {
    log.warn({ err: (err as Error).message }, "no control socket: `txtfs sync` cannot reach this daemon");
    return undefined;
  });
  const self = processIdentity(process.pid);
  const write = () =>
    writeMountRecord({
      pid: process.pid,
      kind,
      mountpoint,
      url,
      cacheDir,
      startedAt: new Date(started).toISOString(),
      ...(self ? { process: self } : {}),
      updatedAt: new Date().toISOString(),
      stats: vfs.stats(),
      conflicts: [...vfs.conflicts],
      refused: [...vfs.refused],
      localOnly: vfs.localOnly(),
      excludeProblems: vfs.excludeProblems(),
      unreachableSince: vfs.unreachableSince(),
      refusedMetadata: vfs.refusedMetadata(),
      unsent: refusals.kept(),
      ...(device ? { device } : {}),
    });
  let timer: NodeJS.Timeout | undefined;
  const closeControl = () => {
    control?.close();
    control = undefined;
  };
  return {
    record() {
      write();
      if (timer) return;
      timer = setInterval(write, RECORD_EVERY_MS);
      timer.unref();
    },
    stopRecording() {
      clearInterval(timer);
    },
    refusalsAtStop: () => refusals.atStop(),
    closeControl,
    withdraw() {
      clearInterval(timer);
      closeControl();
      removeMountRecord(process.pid);
    },
  };
}

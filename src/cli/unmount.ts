// txtfs unmount: the daemon delivers every pending save, then unmounts and exits. A save it cannot
// deliver (the service unreachable) is safe in the journal on disk, so the unmount goes on (as
// rclone's does with uploads left in its cache), but it is never silent: how many saves wait and
// where, on stderr, and exit 1 (as `git push` fails while the commits stay); `--wait N` keeps
// trying for N seconds first, as `txtfs sync --timeout N` does.
// A mount whose daemon is gone (killed -9: its record names a pid that is gone or a zombie) has
// its FUSE connection aborted first (a killed daemon can stay a zombie with the connection open,
// and every program waiting on the mount would wait for good), then it is unmounted; what its
// cache dir still holds is said as above. A stopped `txtfs dav`'s cache dir is named by its URL.
import { execFileSync } from "node:child_process";
import type { Command } from "commander";
import { abortIfDaemonGone, describeGoneAbort } from "../lib/fuseConnection.ts";
import { readJournal } from "../lib/journalFiles.ts";
import { goneMounts, isDavRecord, listMounts, recordRoot, removeMountRecord } from "../lib/mountRegistry.ts";
import { isFuseType, mountsAt } from "../lib/mountWatch.ts";
import {
  type Refusal,
  readUnsentCopies,
  takeUnreportedRefusals,
  type UnsentCopy,
} from "../lib/refusedSaves.ts";
import { isUrlArgument, mountOrUrl } from "./mountOrUrl.ts";
import {
  describeRefusal,
  describeUnsent,
  howToSend,
  notOnServiceUnmounted,
  savesWord,
  type UnmountedCacheDir,
  waitWord,
} from "./notOnService.ts";
import { parseSeconds, UsageError } from "./options.ts";

/** How long the daemon may take to deliver (or journal) what is pending, unmount and exit. */
const STOP_TIMEOUT_MS = 30_000;

export function registerUnmount(program: Command): void {
  program
    .command("unmount <mountpoint>")
    .description(
      "Unmount: the daemon delivers pending saves first. Saves it cannot deliver (the service unreachable) stay in the journal for the next mount: it says how many and where, and exits 1. A killed daemon's mount: its FUSE connection is aborted, then it is unmounted.",
    )
    .option(
      "--wait <seconds>",
      "while the service is unreachable, keep trying to deliver this long before unmounting",
      parseSeconds,
    )
    .action(async (mountpointArg: string, opts: { wait?: number }) => {
      const mountpoint = mountOrUrl(mountpointArg);
      const rec = listMounts().find((m) => m.mountpoint === mountpoint);
      // A `txtfs dav` server has no kernel mount: it is stopped as it was started, and nothing
      // here signals it or runs fusermount.
      if (rec && isDavRecord(rec))
        throw new UsageError(
          `${mountpoint} is served by txtfs dav (pid ${rec.pid}), not mounted: stop that process (Ctrl-C, or kill ${rec.pid}) and it delivers its saves first`,
        );
      if (!rec && isUrlArgument(mountpoint)) {
        // A stopped (or killed) `txtfs dav` on this URL: what its cache dir still holds.
        const left = notOnServiceUnmounted(listMounts()).filter(
          (d) => d.kind === "dav" && d.mountpoint === mountpoint,
        );
        if (left.length === 0)
          throw new UsageError(`${mountpoint} is not a running txtfs dav server (txtfs status lists them)`);
        for (const w of left) reportDavLeftBehind(w);
        return;
      }
      if (!rec) {
        // No daemon to ask (killed, or already unmounted): what a cache dir of this mountpoint holds.
        const left = notOnServiceUnmounted(listMounts()).filter(
          (d) => d.kind !== "dav" && d.mountpoint === mountpoint,
        );
        if (!endLeftMount(mountpoint) && left.length === 0)
          throw new Error(`${mountpoint} is not a txtfs mount`);
        for (const w of left)
          reportLeftBehind(
            mountpoint,
            w.saves,
            w.unsent,
            takeUnreportedRefusals(w.cacheDir),
            w.cacheDir,
            w.url,
          );
        return;
      }
      // Refused while we waited (this sync takes them from the daemon): those that kept nothing are
      // said below; a kept copy is among the daemon's records.
      const refusedMeanwhile: Refusal[] = [];
      if (opts.wait !== undefined) {
        const { requestSync } = await import("../lib/mountControl.ts");
        // The daemon answers before our own deadline (5 s of margin for a last attempt). Whatever
        // it answers, its stop below delivers what it can and the journal keeps the rest.
        const result = await requestSync(rec.cacheDir, opts.wait * 1000 + 5000, opts.wait * 1000).catch(
          () => undefined,
        );
        for (const r of result?.refused ?? []) if (!r.keptAs) refusedMeanwhile.push(r);
      }
      process.kill(rec.pid, "SIGTERM");
      // The daemon removes its record once everything is delivered or journalled and it is
      // unmounted, just before it exits.
      for (const deadline = Date.now() + STOP_TIMEOUT_MS; ; ) {
        await new Promise((r) => setTimeout(r, 10));
        if (!listMounts().some((m) => m.pid === rec.pid)) break;
        if (Date.now() > deadline)
          throw new Error(`the daemon (pid ${rec.pid}) did not stop within ${STOP_TIMEOUT_MS / 1000} s`);
      }
      reportLeftBehind(
        mountpoint,
        readJournal(rec.cacheDir).saves.length,
        readUnsentCopies(rec.cacheDir),
        [...refusedMeanwhile, ...takeUnreportedRefusals(rec.cacheDir)],
        rec.cacheDir,
        rec.url,
      );
    });
}

/** What the unmount leaves that is not on the service: on stderr, and exit 1. */
function reportLeftBehind(
  mountpoint: string,
  saves: number,
  unsent: UnsentCopy[],
  refusals: Refusal[],
  cacheDir: string,
  url?: string,
): void {
  if (saves > 0)
    process.stderr.write(
      `txtfs: ${mountpoint} is unmounted, but ${savesWord(saves)}${url ? ` for ${url}` : ""} ${waitWord(saves)} in ${cacheDir}; ${saves === 1 ? "it is" : "they are"} sent when it is mounted again (txtfs status lists them)\n`,
    );
  for (const c of unsent) process.stderr.write(`txtfs: ${describeUnsent(mountpoint, c, cacheDir)}\n`);
  for (const r of refusals) process.stderr.write(`txtfs: ${describeRefusal(mountpoint, r)}\n`);
  if (saves > 0 || unsent.length > 0 || refusals.length > 0) process.exitCode = 1;
}

/** What a stopped `txtfs dav` left in its cache dir: on stderr, and exit 1. */
function reportDavLeftBehind(w: UnmountedCacheDir): void {
  const label = `WebDAV ${w.mountpoint}`;
  const root = recordRoot({ kind: "dav", mountpoint: w.mountpoint ?? "" });
  if (w.saves > 0)
    process.stderr.write(
      `txtfs: ${label} is not running, but ${savesWord(w.saves)}${w.url ? ` for ${w.url}` : ""} ${waitWord(w.saves)} in ${w.cacheDir}; ${howToSend(w)} (txtfs status lists them)\n`,
    );
  for (const c of w.unsent) process.stderr.write(`txtfs: ${describeUnsent(root, c, w.cacheDir)}\n`);
  for (const r of takeUnreportedRefusals(w.cacheDir))
    process.stderr.write(`txtfs: ${describeRefusal(root, r)}\n`);
  process.exitCode = 1;
}

/**
 * A mount without a running daemon (killed, or unmounted already) goes. Its FUSE connection is
 * aborted first, only when a record says it is that of a txtfs daemon now gone: a killed daemon
 * may be a zombie still holding it, and then programs waiting on the mount would wait for good,
 * also after a lazy unmount. The mountpoint is never looked at (its stat would hang, or fail
 * with ENOTCONN): the mount table says what is there. False: nothing was mounted there.
 */
function endLeftMount(mountpoint: string): boolean {
  const gone = goneMounts().filter((r) => r.mountpoint === mountpoint && !isDavRecord(r));
  const top = mountsAt(mountpoint)?.at(-1);
  if (top && !isFuseType(top.fstype)) return false; // never another kind of mount
  const ended = abortIfDaemonGone(mountpoint);
  const said = ended && describeGoneAbort(mountpoint, ended);
  if (said) process.stderr.write(`txtfs: ${said}\n`);
  // Not in the mount table (or no table to read): fusermount alone, as before, and it may refuse.
  const failed = forceUnmount(mountpoint, top !== undefined);
  if (failed === undefined) {
    for (const r of gone) removeMountRecord(r.pid);
    return true;
  }
  if (top) throw new Error(`${mountpoint} has no running daemon and could not be unmounted: ${failed}`);
  return false;
}

/**
 * fusermount -u; a busy mount (a program's working directory in it) is detached lazily, with
 * umount -l too when the mount table shows one there. Undefined: unmounted; else why not.
 */
function forceUnmount(mountpoint: string, inTable: boolean): string | undefined {
  const tries: [string, string[]][] = [
    ["fusermount", ["-u", mountpoint]],
    ["fusermount", ["-uz", mountpoint]],
    ...(inTable ? ([["umount", ["-l", mountpoint]]] as [string, string[]][]) : []),
  ];
  let why = "";
  for (const [cmd, args] of tries) {
    try {
      execFileSync(cmd, args, { stdio: "pipe" });
      return undefined;
    } catch (err) {
      why =
        String((err as { stderr?: Buffer }).stderr ?? "")
          .trim()
          .split("\n")[0] || (err as Error).message;
    }
  }
  return why;
}

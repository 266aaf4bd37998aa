// txtfs unmount: the daemon delivers every pending save, then unmounts and exits. A save it cannot
// deliver (the service unreachable) is safe in the journal on disk, so the unmount goes on (as
// rclone's does with uploads left in its cache), but it is never silent: how many saves wait and
// where, on stderr, and exit 1 (as `git push` fails while the commits stay); `--wait N` keeps
// trying for N seconds first, as `txtfs sync --timeout N` does.
import { execFileSync } from "node:child_process";
import type { Command } from "commander";
import { readJournal } from "../lib/journalFiles.ts";
import { isDavRecord, listMounts } from "../lib/mountRegistry.ts";
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
  notOnServiceUnmounted,
  savesWord,
  waitWord,
} from "./notOnService.ts";
import { parseSeconds, UsageError } from "./options.ts";

/** How long the daemon may take to deliver (or journal) what is pending, unmount and exit. */
const STOP_TIMEOUT_MS = 30_000;

export function registerUnmount(program: Command): void {
  program
    .command("unmount <mountpoint>")
    .description(
      "Unmount: the daemon delivers pending saves first. Saves it cannot deliver (the service unreachable) stay in the journal for the next mount: it says how many and where, and exits 1.",
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
      if (!rec && isUrlArgument(mountpoint))
        throw new UsageError(`${mountpoint} is not a running txtfs dav server (txtfs status lists them)`);
      if (!rec) {
        // No daemon to ask (killed, or already unmounted): what a cache dir of this mountpoint holds.
        const left = notOnServiceUnmounted(listMounts()).filter((d) => d.mountpoint === mountpoint);
        if (!lazyUnmount(mountpoint) && left.length === 0)
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

/** A mount without a daemon record (its daemon killed): the kernel's mount goes. False: none there. */
function lazyUnmount(mountpoint: string): boolean {
  for (const flags of ["-u", "-uz"]) {
    try {
      execFileSync("fusermount", [flags, mountpoint], { stdio: "pipe" });
      return true;
    } catch {}
  }
  return false;
}

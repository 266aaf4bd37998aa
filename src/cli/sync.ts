// txtfs sync: waits until every save is on the service. Each running mount (and `txtfs dav`
// server, named by its URL) is asked over its control socket; a cache dir no mount uses is read from disk: its saves wait for the next mount,
// so sync says where they are and exits 1, as it does while the service is unreachable.
import type { Command } from "commander";
import { listMounts, recordLabel, recordRoot } from "../lib/mountRegistry.ts";
import { takeUnreportedRefusals } from "../lib/refusedSaves.ts";
import { isUrlArgument, mountOrUrl } from "./mountOrUrl.ts";
import {
  describeRefusal,
  describeStillWaiting,
  describeUnsent,
  describeWaiting,
  leftLabel,
  leftRoot,
  notOnServiceUnmounted,
} from "./notOnService.ts";
import { parseSeconds } from "./options.ts";

export function registerSync(program: Command): void {
  program
    .command("sync [mountpoint]")
    .description(
      "Wait until every save made in the mount (or txtfs dav server, by its URL; all by default) is on the service; exit 1 while some wait, also in a cache dir nothing is mounted from.",
    )
    .option(
      "--timeout <seconds>",
      "while the service is unreachable, keep trying this long (default: report at once)",
      parseSeconds,
    )
    .action(async (mountpointArg: string | undefined, opts: { timeout?: number }) => {
      const wanted = mountpointArg === undefined ? undefined : mountOrUrl(mountpointArg);
      const running = listMounts();
      const mounts = running.filter((m) => !wanted || m.mountpoint === wanted);
      const unmounted = notOnServiceUnmounted(running).filter((w) => !wanted || w.mountpoint === wanted);
      if (mounts.length === 0 && unmounted.length === 0)
        throw new Error(
          wanted
            ? `${wanted} is not a txtfs mount${isUrlArgument(wanted) ? " or txtfs dav server" : ""}`
            : "no txtfs mounts",
        );
      const { requestSync } = await import("../lib/mountControl.ts");
      let pending = 0;
      let refused = 0;
      for (const m of mounts) {
        // A dav server's paths are shown under its URL, and it is named "WebDAV URL".
        const root = recordRoot(m);
        const label = recordLabel(m);
        // The daemon answers before our own deadline (5 s of margin for a last attempt and the answer).
        const result =
          opts.timeout === undefined
            ? await requestSync(m.cacheDir, 300_000)
            : await requestSync(m.cacheDir, opts.timeout * 1000 + 5000, opts.timeout * 1000);
        pending += result.pending;
        // Refused since the last sync (with bytes or not), then every copy still kept from before.
        const fresh = result.refused ?? [];
        const refusedBefore = refused;
        for (const r of fresh) {
          refused++;
          process.stdout.write(
            `${label}: the service refused the save of ${root}${r.path} (${r.reason})${r.keptAs ? `; its bytes are kept in ${root}${r.keptAs}` : ""}\n`,
          );
        }
        for (const c of result.unsent ?? []) {
          if (fresh.some((r) => r.keptAs === c.keptAs)) continue;
          refused++;
          process.stdout.write(`${label}: ${describeUnsent(root, c)}\n`);
        }
        // Refused while an earlier mount of this cache dir stopped, and reported by nobody yet.
        for (const r of takeUnreportedRefusals(m.cacheDir)) {
          refused++;
          process.stdout.write(`${label}: ${describeRefusal(root, r)}\n`);
        }
        process.stdout.write(
          result.pending === 0
            ? `${label}: every ${refused > refusedBefore ? "other " : ""}save is on the service\n`
            : `${label}: ${describeStillWaiting(result.pending, result)}\n`,
        );
      }
      for (const w of unmounted) {
        // A stopped `txtfs dav`'s is named by its URL ("WebDAV URL"), its paths under it.
        const where = leftLabel(w);
        const root = leftRoot(w);
        pending += w.saves;
        if (w.saves > 0) process.stdout.write(`${where}: ${describeWaiting(w)}\n`);
        for (const c of w.unsent) {
          refused++;
          process.stdout.write(`${where}: ${describeUnsent(root, c, w.cacheDir)}\n`);
        }
        for (const r of takeUnreportedRefusals(w.cacheDir)) {
          refused++;
          process.stdout.write(`${where}: ${describeRefusal(root, r)}\n`);
        }
      }
      if (pending > 0 || refused > 0) process.exitCode = 1;
    });
}

// txtfs status: the running mounts (and `txtfs dav` servers, named by their URL), and the saves
// waiting in cache dirs nothing is mounted from.
// A mount's pending saves, notes, local-only files and conflicts are what its daemon counts now
// (the same journal `txtfs sync` drains), not the snapshot its record keeps (rewritten every 2 s);
// a daemon that does not answer is shown from that record and its journal on disk.
import type { Command } from "commander";
import { readJournalDamage } from "../lib/journalDamage.ts";
import { readJournal } from "../lib/journalFiles.ts";
import { goneMounts, listMounts, type MountRecord, recordLabel, recordRoot } from "../lib/mountRegistry.ts";
import { readUnreportedRefusals, type UnsentCopy } from "../lib/refusedSaves.ts";
import {
  describeDamageForStatus,
  describeFaultForStatus,
  describeRefusal,
  describeUnsent,
  howToSend,
  type JournalFaultInfo,
  leftLabel,
  leftRoot,
  notOnServiceUnmounted,
  type UnmountedCacheDir,
} from "./notOnService.ts";

/** A daemon busy for longer than this is counted from disk. */
const LIVE_TIMEOUT_MS = 1000;

interface Live {
  stats?: MountRecord["stats"];
  localOnly?: MountRecord["localOnly"];
  excludeProblems?: MountRecord["excludeProblems"];
  conflicts?: MountRecord["conflicts"];
  saves?: { pending?: number };
  feed?: { unreachableSince?: string | null };
  unsent?: UnsentCopy[];
  journal?: { fault?: JournalFaultInfo };
  error?: string;
}

export function registerStatus(program: Command): void {
  program
    .command("status")
    .description(
      "Show mounts and txtfs dav servers (pending uploads, local-only files, conflicts, cache) and saves waiting in cache dirs nothing is mounted from.",
    )
    .option(
      "--json",
      "machine-readable, with each daemon's live statistics (cache hits/misses, requests by kind, pending saves and their age, feed position and lag)",
    )
    .action(async (opts: { json?: boolean }) => {
      const mounts = listMounts();
      const unmounted = notOnServiceUnmounted(mounts);
      // Killed daemons whose mounts are still there (programs on them get no answer).
      const gone = goneMounts();
      const goneAt = (mountpoint?: string) => gone.find((g) => g.mountpoint === mountpoint);
      const { requestStats } = await import("../lib/mountControl.ts");
      if (opts.json) {
        // Each daemon answers on its control socket; one that does not (busy, older txtfs) keeps
        // the snapshot of its record (written every 2 s), and `live.error` says why.
        const out = await Promise.all(
          mounts.map(async (m) => ({
            mounted: true,
            ...m,
            live: await requestStats(m.cacheDir).catch((err: Error) => ({ error: err.message })),
          })),
        );
        const left: UnmountedCacheDir[] = gone
          .filter((g) => !unmounted.some((w) => w.mountpoint === g.mountpoint))
          .map((g) => ({
            cacheDir: g.cacheDir,
            mountpoint: g.mountpoint,
            url: g.url,
            saves: 0,
            unsent: [],
            refusals: [],
          }));
        const waiting = [...unmounted, ...left].map((w) => ({
          mounted: false,
          ...(goneAt(w.mountpoint) ? { daemonGone: { pid: goneAt(w.mountpoint)!.pid } } : {}),
          kind: w.kind ?? "mount",
          mountpoint: w.mountpoint ?? null,
          url: w.url ?? null,
          cacheDir: w.cacheDir,
          waitingSaves: w.saves,
          unsent: w.unsent,
          refusals: w.refusals,
        }));
        process.stdout.write(`${JSON.stringify([...out, ...waiting], null, 2)}\n`);
        return;
      }
      if (mounts.length === 0 && unmounted.length === 0 && gone.length === 0) {
        process.stdout.write("no txtfs mounts\n");
        return;
      }
      const lives = await Promise.all(
        mounts.map((m) =>
          requestStats(m.cacheDir, LIVE_TIMEOUT_MS).catch((err: Error) => ({ error: err.message })),
        ),
      );
      for (const [i, m] of mounts.entries()) printMount(m, lives[i] as Live);
      const goneLine = (g: MountRecord) =>
        `${g.mountpoint} (its daemon, pid ${g.pid}, is gone: programs on it get no answer; txtfs unmount ${g.mountpoint} ends it)  <- ${g.url}\n`;
      for (const g of gone)
        if (!unmounted.some((w) => w.mountpoint === g.mountpoint)) process.stdout.write(goneLine(g));
      for (const w of unmounted) {
        // A stopped `txtfs dav`'s cache dir is named by the URL it served, and started again to send.
        const dav = w.kind === "dav" && w.mountpoint !== undefined;
        const root = leftRoot(w);
        const killed = goneAt(w.mountpoint);
        process.stdout.write(
          killed
            ? goneLine(killed)
            : `${w.mountpoint === undefined ? "(mountpoint unknown)" : leftLabel(w)} (${dav ? "not running" : "not mounted"})${w.url ? `  <- ${w.url}` : ""}\n`,
        );
        if (w.saves > 0)
          process.stdout.write(
            `  ${w.saves} ${w.saves === 1 ? "save waits" : "saves wait"} in ${w.cacheDir}; ${dav ? howToSend(w) : "mount it again to send them"}\n`,
          );
        for (const c of w.unsent) process.stdout.write(`  ${describeUnsent(root, c, w.cacheDir)}\n`);
        for (const r of w.refusals) process.stdout.write(`  ${describeRefusal(root, r)}\n`);
        for (const d of readJournalDamage(w.cacheDir))
          process.stdout.write(`  ${describeDamageForStatus(d)}\n`);
      }
    });
}

function printMount(m: MountRecord, live: Live): void {
  const s = live.stats ?? m.stats;
  const pending = live.saves?.pending ?? readJournal(m.cacheDir).saves.length;
  const unreachableSince = live.error ? m.unreachableSince : live.feed?.unreachableSince;
  // A dav server's paths are shown under its URL (http://127.0.0.1:8080/notes/a.md).
  const root = recordRoot(m);
  process.stdout.write(
    `${recordLabel(m)}  <- ${m.url}  (pid ${m.pid}, since ${m.startedAt})\n` +
      `  notes ${s.notes}, folders ${s.folders}, pending uploads ${pending}, local-only files ${s.localFiles}, conflicts ${s.conflicts}\n` +
      `  cache ${(s.cacheBytes! / 1024 / 1024).toFixed(1)} MiB in ${s.cacheEntries} notes, requests ${s.requests}, feed cursor ${s.cursor}\n` +
      `  kept on disk (pinned/available) ${s.keptOffline ?? 0} notes\n`,
  );
  if (unreachableSince)
    process.stdout.write(
      `  the service is unreachable since ${unreachableSince}; saves stay in the journal until it returns\n`,
    );
  if (live.journal?.fault) process.stdout.write(`  ${describeFaultForStatus(live.journal.fault)}\n`);
  for (const d of readJournalDamage(m.cacheDir)) process.stdout.write(`  ${describeDamageForStatus(d)}\n`);
  for (const c of live.conflicts ?? m.conflicts) process.stdout.write(`  conflict copy: ${c}\n`);
  // Refusals of this mount with nothing kept (a rename, a delete), then every copy still kept.
  for (const r of (m.refused ?? []).filter((r) => !r.keptAs))
    process.stdout.write(`  refused by the service: ${r.path} (${r.reason})\n`);
  for (const c of live.unsent ?? m.unsent ?? []) process.stdout.write(`  ${describeUnsent(root, c)}\n`);
  // Refused while an earlier mount of this cache dir stopped (the next sync reports them).
  for (const r of readUnreportedRefusals(m.cacheDir)) process.stdout.write(`  ${describeRefusal(root, r)}\n`);
  for (const l of live.localOnly ?? m.localOnly ?? [])
    process.stdout.write(`  local-only: ${l.path} (${l.why})\n`);
  for (const p of live.excludeProblems ?? m.excludeProblems ?? []) process.stdout.write(`  ${p}\n`);
  for (const r of m.refusedMetadata ?? [])
    process.stdout.write(`  metadata refused: ${r.path} (${r.reason}) at ${r.at}\n`);
}

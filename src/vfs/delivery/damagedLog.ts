// A journal found damaged on loading (a record cut short, garbage in the middle, a wrong length):
// what could be read is recovered, and the log as it was found is kept aside for the user as
// CACHE/journal.damaged-TIME, with what was dropped in journal.damaged-TIME.json (`txtfs status`
// reads it: lib/journalDamage.ts). Kept by a hard link, so a full disk does not stop it.
import { linkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DAMAGED_PREFIX, type JournalDamage } from "../../lib/journalDamage.ts";
import type { LogDamage } from "../../lib/journalRecords.ts";

/** Keeps `logFile` (and an unreadable `inflightFile`) aside and writes the report; returns it (keptAs: where the copy is, or why there is none). */
export function keepDamaged(
  cacheDir: string,
  logFile: string,
  found: { dropped: LogDamage[]; recovered: number; inflightLost?: boolean },
  inflightFile?: string,
  now = new Date(),
): JournalDamage {
  const at = now.toISOString();
  const name = `${DAMAGED_PREFIX}${at.replace(/[:.]/g, "-")}`;
  const keptAs = join(cacheDir, name);
  let kept = keptAs;
  try {
    linkSync(logFile, keptAs);
  } catch (err) {
    kept = `(not kept: ${(err as Error).message})`;
  }
  // The record of the request on its way that could not be read back, beside it.
  if (found.inflightLost && inflightFile) {
    try {
      linkSync(inflightFile, `${keptAs}.bulk.inflight`);
    } catch {}
  }
  const report: JournalDamage = { at, keptAs: kept, ...found };
  try {
    writeFileSync(`${keptAs}.json`, `${JSON.stringify(report, null, 2)}\n`, { mode: 0o600 });
  } catch {} // the disk full: the daemon's log line and live status still say it
  return report;
}

// What a daemon found damaged in a journal when it loaded it: src/vfs/delivery/damagedLog.ts writes
// it as `journal.damaged-TIME.json` in the cache dir, beside the damaged log it kept aside as
// `journal.damaged-TIME`. `txtfs status` names it (for a mount running or not) until the user
// removes that copy.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { LogDamage } from "./journalRecords.ts";

/** One damage report. */
export interface JournalDamage {
  at: string;
  /** The damaged log, kept as it was found. */
  keptAs: string;
  /** What could not be read (each a stretch of the log; the save it was, when that is known). */
  dropped: LogDamage[];
  /** Saves recovered from it (they are delivered as usual). */
  recovered: number;
  /** The bulk request that was on its way could not be read back: its items go again anew. */
  inflightLost?: boolean;
}

export const DAMAGED_PREFIX = "journal.damaged-";

/** The damage reports of a cache dir whose damaged log is still there, oldest first. */
export function readJournalDamage(cacheDir: string): JournalDamage[] {
  let names: string[];
  try {
    names = readdirSync(cacheDir);
  } catch {
    return [];
  }
  const reports: JournalDamage[] = [];
  for (const name of names.filter((n) => n.startsWith(DAMAGED_PREFIX) && n.endsWith(".json")).sort()) {
    if (!names.includes(name.slice(0, -".json".length))) continue; // the user removed the copy: done
    try {
      reports.push(JSON.parse(readFileSync(join(cacheDir, name), "utf8")) as JournalDamage);
    } catch {} // half written (the disk full): the copy itself is still there to look at
  }
  return reports;
}

/** One line naming what was dropped: "2 records (/a.md saved at …, 120 bytes of garbage at 4096)". */
export function describeDamage(d: Pick<JournalDamage, "dropped" | "inflightLost">): string {
  const parts = d.dropped.map((x) => {
    const what =
      x.why === "torn"
        ? "cut short"
        : x.why === "checksum"
          ? "its body damaged"
          : x.why === "length"
            ? "a wrong length"
            : "unreadable bytes";
    return x.path
      ? `the save of ${x.path}${x.savedAt ? ` made ${x.savedAt}` : ""} (${what}, ${x.bytes} bytes at ${x.offset})`
      : x.why === "unreadable"
        ? `${x.bytes} unreadable bytes at ${x.offset}`
        : `a record of ${x.bytes} bytes at ${x.offset} (${what})`;
  });
  if (d.inflightLost) parts.push("the record of the bulk request on its way");
  return parts.join("; ");
}

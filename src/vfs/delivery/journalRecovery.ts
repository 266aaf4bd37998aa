// What a start finds of the journal on disk: one-file entries of journals written before the log,
// the bulk request that was on its way, and the log replayed. Damage (garbage, a wrong length, a
// failed checksum, a request whose bodies are gone) is skipped, the rest recovered, and the damaged
// log kept aside (damagedLog.ts).
import { readFileSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import type { JournalDamage } from "../../lib/journalDamage.ts";
import { journalKeyOf } from "../../lib/journalFiles.ts";
import { scanLog } from "../../lib/journalRecords.ts";
import { keepDamaged } from "./damagedLog.ts";
import { type InflightBulk, pinKey, pinsOf, restoreContents } from "./inflightRecord.ts";
import type { JournalEntry } from "./journalEntry.ts";
import type { JournalIndex } from "./journalIndex.ts";
import type { JournalLog } from "./journalLog.ts";

export interface Recovered {
  /** The one-file entries read (to go once the log holds them). */
  legacy: string[];
  /** The log's length on disk, and where its last whole record ends. */
  logLength: number;
  end: number;
  /** The bulk request on its way, with its bodies back from the log. */
  inflight?: InflightBulk;
  /** A request was on its way and could not be read back whole: its file is to go. */
  inflightLost: boolean;
  damage?: JournalDamage;
}

/** Replays what is on disk into `index` (its records apply without their sizes: the log is rewritten). */
export async function recover(
  cacheDir: string,
  log: Pick<JournalLog, "dir" | "file" | "read">,
  inflightFile: string,
  index: Pick<JournalIndex, "apply" | "size">,
  now = new Date(),
): Promise<Recovered> {
  // Journals written before the log: one JSON file per entry.
  const legacy = (await readdir(log.dir)).filter((n) => n.endsWith(".json"));
  for (const name of legacy) {
    try {
      index.apply({ put: JSON.parse(await readFile(join(log.dir, name), "utf8")) as JournalEntry });
    } catch {
      // a half-written temp file from a crash: the previous version of that entry still stands
    }
  }
  // The bulk request on its way first: the log's records it refers to are kept while it is.
  let onDisk: InflightBulk | undefined;
  let inflightLost = false;
  try {
    onDisk = JSON.parse(readFileSync(inflightFile, "utf8")) as InflightBulk;
  } catch (err) {
    // None (its temp file alone means it was never sent), or unreadable: said below.
    inflightLost = (err as NodeJS.ErrnoException).code !== "ENOENT";
  }
  const pins = pinsOf(onDisk);
  const pinned = new Map<string, string>();
  const bytes = await log.read();
  const scanned = scanLog<JournalEntry>(bytes);
  for (const rec of scanned.records) {
    if ("put" in rec && rec.put.rev !== undefined && rec.put.content !== undefined) {
      const pin = pinKey(journalKeyOf(rec.put), rec.put.rev);
      if (pins.has(pin)) pinned.set(pin, rec.put.content);
    }
    index.apply(rec);
  }
  let inflight: InflightBulk | undefined;
  if (onDisk) {
    const { bulk, missing } = restoreContents(onDisk, pinned);
    if (missing > 0) inflightLost = true;
    else inflight = bulk;
  }
  // Damage found: recovered around, logged by the caller (health), and kept aside.
  const damage =
    scanned.damage.length > 0 || inflightLost
      ? keepDamaged(
          cacheDir,
          log.file,
          { dropped: scanned.damage, recovered: index.size, ...(inflightLost ? { inflightLost } : {}) },
          inflightFile,
          now,
        )
      : undefined;
  return {
    legacy,
    logLength: bytes.length,
    end: scanned.end,
    ...(inflight ? { inflight } : {}),
    inflightLost,
    ...(damage ? { damage } : {}),
  };
}

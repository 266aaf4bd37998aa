// A mount's journal as files in its cache dir (src/vfs/delivery/journal.ts writes them), and what
// it holds as read from disk, no daemon needed: `txtfs status`, `txtfs sync` and `txtfs unmount`
// count the saves a cache dir still holds whether or not anything is mounted from it.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { readRecords } from "./journalRecords.ts";

export const journalDir = (cacheDir: string) => join(cacheDir, "journal");
export const journalLogFile = (cacheDir: string) => join(journalDir(cacheDir), "log");
/** The bulk request on its way, kept until its answer is applied. */
export const journalInflightFile = (cacheDir: string) => join(journalDir(cacheDir), "bulk.inflight");

/** Space held back for the journal's bookkeeping (src/vfs/delivery/journalReserve.ts). */
export const journalReserveFile = (cacheDir: string) => join(journalDir(cacheDir), "reserve");

/** An entry's key: the note's (or folder's) id, or its create key while it has none. */
export const journalKeyOf = (e: { fileId: string | null; createKey: string }) =>
  e.fileId ?? `new-${e.createKey}`;

/** What is known of a save from its journal entry alone. */
export interface WaitingSave {
  seq: number;
  fileId: string | null;
  createKey: string;
  path: string;
  savedAt: string;
  delete?: "file" | "folder";
  folder?: true;
  content?: string;
}

export interface JournalOnDisk {
  /** The saves still to be delivered, in the order they go. */
  saves: WaitingSave[];
  /** A bulk request was sent and its answer not yet applied. */
  inflight: boolean;
}

/**
 * Replays a cache dir's journal as Journal.load does (older one-file-per-entry JSON first, then
 * the log; a torn record is skipped), reading only: a running daemon's journal is never touched.
 */
export function readJournal(cacheDir: string): JournalOnDisk {
  const entries = new Map<string, WaitingSave>();
  let names: string[];
  try {
    names = readdirSync(journalDir(cacheDir));
  } catch {
    return { saves: [], inflight: false };
  }
  for (const name of names.filter((n) => n.endsWith(".json"))) {
    try {
      const e = JSON.parse(readFileSync(join(journalDir(cacheDir), name), "utf8")) as WaitingSave;
      entries.set(journalKeyOf(e), e);
    } catch {} // a temp file half written by a crash: that save never completed
  }
  let log = Buffer.alloc(0);
  try {
    log = readFileSync(journalLogFile(cacheDir));
  } catch {}
  for (const rec of readRecords<WaitingSave>(log)) {
    if ("put" in rec) entries.set(journalKeyOf(rec.put), rec.put);
    else if ("del" in rec) entries.delete(rec.del);
  }
  return {
    saves: [...entries.values()].sort((a, b) => a.seq - b.seq),
    inflight: names.includes("bulk.inflight"),
  };
}

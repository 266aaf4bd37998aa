// The journal's records as bytes. A record is one JSON line; a save's body is not in it but right
// after it, raw UTF-8, its length in the line (`body`), then a newline:
//
//   {"put":{...the entry without content...},"body":11,"crc":222957957}\n
//   hello\nworld\n
//
// JSON-escaping a body full of newlines leaves V8's fast path (a 1 MB note: ~8 ms, most of the
// flush that saves it); a copy and its CRC-32 cost ~1.5 ms. Lines written before this format (the
// body inside the JSON) still load. A body whose checksum fails (a machine crash left blocks of the
// file unwritten) is skipped, as a line that does not parse is: that save never completed, the one
// before it stands. A body cut short ends the log: it was the last write.
//
// Here in lib, not in the vfs: `txtfs status` and `txtfs sync` read a journal no daemon has open
// (journalFiles.ts) without loading the filesystem.
import { crc32 } from "node:zlib";

/** What the log needs to know of an entry (src/vfs/delivery/journal.ts JournalEntry): its body. */
export interface LoggedEntry {
  content?: string;
}

/**
 * `patch`: fields of a pending entry changed without its body (its folder now exists), a few bytes
 * where a `put` would write the body again: the delivery that writes it needs no disk space to
 * speak of. Its key stays.
 */
export type LogRecord<E extends LoggedEntry = LoggedEntry> =
  | { put: E }
  | { del: string }
  | { patch: string; set: Partial<Omit<E, "content">> };

const NEWLINE = 0x0a;
const LINE_END = Buffer.from([NEWLINE]);

/** The record as the pieces to append, in one writev(2). */
export function encodeRecord<E extends LoggedEntry>(rec: LogRecord<E>): Buffer[] {
  if (!("put" in rec) || rec.put.content === undefined)
    return [Buffer.from(`${JSON.stringify(rec)}\n`, "utf8")];
  const { content, ...entry } = rec.put;
  const body = Buffer.from(content, "utf8");
  const head = Buffer.from(
    `${JSON.stringify({ put: entry, body: body.length, crc: crc32(body) })}\n`,
    "utf8",
  );
  return [head, body, LINE_END];
}

export const sizeOf = (pieces: Buffer[]): number => pieces.reduce((n, b) => n + b.length, 0);

/** What of the log could not be read, and what is known of it (a damaged record's header names its note). */
export interface LogDamage {
  /** Where the unreadable bytes start, and how many there are. */
  offset: number;
  bytes: number;
  why: "torn" | "checksum" | "length" | "unreadable";
  /** The save it was, when its line could be read: its note's path and when it was saved. */
  path?: string;
  savedAt?: string;
}

export interface ScannedLog<E extends LoggedEntry> {
  records: LogRecord<E>[];
  /** Every part that could not be read, in order; empty for a whole log. */
  damage: LogDamage[];
  /** Where the last whole record ends: what follows it is damage (a torn tail), to be cut off before appending. */
  end: number;
}

type Head<E extends LoggedEntry> = LogRecord<E> & { body?: unknown; crc?: unknown };

/** A line that is a record of the log (the point to go on from after damage), or undefined. */
function recordOf<E extends LoggedEntry>(line: string): Head<E> | undefined {
  if (!line.startsWith('{"put":') && !line.startsWith('{"del":') && !line.startsWith('{"patch":'))
    return undefined;
  try {
    const rec = JSON.parse(line) as Head<E>;
    if ("put" in rec && rec.put && typeof rec.put === "object") return rec;
    if ("del" in rec && typeof rec.del === "string") return rec;
    if ("patch" in rec && typeof rec.patch === "string" && rec.set && typeof rec.set === "object") return rec;
  } catch {}
  return undefined;
}

/**
 * The log's records in order, and what could not be read. A record torn at the end (a crash while
 * it was written) ends it; a body whose checksum fails is skipped by its length; after bytes that
 * are no record (garbage, a length that does not match its body) reading goes on at the next line
 * that is one, so one damaged record never hides the saves after it.
 */
export function scanLog<E extends LoggedEntry>(log: Buffer): ScannedLog<E> {
  const records: LogRecord<E>[] = [];
  const damage: LogDamage[] = [];
  let at = 0;
  let end = 0;
  const damaged = (from: number, to: number, why: LogDamage["why"], head?: Head<E>) => {
    const last = damage.at(-1);
    // Lines that are no record right after damage (the rest of a body whose length is wrong, more
    // garbage) are part of it.
    if (why === "unreadable" && last && last.why !== "torn" && last.offset + last.bytes === from) {
      last.bytes = to - last.offset;
      return;
    }
    const put = head && "put" in head ? (head.put as { path?: unknown; savedAt?: unknown }) : undefined;
    damage.push({
      offset: from,
      bytes: to - from,
      why,
      ...(typeof put?.path === "string" ? { path: put.path } : {}),
      ...(typeof put?.savedAt === "string" ? { savedAt: put.savedAt } : {}),
    });
  };
  while (at < log.length) {
    const start = at;
    const nl = log.indexOf(NEWLINE, at);
    if (nl < 0) {
      damaged(start, log.length, "torn", tornHead<E>(log.toString("utf8", at)));
      break;
    }
    const line = log.toString("utf8", at, nl);
    at = nl + 1;
    if (!line) {
      const last = damage.at(-1);
      if (last && last.why !== "torn" && last.offset + last.bytes === start) last.bytes += 1;
      else end = at;
      continue;
    }
    const rec = recordOf<E>(line);
    if (!rec) {
      damaged(start, at, "unreadable");
      continue;
    }
    if (!("put" in rec) || rec.body === undefined) {
      records.push(rec);
      end = at;
      continue;
    }
    const size = rec.body;
    const bodyEnd = typeof size === "number" && Number.isSafeInteger(size) && size >= 0 ? at + size : -1;
    if (bodyEnd >= 0 && bodyEnd >= log.length) {
      // Cut short at the end of the file: torn while written, unless a record follows inside it
      // (its length prefix is wrong): then reading goes on there.
      if (!nextRecordAfter(log, at)) {
        damaged(start, log.length, "torn", rec);
        break;
      }
    }
    if (bodyEnd < 0 || bodyEnd >= log.length || log[bodyEnd] !== NEWLINE) {
      damaged(start, at, "length", rec);
      continue; // the lines of its body that are no record are skipped as unreadable
    }
    const body = log.subarray(at, bodyEnd);
    at = bodyEnd + 1;
    if (crc32(body) !== rec.crc) {
      damaged(start, at, "checksum", rec);
      continue;
    }
    const { content: _, ...entry } = rec.put as E & { content?: string };
    records.push({ put: { ...entry, content: body.toString("utf8") } as E });
    end = at;
  }
  return { records, damage, end };
}

/** What a torn line still says of its save (its path), for the report. */
function tornHead<E extends LoggedEntry>(line: string): Head<E> | undefined {
  const path = /"path":("(?:[^"\\]|\\.)*")/.exec(line)?.[1];
  if (!path) return undefined;
  try {
    return { put: { path: JSON.parse(path) } } as unknown as Head<E>;
  } catch {
    return undefined;
  }
}

/** Whether a whole record line starts somewhere after `from`. */
function nextRecordAfter(log: Buffer, from: number): boolean {
  let at = from;
  while (at < log.length) {
    const nl = log.indexOf(NEWLINE, at);
    if (nl < 0) return false;
    if (recordOf(log.toString("utf8", at, nl))) return true;
    at = nl + 1;
  }
  return false;
}

/** The log's records in order (what could not be read is skipped: scanLog). */
export function* readRecords<E extends LoggedEntry>(log: Buffer): Generator<LogRecord<E>> {
  yield* scanLog<E>(log).records;
}

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

export type LogRecord<E extends LoggedEntry = LoggedEntry> = { put: E } | { del: string };

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

/** The log's records in order: lines that do not parse are skipped, a torn body ends it. */
export function* readRecords<E extends LoggedEntry>(log: Buffer): Generator<LogRecord<E>> {
  let at = 0;
  while (at < log.length) {
    const end = log.indexOf(NEWLINE, at);
    if (end < 0) return; // the last line, torn while it was written
    const line = log.toString("utf8", at, end);
    at = end + 1;
    if (!line) continue;
    let rec: LogRecord<E> & { body?: unknown; crc?: unknown };
    try {
      rec = JSON.parse(line) as LogRecord<E> & { body?: unknown; crc?: unknown };
    } catch {
      continue; // torn by a crash while it was written: that save never completed
    }
    if ("put" in rec && rec.body !== undefined) {
      const size = rec.body;
      if (typeof size !== "number" || !Number.isSafeInteger(size) || size < 0) return;
      const bodyEnd = at + size;
      if (bodyEnd >= log.length || log[bodyEnd] !== NEWLINE) return;
      const body = log.subarray(at, bodyEnd);
      at = bodyEnd + 1;
      if (crc32(body) !== rec.crc) continue;
      rec = { put: { ...rec.put, content: body.toString("utf8") } };
    }
    yield rec;
  }
}

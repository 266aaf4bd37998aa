// The journal's pending entries in memory, one per key, and how many bytes of the log each one's
// records take: their sum is the log's live part, which says when rewriting the log pays.
import { journalKeyOf } from "../../lib/journalFiles.ts";
import type { LogRecord as AnyLogRecord } from "../../lib/journalRecords.ts";
import type { JournalEntry } from "./journalEntry.ts";

export type LogRecord = AnyLogRecord<JournalEntry>;

export class JournalIndex {
  private readonly entries = new Map<string, JournalEntry>();
  /** Bytes of each pending entry's records. */
  private readonly recordBytes = new Map<string, number>();
  private live = 0;
  /** The last place in line given: a new entry takes the next one. */
  private seq = 0;
  /** The last revision given: a write takes the next one. */
  private revs = 0;

  get size(): number {
    return this.entries.size;
  }

  /** Bytes of the log the pending entries' records take. */
  get liveBytes(): number {
    return this.live;
  }

  get(key: string): JournalEntry | undefined {
    return this.entries.get(key);
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  /** The pending entries in line. */
  pending(): JournalEntry[] {
    return [...this.entries.values()].sort((a, b) => a.seq - b.seq);
  }

  /**
   * The entry `key` if it is of the line a request item of revision `rev` was made from: an answer
   * to that item may finish it. Undefined when the line was done before (the entry holds saves
   * made after it: the answer is not about them).
   */
  ofItem(key: string, rev: number | undefined): JournalEntry | undefined {
    const entry = this.entries.get(key);
    return entry && (entry.line ?? 0) <= (rev ?? Number.POSITIVE_INFINITY) ? entry : undefined;
  }

  nextRev(): number {
    return ++this.revs;
  }

  nextSeq(): number {
    return ++this.seq;
  }

  /** Revision `rev` was given before (a request on its way holds it): later writes go past it. */
  sawRev(rev: number): void {
    this.revs = Math.max(this.revs, rev);
  }

  /** Applies a record to the in-memory state; `bytes`: what it took in the log. */
  apply(rec: LogRecord, bytes = 0): void {
    if ("put" in rec) {
      this.revs = Math.max(this.revs, rec.put.rev ?? 0);
      const key = journalKeyOf(rec.put);
      this.forget(key);
      this.entries.set(key, rec.put);
      this.recordBytes.set(key, bytes);
      this.live += bytes;
      this.seq = Math.max(this.seq, rec.put.seq);
    } else if ("patch" in rec) {
      const entry = this.entries.get(rec.patch);
      // (JSON drops an undefined field: a patch that clears parentKey says so by leaving it out.)
      if (entry) {
        this.entries.set(rec.patch, { ...entry, parentKey: undefined, ...rec.set });
        this.recordBytes.set(rec.patch, (this.recordBytes.get(rec.patch) ?? 0) + bytes);
        this.live += bytes;
      }
    } else this.forget(rec.del);
  }

  private forget(key: string): void {
    this.live -= this.recordBytes.get(key) ?? 0;
    this.recordBytes.delete(key);
    this.entries.delete(key);
  }

  /** The log was emptied: no entry has records in it. */
  emptied(): void {
    this.live = 0;
    this.recordBytes.clear();
  }

  /** The log was rewritten with one record per pending entry, of these sizes. */
  rewritten(sizes: [key: string, bytes: number][]): void {
    this.emptied();
    for (const [key, bytes] of sizes) {
      this.recordBytes.set(key, bytes);
      this.live += bytes;
    }
  }
}

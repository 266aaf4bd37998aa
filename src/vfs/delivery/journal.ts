// Saves on their way to the service are kept here, on disk, until it has them: one entry per note
// (later saves of the same note replace its content but keep its place in line), delivered in the
// order the notes were first saved. Survives a crash of the daemon; with `durable` (and after
// `sync`) also a crash of the machine.
//
// On disk it is an append-only log (journal/log, one record per line): a save appends its entry, a
// delivery its removal, each one write(2) to an open file, where a file per entry cost a create and
// a rename on every save; a body goes after its record's line as raw bytes (lib/journalRecords.ts).
// Loading replays the log (a record torn by a crash is skipped); the log is emptied whenever
// nothing is pending, and rewritten with only the live entries when it has grown to several times
// their size. Damage found on loading (garbage, a wrong length, a failed checksum) is skipped, the
// rest recovered, and said: logged, kept for `txtfs status`, the damaged log kept aside
// (journalRecovery.ts). Delivering needs no new disk space (journalDisk.ts): a full disk refuses
// new saves, never the delivery of those it took.
//
// Here: the operations, one at a time (the lock), and when the log is emptied or rewritten. The
// log file is journalLog.ts, the entries in memory journalIndex.ts, how a save is laid over the
// one pending journalEntry.ts.
import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import type { JournalDamage } from "../../lib/journalDamage.ts";
import { journalInflightFile, journalKeyOf } from "../../lib/journalFiles.ts";
import { encodeRecord, sizeOf } from "../../lib/journalRecords.ts";
import { Mutex } from "../../lib/mutex.ts";
import { type Clock, isoNow, systemClock } from "../clock.ts";
import { contentsOf, type InflightBulk } from "./inflightRecord.ts";
import { JournalDisk } from "./journalDisk.ts";
import { type JournalEntry, laidOver, savedOver } from "./journalEntry.ts";
import type { JournalFault } from "./journalFaults.ts";
import { JournalIndex, type LogRecord } from "./journalIndex.ts";
import { JournalLog } from "./journalLog.ts";
import { recover } from "./journalRecovery.ts";

export type { JournalEntry, JournalFault };

/** The log is rewritten once it is this large and four times the size of what is still pending. */
const REWRITE_MIN_BYTES = 1024 * 1024;

export class Journal {
  private readonly cacheDir: string;
  private readonly log: JournalLog;
  private readonly index = new JournalIndex();
  /** Entries written durably. */
  private readonly durable = new Set<string>();
  /** put/done/sync read-modify-write an entry across awaits: one at a time. */
  private readonly lock = new Mutex();
  /** A bulk request on its way (bulk.ts), kept until its answer is applied (by reference: inflightRecord.ts). */
  private readonly inflightFile: string;
  private inflight: unknown;
  /** The reserve held on this machine's disk, and the last failure to write there. */
  private readonly disk: JournalDisk;
  /** What loading found damaged (and recovered around). */
  private damage: JournalDamage | undefined;

  /** What stamps each entry's savedAt (clock.ts). */
  private readonly clock: Clock;

  constructor(cacheDir: string, clock: Clock = systemClock) {
    this.cacheDir = cacheDir;
    this.clock = clock;
    this.log = new JournalLog(cacheDir);
    this.inflightFile = journalInflightFile(cacheDir);
    this.disk = new JournalDisk(cacheDir, () => this.index.size, clock);
  }

  /** Why the journal cannot be written right now (the disk full, read-only), and what loading found damaged. */
  health(): { fault?: JournalFault; damaged?: JournalDamage } {
    const fault = this.disk.fault();
    return {
      ...(fault ? { fault } : {}),
      ...(this.damage ? { damaged: this.damage } : {}),
    };
  }

  static keyOf(e: { fileId: string | null; createKey: string }): string {
    return journalKeyOf(e);
  }

  async load(): Promise<JournalEntry[]> {
    await this.log.prepare();
    const found = await recover(
      this.cacheDir,
      this.log,
      this.inflightFile,
      this.index,
      new Date(this.clock.now()),
    );
    if (found.inflight) this.inflight = found.inflight;
    if (found.damage) this.damage = found.damage;
    // Started over with only what is pending, unless a request on its way still needs older
    // records; else (or on a full disk) only what follows the last whole record is cut.
    let rewritten = false;
    if (this.inflight === undefined) {
      try {
        this.rewrite();
        rewritten = true;
      } catch (err) {
        this.disk.failed(err);
        this.log.dropRewrite();
      }
    }
    if (!rewritten && found.end < found.logLength) this.log.cutAt(found.end);
    if (!rewritten) this.log.bytes = Math.min(found.logLength, found.end);
    // Older one-file entries go once the log holds them (not when it could not be written).
    if (rewritten) for (const name of found.legacy) await rm(join(this.log.dir, name), { force: true });
    if (found.inflightLost) rmSync(this.inflightFile, { force: true });
    // The log may have started over since that request was made: revisions go on past its own.
    for (const item of (this.inflight as InflightBulk | undefined)?.items ?? [])
      this.index.sawRev(item.rev ?? 0);
    this.disk.hold(false);
    return this.pending();
  }

  /** Closes the log (the daemon is stopping); what is still pending is made durable first. */
  close(): void {
    this.disk.close();
    this.log.close(this.index.size > 0);
  }

  pending(): JournalEntry[] {
    return this.index.pending();
  }

  get size(): number {
    return this.index.size;
  }

  get(key: string): JournalEntry | undefined {
    return this.index.get(key);
  }

  /** The bulk request sent and not yet answered, if any (also one from before a restart). */
  inflightBulk<T>(): T | undefined {
    return this.inflight as T | undefined;
  }

  /**
   * Records (or, with undefined, forgets) the bulk request on its way, before it is sent. Bodies the
   * journal holds are written by reference (inflightRecord.ts): a few bytes an item, from the
   * reserve when the disk is full.
   */
  setInflightBulk(bulk: unknown): void {
    if (bulk === undefined) {
      try {
        rmSync(this.inflightFile, { force: true });
      } catch (err) {
        throw this.disk.failed(err); // kept: the same request goes again, its answer is replayed
      }
      this.inflight = undefined;
      // What it referred to may go now: nothing pending, the log starts over.
      if (this.index.size === 0) this.startOver();
      return;
    }
    const record = contentsOf(bulk as InflightBulk, (key, rev, content) => {
      const e = this.index.get(key);
      return e?.rev === rev && e.content === content;
    });
    this.disk.bookkeeping(() => {
      mkdirSync(this.log.dir, { recursive: true, mode: 0o700 }); // removed from under us: made again
      try {
        writeFileSync(`${this.inflightFile}.tmp`, JSON.stringify(record), { mode: 0o600 });
        renameSync(`${this.inflightFile}.tmp`, this.inflightFile);
      } catch (err) {
        rmSync(`${this.inflightFile}.tmp`, { force: true });
        throw err;
      }
    });
    this.inflight = bulk;
  }

  /**
   * Records (or replaces) a note's pending write. `durable`: on the disk before returning;
   * otherwise it survives a crash of the daemon but not of the machine until `sync`.
   */
  put(entry: Omit<JournalEntry, "seq" | "savedAt" | "rev">, durable = true): Promise<JournalEntry> {
    return this.lock.run(() => this.write(entry, durable));
  }

  /**
   * `carriedFrom`: the key of the entry this one carries on (`done`, `rekeyCreated`): a new entry
   * in line, with the base given (not the one of an entry it replaces).
   */
  private async write(
    entry: Omit<JournalEntry, "seq" | "savedAt" | "rev">,
    durable: boolean,
    carriedFrom?: string,
  ): Promise<JournalEntry> {
    const key = Journal.keyOf(entry);
    const fresh = carriedFrom !== undefined;
    const there = this.index.get(key);
    if (fresh && there && carriedFrom !== key) {
      // Carried over to a key that already has a save of its own (a note created again after a
      // remote delete: saves made once it had its new key): that one was made after this one, so
      // it stays on top, as if saved after it. Written over, the newest save would be lost (`> c.md`
      // while the save before went and met a 404: the truncate it began with would win).
      entry = savedOver(entry, there);
      durable ||= this.durable.has(key);
    }
    const previous = fresh ? undefined : there;
    const rev = this.index.nextRev();
    const full = laidOver(entry, previous, rev, previous?.seq ?? this.index.nextSeq(), isoNow(this.clock));
    // A save takes new space (the reserve stays held); carrying a delivered line on is bookkeeping.
    this.append({ put: full }, fresh ? "bookkeeping" : "save");
    if (durable) {
      this.durable.add(key);
      if (this.log.open) await this.log.datasync();
    } else this.durable.delete(key);
    return full;
  }

  /** Makes pending entries durable (fdatasync), e.g. for fsync(2) while the service is unreachable. */
  sync(key: string): Promise<void> {
    return this.lock.run(async () => {
      if (!this.index.has(key) || !this.log.open) return;
      await this.log.datasync();
      this.durable.add(key);
    });
  }

  /**
   * A note deleted remotely was created again (under a new create key) as `delivered`: a save made
   * while that create was on its way was keyed by the create, so it goes on under the note's id,
   * based on what was delivered (as `done` does with a save made while its entry was on its way).
   */
  rekeyCreated(
    createKey: string,
    delivered: { id: string; etag: string; contentHash: string },
  ): Promise<void> {
    return this.lock.run(async () => {
      const key = Journal.keyOf({ fileId: null, createKey });
      const current = this.index.get(key);
      if (!current) return;
      const next = {
        ...current,
        fileId: delivered.id,
        baseEtag: current.append ? null : delivered.etag,
        baseHash: current.append ? null : delivered.contentHash,
      };
      await this.write(next, this.durable.has(key), key);
      this.append({ del: key });
    });
  }

  /**
   * The entry is finished with: it reached the service (as `delivered`), or it was not applied
   * (kept as a conflict copy, refused, undone). If the note was saved again while it was out, that newer
   * entry always stays: based on what was delivered (and keyed by the id a create received), or,
   * with nothing delivered, on the base it had (it builds on the same edit, so it must not
   * overwrite what the service has now either).
   */
  done(
    entry: JournalEntry,
    delivered?: { id: string; etag: string; contentHash: string },
    appended?: string,
  ): Promise<void> {
    return this.lock.run(async () => {
      const key = Journal.keyOf(entry);
      const current = this.index.get(key);
      // Saved again while it was being delivered: `current` is a newer object (savedAt may be
      // equal). It becomes a fresh entry based on what was delivered, recorded before the old one
      // goes, so the journal never looks empty in between. Appended to again: what is left to append
      // is what came after the `appended` bytes that went.
      if (current && current !== entry && delivered) {
        const rest =
          appended !== undefined && current.append && current.content?.startsWith(appended)
            ? current.content.slice(appended.length)
            : undefined;
        if (rest === "") {
          this.append({ del: key });
          return;
        }
        const next = {
          ...current,
          ...(rest !== undefined ? { content: rest } : {}),
          fileId: delivered.id,
          baseEtag: current.append ? null : delivered.etag,
          baseHash: current.append ? null : delivered.contentHash,
          superseded: undefined, // they were before the delivered version, which is the base now
        };
        await this.write(next, this.durable.has(key), key);
        if (Journal.keyOf(next) !== key) this.append({ del: key });
      } else if (!current || current === entry) {
        this.append({ del: key });
      }
    });
  }

  /** A folder made here now exists as `folderId`: what was waiting to go into it says so. */
  rebind(parentKey: string, folderId: string | null, newParentKey?: string): Promise<void> {
    return this.lock.run(async () => {
      for (const e of this.pending()) {
        if (e.parentKey !== parentKey) continue;
        // Without the body: a delivery on a full disk writes a few bytes here, not every note again.
        this.append({ patch: Journal.keyOf(e), set: { folderId, parentKey: newParentKey } });
      }
    });
  }

  /**
   * The entry `key` if it is of the line a request item of revision `rev` was made from (an answer
   * to that item may finish it): journalIndex.ts.
   */
  ofItem(key: string, rev: number | undefined): JournalEntry | undefined {
    return this.index.ofItem(key, rev);
  }

  /**
   * Writes a record to the log and applies it. A save first holds the reserve for what will then
   * be pending (ENOSPC when the disk has no room for it: the save is refused, nothing else); a
   * bookkeeping record (a delivery's) may take the reserve when the disk is full.
   */
  private append(rec: LogRecord, kind: "save" | "bookkeeping" = "bookkeeping"): void {
    // The log removed from under us (the cache dir deleted): what is pending is written to a new
    // one first, or a crash from here on would find nothing of it.
    if (this.log.removed()) this.rewrite();
    if ("del" in rec && this.inflight === undefined && this.index.size === 1 && this.index.has(rec.del)) {
      // The last pending entry done, no request on its way: the log starts over, no record needed
      // (a full disk gets its space back here).
      this.index.apply(rec);
      this.startOver();
      return;
    }
    const pieces = encodeRecord(rec);
    if (kind === "save") {
      const key = Journal.keyOf((rec as { put: JournalEntry }).put);
      this.disk.hold(true, this.index.size + (this.index.has(key) ? 0 : 1));
      try {
        this.log.write(pieces);
      } catch (err) {
        throw this.disk.failed(err);
      }
    } else this.disk.bookkeeping(() => this.log.write(pieces));
    this.disk.wrote();
    this.index.apply(rec, sizeOf(pieces));
    if (this.index.size === 0 && this.inflight === undefined) this.startOver();
    else if (
      this.inflight === undefined && // its records stay while a request on its way refers to them
      this.log.bytes > REWRITE_MIN_BYTES &&
      this.log.bytes > 4 * this.index.liveBytes
    ) {
      try {
        this.rewrite();
      } catch (err) {
        // Only to make it smaller: the log as it is stays (the disk full, say).
        this.log.dropRewrite();
        this.disk.failed(err);
      }
    }
  }

  /** Nothing pending: the log is emptied, the space it took is free again. */
  private startOver(): void {
    this.log.empty();
    this.index.emptied();
    this.durable.clear();
    this.disk.hold(false);
  }

  /** Replaces the log by one holding only the pending entries (on disk before it takes the log's place). */
  private rewrite(): void {
    const pending = this.pending();
    const records = pending.map((e) => encodeRecord({ put: e }));
    this.log.rewrite(records);
    this.index.rewritten(pending.map((e, i) => [Journal.keyOf(e), sizeOf(records[i]!)]));
  }
}

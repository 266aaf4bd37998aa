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
// (journalDamage.ts). Delivering needs no new disk space (journalReserve.ts): a full disk refuses
// new saves, never the delivery of those it took.
import {
  accessSync,
  closeSync,
  constants,
  fdatasync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
  writevSync,
} from "node:fs";
import { mkdir, readdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import type { JournalDamage } from "../../lib/journalDamage.ts";
import {
  journalDir,
  journalInflightFile,
  journalKeyOf,
  journalLogFile,
  journalReserveFile,
} from "../../lib/journalFiles.ts";
import {
  type LogRecord as AnyLogRecord,
  encodeRecord,
  type LogDamage,
  scanLog,
  sizeOf,
} from "../../lib/journalRecords.ts";
import { Mutex } from "../../lib/mutex.ts";
import { keepDamaged } from "./damagedLog.ts";
import { contentsOf, type InflightBulk, pinKey, pinsOf, restoreContents } from "./inflightRecord.ts";
import { type JournalEntry, savedOver, supersededBy } from "./journalEntry.ts";
import { freeBytes, type JournalFault, ROOM_AGAIN_BYTES, unwritable } from "./journalFaults.ts";
import { JournalReserve, reserveFor } from "./journalReserve.ts";

export type { JournalEntry, JournalFault };

type LogRecord = AnyLogRecord<JournalEntry>;

const datasync = promisify(fdatasync);

/** The log is rewritten once it is this large and four times the size of what is still pending. */
const REWRITE_MIN_BYTES = 1024 * 1024;

export class Journal {
  private readonly dir: string;
  private readonly logFile: string;
  private fd: number | undefined;
  private logBytes = 0;
  private seq = 0;
  private readonly entries = new Map<string, JournalEntry>();
  /** The last revision given: a write takes the next one. */
  private revs = 0;
  /** Bytes of each pending entry's record (the log's live part), and entries written durably. */
  private readonly recordBytes = new Map<string, number>();
  private liveBytes = 0;
  private readonly durable = new Set<string>();
  /** put/done/sync read-modify-write an entry across awaits: one at a time. */
  private readonly lock = new Mutex();
  /** A bulk request on its way (bulk.ts), kept until its answer is applied (by reference: inflightRecord.ts). */
  private readonly inflightFile: string;
  private inflight: unknown;
  private readonly cacheDir: string;
  /** Space held back so that delivering never needs new disk space. */
  private readonly reserve: JournalReserve;
  /** The last failure to write the journal on this machine, until a write succeeds again. */
  private localFault: JournalFault | undefined;
  /** What loading found damaged (and recovered around). */
  private damage: JournalDamage | undefined;

  constructor(cacheDir: string) {
    this.cacheDir = cacheDir;
    this.dir = journalDir(cacheDir);
    this.logFile = journalLogFile(cacheDir);
    this.inflightFile = journalInflightFile(cacheDir);
    this.reserve = new JournalReserve(journalReserveFile(cacheDir));
  }

  /** Why the journal cannot be written right now (the disk full, read-only), and what loading found damaged. */
  health(): { fault?: JournalFault; damaged?: JournalDamage } {
    // Space freed since (by the user, or elsewhere on that disk): said so once there is room.
    if (this.localFault?.code === "ENOSPC" && freeBytes(this.cacheDir) >= ROOM_AGAIN_BYTES)
      this.localFault = undefined;
    return {
      ...(this.localFault ? { fault: this.localFault } : {}),
      ...(this.damage ? { damaged: this.damage } : {}),
    };
  }

  static keyOf(e: { fileId: string | null; createKey: string }): string {
    return journalKeyOf(e);
  }

  async load(): Promise<JournalEntry[]> {
    await mkdir(this.dir, { recursive: true }).catch((err: NodeJS.ErrnoException) => {
      // (A recursive mkdir on a read-only disk says ENOENT: access tells the real reason.)
      try {
        accessSync(this.cacheDir, constants.W_OK);
      } catch (why) {
        throw unwritable(this.cacheDir, why);
      }
      throw unwritable(this.cacheDir, err);
    });
    this.checkWritable();
    // Journals written before the log: one JSON file per entry.
    const legacy = (await readdir(this.dir)).filter((n) => n.endsWith(".json"));
    for (const name of legacy) {
      try {
        this.apply({ put: JSON.parse(await readFile(join(this.dir, name), "utf8")) as JournalEntry });
      } catch {
        // a half-written temp file from a crash: the previous version of that entry still stands
      }
    }
    // The bulk request on its way first: the log's records it refers to are kept while it is.
    let onDisk: InflightBulk | undefined;
    let inflightLost = false;
    try {
      onDisk = JSON.parse(readFileSync(this.inflightFile, "utf8")) as InflightBulk;
    } catch (err) {
      // None (its temp file alone means it was never sent), or unreadable: said below.
      inflightLost = (err as NodeJS.ErrnoException).code !== "ENOENT";
    }
    const pins = pinsOf(onDisk);
    const pinned = new Map<string, string>();
    let log = Buffer.alloc(0);
    try {
      log = await readFile(this.logFile);
    } catch {
      // no log yet
    }
    const scanned = scanLog<JournalEntry>(log);
    for (const rec of scanned.records) {
      if ("put" in rec && rec.put.rev !== undefined && rec.put.content !== undefined) {
        const pin = pinKey(Journal.keyOf(rec.put), rec.put.rev);
        if (pins.has(pin)) pinned.set(pin, rec.put.content);
      }
      this.apply(rec);
    }
    if (onDisk) {
      const { bulk, missing } = restoreContents(onDisk, pinned);
      if (missing > 0) inflightLost = true;
      else this.inflight = bulk;
    }
    if (scanned.damage.length > 0 || inflightLost) this.reportDamage(scanned.damage, inflightLost);
    // Started over with only what is pending, unless a request on its way still needs older
    // records; else (or on a full disk) only what follows the last whole record is cut.
    let rewritten = false;
    if (this.inflight === undefined) {
      try {
        this.rewrite();
        rewritten = true;
      } catch (err) {
        this.fault(err);
        rmSync(`${this.logFile}.tmp`, { force: true });
      }
    }
    if (!rewritten && scanned.end < log.length) {
      this.fd ??= openSync(this.logFile, "a", 0o600);
      ftruncateSync(this.fd, scanned.end);
    }
    if (!rewritten) this.logBytes = Math.min(log.length, scanned.end);
    // Older one-file entries go once the log holds them (not when it could not be written).
    if (rewritten) for (const name of legacy) await rm(join(this.dir, name), { force: true });
    if (inflightLost) rmSync(this.inflightFile, { force: true });
    // The log may have started over since that request was made: revisions go on past its own.
    for (const item of (this.inflight as InflightBulk | undefined)?.items ?? [])
      this.revs = Math.max(this.revs, item.rev ?? 0);
    this.holdReserve(false);
    return this.pending();
  }

  /** A cache dir this daemon cannot write to is said at start, not found out by a lost save. */
  private checkWritable(): void {
    try {
      this.fd ??= openSync(this.logFile, "a", 0o600);
      writeFileSync(`${this.logFile}.check`, "");
      rmSync(`${this.logFile}.check`, { force: true });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "EROFS" || code === "EACCES" || code === "EPERM") throw unwritable(this.cacheDir, err);
      // ENOSPC: a full disk still lets the daemon deliver what the journal holds.
    }
  }

  /** Damage found on loading: recovered around, logged by the caller (health), and kept aside. */
  private reportDamage(dropped: LogDamage[], inflightLost: boolean): void {
    this.damage = keepDamaged(
      this.cacheDir,
      this.logFile,
      { dropped, recovered: this.entries.size, ...(inflightLost ? { inflightLost } : {}) },
      this.inflightFile,
    );
  }

  /** Closes the log (the daemon is stopping); what is still pending is made durable first. */
  close(): void {
    this.reserve.close();
    if (this.fd === undefined) return;
    if (this.entries.size) fsyncSync(this.fd);
    closeSync(this.fd);
    this.fd = undefined;
  }

  pending(): JournalEntry[] {
    return [...this.entries.values()].sort((a, b) => a.seq - b.seq);
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: string): JournalEntry | undefined {
    return this.entries.get(key);
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
        throw this.fault(err); // kept: the same request goes again, its answer is replayed
      }
      this.inflight = undefined;
      // What it referred to may go now: nothing pending, the log starts over.
      if (this.entries.size === 0) this.startOver();
      return;
    }
    const record = contentsOf(bulk as InflightBulk, (key, rev, content) => {
      const e = this.entries.get(key);
      return e?.rev === rev && e.content === content;
    });
    this.bookkeeping(() => {
      mkdirSync(this.dir, { recursive: true, mode: 0o700 }); // removed from under us: made again
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
    const there = this.entries.get(key);
    if (fresh && there && carriedFrom !== key) {
      // Carried over to a key that already has a save of its own (a note created again after a
      // remote delete: saves made once it had its new key): that one was made after this one, so
      // it stays on top, as if saved after it. Written over, the newest save would be lost (`> c.md`
      // while the save before went and met a 404: the truncate it began with would win).
      entry = savedOver(entry, there);
      durable ||= this.durable.has(key);
    }
    const previous = fresh ? undefined : there;
    const rev = ++this.revs;
    // A delete replaces whatever was pending for the note (a rename of a deleted note is moot), as
    // a line of its own: an answer about a save sent before it never stands for it.
    const full: JournalEntry = entry.delete
      ? { ...entry, seq: previous?.seq ?? ++this.seq, savedAt: new Date().toISOString(), rev, line: rev }
      : {
          ...entry,
          // A rename keeps a pending body, a save keeps a pending rename; appends add up.
          content:
            entry.append && previous?.append
              ? (previous.content ?? "") + (entry.content ?? "")
              : (entry.content ?? previous?.content),
          append: entry.content === undefined ? previous?.append : entry.append,
          move: entry.move || previous?.move || undefined,
          // Keep the first base: the remote never saw the saves in between. A whole body over
          // appends still waiting supersedes them (it was written after them: `> note` after
          // `>> note`, or built on them, open/reads.ts materialize) on the base it was given: the
          // version they were going onto.
          baseEtag: previous && !previous.append ? previous.baseEtag : entry.baseEtag,
          baseHash: previous && !previous.append ? previous.baseHash : entry.baseHash,
          seq: previous?.seq ?? ++this.seq,
          savedAt: new Date().toISOString(),
          rev,
          line: previous && !previous.delete ? (previous.line ?? 0) : rev,
          superseded: supersededBy(previous, entry),
        };
    // A save takes new space (the reserve stays held); carrying a delivered line on is bookkeeping.
    this.append({ put: full }, fresh ? "bookkeeping" : "save");
    if (durable) {
      this.durable.add(key);
      if (this.fd !== undefined) await datasync(this.fd);
    } else this.durable.delete(key);
    return full;
  }

  /** Makes pending entries durable (fdatasync), e.g. for fsync(2) while the service is unreachable. */
  sync(key: string): Promise<void> {
    return this.lock.run(async () => {
      if (!this.entries.has(key) || this.fd === undefined) return;
      await datasync(this.fd);
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
      const current = this.entries.get(key);
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
      const current = this.entries.get(key);
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
   * The entry `key` if it is of the line a request item of revision `rev` was made from: an answer
   * to that item may finish it. Undefined when the line was done before (the entry holds saves
   * made after it: the answer is not about them).
   */
  ofItem(key: string, rev: number | undefined): JournalEntry | undefined {
    const entry = this.entries.get(key);
    return entry && (entry.line ?? 0) <= (rev ?? Number.POSITIVE_INFINITY) ? entry : undefined;
  }

  /** Applies a record to the in-memory state. */
  private apply(rec: LogRecord, bytes = 0): void {
    if ("put" in rec) {
      this.revs = Math.max(this.revs, rec.put.rev ?? 0);
      const key = Journal.keyOf(rec.put);
      this.forget(key);
      this.entries.set(key, rec.put);
      this.recordBytes.set(key, bytes);
      this.liveBytes += bytes;
      this.seq = Math.max(this.seq, rec.put.seq);
    } else if ("patch" in rec) {
      const entry = this.entries.get(rec.patch);
      // (JSON drops an undefined field: a patch that clears parentKey says so by leaving it out.)
      if (entry) {
        this.entries.set(rec.patch, { ...entry, parentKey: undefined, ...rec.set });
        this.recordBytes.set(rec.patch, (this.recordBytes.get(rec.patch) ?? 0) + bytes);
        this.liveBytes += bytes;
      }
    } else this.forget(rec.del);
  }

  private forget(key: string): void {
    this.liveBytes -= this.recordBytes.get(key) ?? 0;
    this.recordBytes.delete(key);
    this.entries.delete(key);
  }

  /**
   * Writes a record to the log and applies it. A save first holds the reserve for what will then
   * be pending (ENOSPC when the disk has no room for it: the save is refused, nothing else); a
   * bookkeeping record (a delivery's) may take the reserve when the disk is full.
   */
  private append(rec: LogRecord, kind: "save" | "bookkeeping" = "bookkeeping"): void {
    this.fd ??= openSync(this.logFile, "a", 0o600);
    // The log removed from under us (the cache dir deleted): what is pending is written to a new
    // one first, or a crash from here on would find nothing of it.
    if (fstatSync(this.fd).nlink === 0) this.rewrite();
    if ("del" in rec && this.inflight === undefined && this.entries.size === 1 && this.entries.has(rec.del)) {
      // The last pending entry done, no request on its way: the log starts over, no record needed
      // (a full disk gets its space back here).
      this.apply(rec);
      this.startOver();
      return;
    }
    const pieces = encodeRecord(rec);
    if (kind === "save") {
      const key = Journal.keyOf((rec as { put: JournalEntry }).put);
      this.holdReserve(true, this.entries.size + (this.entries.has(key) ? 0 : 1));
      try {
        this.writeRecord(pieces);
      } catch (err) {
        throw this.fault(err);
      }
    } else this.bookkeeping(() => this.writeRecord(pieces));
    this.localFault = undefined;
    this.apply(rec, sizeOf(pieces));
    if (this.entries.size === 0 && this.inflight === undefined) this.startOver();
    else if (
      this.inflight === undefined && // its records stay while a request on its way refers to them
      this.logBytes > REWRITE_MIN_BYTES &&
      this.logBytes > 4 * this.liveBytes
    ) {
      try {
        this.rewrite();
      } catch (err) {
        // Only to make it smaller: the log as it is stays (the disk full, say).
        rmSync(`${this.logFile}.tmp`, { force: true });
        this.fault(err);
      }
    }
  }

  /** One write(2) of a record at the log's end. */
  private writeRecord(pieces: Buffer[]): void {
    const bytes = sizeOf(pieces);
    // A crash leaves the record whole or torn at the end. A write that fails part way (the disk
    // full) is cut off, so the records after it stay readable.
    let written = 0;
    try {
      written = writevSync(this.fd!, pieces);
    } finally {
      if (written !== bytes) ftruncateSync(this.fd!, this.logBytes);
    }
    if (written !== bytes)
      throw Object.assign(new Error("journal: the log was not written (the disk is full)"), {
        code: "ENOSPC",
      });
    this.logBytes += bytes;
  }

  /** Nothing pending: the log is emptied, the space it took is free again. */
  private startOver(): void {
    if (this.fd !== undefined) ftruncateSync(this.fd, 0);
    this.logBytes = 0;
    this.liveBytes = 0;
    this.recordBytes.clear();
    this.durable.clear();
    this.holdReserve(false);
  }

  /**
   * A write of the journal's own (a delivery's records): on a full disk it takes the reserve and
   * is tried once more; the reserve is held again as far as the disk allows.
   */
  private bookkeeping(write: () => void): void {
    try {
      write();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOSPC") throw this.fault(err);
      this.reserve.release();
      try {
        write();
      } catch (again) {
        throw this.fault(again);
      } finally {
        this.holdReserve(false);
      }
    }
  }

  /**
   * Holds the reserve for `entries` pending. `strict` (before a save): a disk without room for it
   * refuses the save with ENOSPC; otherwise as much as fits is held.
   */
  private holdReserve(strict: boolean, entries = this.entries.size): void {
    let whole = false;
    try {
      whole = this.reserve.hold(reserveFor(entries));
    } catch (err) {
      if (strict) throw this.fault(err);
      this.fault(err);
      return;
    }
    if (whole) {
      if (this.localFault?.code === "ENOSPC") this.localFault = undefined; // room again
      return;
    }
    const full = Object.assign(new Error("the cache dir's disk is full"), { code: "ENOSPC" });
    this.fault(full);
    if (strict) throw full;
  }

  /** Remembers a failure to write on this machine (for `txtfs status` and `sync`); returns it. */
  private fault(err: unknown): unknown {
    const code = (err as NodeJS.ErrnoException).code ?? "EIO";
    const message =
      code === "ENOSPC"
        ? "the cache dir's disk is full"
        : code === "EROFS"
          ? "the cache dir is read-only"
          : (err as Error).message;
    if (this.localFault?.code !== code)
      this.localFault = { code, message, path: this.cacheDir, since: new Date().toISOString() };
    return err;
  }

  /** Replaces the log by one holding only the pending entries (on disk before it takes the log's place). */
  private rewrite(): void {
    const pending = this.pending();
    const lines = pending.map((e) => encodeRecord({ put: e }));
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const tmp = `${this.logFile}.tmp`;
    const fd = openSync(tmp, "w", 0o600);
    try {
      writeSync(fd, Buffer.concat(lines.flat()));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, this.logFile);
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = openSync(this.logFile, "a", 0o600);
    this.logBytes = 0;
    this.liveBytes = 0;
    this.recordBytes.clear();
    for (const [i, e] of pending.entries()) {
      const bytes = sizeOf(lines[i]!);
      this.recordBytes.set(Journal.keyOf(e), bytes);
      this.logBytes += bytes;
      this.liveBytes += bytes;
    }
  }
}

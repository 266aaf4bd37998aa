// The journal's log file (journal/log): records appended at its end, one write(2) each, emptied
// or rewritten whole by the journal. A crash leaves a record whole or torn at the end, never a
// record after a torn one.
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
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
  writevSync,
} from "node:fs";
import { mkdir, readFile } from "node:fs/promises";
import { promisify } from "node:util";
import { journalDir, journalLogFile } from "../../lib/journalFiles.ts";
import { sizeOf } from "../../lib/journalRecords.ts";
import { unwritable } from "./journalFaults.ts";

const datasync = promisify(fdatasync);

export class JournalLog {
  private readonly cacheDir: string;
  readonly dir: string;
  readonly file: string;
  private fd: number | undefined;
  /** The log's length: where the next record goes. */
  bytes = 0;

  constructor(cacheDir: string) {
    this.cacheDir = cacheDir;
    this.dir = journalDir(cacheDir);
    this.file = journalLogFile(cacheDir);
  }

  /** Makes the journal's folder; a cache dir this daemon cannot write to is said now. */
  async prepare(): Promise<void> {
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
  }

  /** A cache dir this daemon cannot write to is said at start, not found out by a lost save. */
  private checkWritable(): void {
    try {
      this.fd ??= openSync(this.file, "a", 0o600);
      writeFileSync(`${this.file}.check`, "");
      rmSync(`${this.file}.check`, { force: true });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "EROFS" || code === "EACCES" || code === "EPERM") throw unwritable(this.cacheDir, err);
      // ENOSPC: a full disk still lets the daemon deliver what the journal holds.
    }
  }

  /** The log as it is on disk (empty when there is none yet). */
  async read(): Promise<Buffer> {
    try {
      return await readFile(this.file);
    } catch {
      return Buffer.alloc(0); // no log yet
    }
  }

  /** Whether the log is open (a record written, or the cache dir checked). */
  get open(): boolean {
    return this.fd !== undefined;
  }

  /** The log was removed from under us (the cache dir deleted). Opens it if it was not. */
  removed(): boolean {
    this.fd ??= openSync(this.file, "a", 0o600);
    return fstatSync(this.fd).nlink === 0;
  }

  /** One write(2) of a record at the log's end. */
  write(pieces: Buffer[]): void {
    const bytes = sizeOf(pieces);
    // A crash leaves the record whole or torn at the end. A write that fails part way (the disk
    // full) is cut off, so the records after it stay readable.
    let written = 0;
    try {
      written = writevSync(this.fd!, pieces);
    } finally {
      if (written !== bytes) ftruncateSync(this.fd!, this.bytes);
    }
    if (written !== bytes)
      throw Object.assign(new Error("journal: the log was not written (the disk is full)"), {
        code: "ENOSPC",
      });
    this.bytes += bytes;
  }

  /** What was written is on the disk. */
  datasync(): Promise<void> {
    return datasync(this.fd!);
  }

  /** Nothing is pending: the log is emptied, the space it took is free again. */
  empty(): void {
    if (this.fd !== undefined) ftruncateSync(this.fd, 0);
    this.bytes = 0;
  }

  /** Cuts what follows `end` (the last whole record): a record torn by a crash. */
  cutAt(end: number): void {
    this.fd ??= openSync(this.file, "a", 0o600);
    ftruncateSync(this.fd, end);
  }

  /** Replaces the log by one of `records` (on disk before it takes the log's place). */
  rewrite(records: Buffer[][]): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const tmp = `${this.file}.tmp`;
    const fd = openSync(tmp, "w", 0o600);
    try {
      writeSync(fd, Buffer.concat(records.flat()));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, this.file);
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = openSync(this.file, "a", 0o600);
    this.bytes = 0;
    for (const pieces of records) this.bytes += sizeOf(pieces);
  }

  /** A rewrite that failed part way leaves its temp file: it goes, the log as it was stays. */
  dropRewrite(): void {
    rmSync(`${this.file}.tmp`, { force: true });
  }

  /** Closes the log; `sync`: what it holds is made durable first. */
  close(sync: boolean): void {
    if (this.fd === undefined) return;
    if (sync) fsyncSync(this.fd);
    closeSync(this.fd);
    this.fd = undefined;
  }
}

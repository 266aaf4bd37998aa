// Local-only files (editor swap and temp files, backups, anything not .md/.txt): kept in the cache
// dir, never uploaded, listed in a manifest so they survive a restart of the daemon.
//
// Their I/O is synchronous on purpose: it lands in the page cache and costs microseconds, where
// each fs/promises call is two trips through libuv's thread pool, and a FUSE operation on a temp
// file (sed -i, vim's swap) would wait for several of them.
import { randomUUID } from "node:crypto";
import {
  closeSync,
  fstatSync,
  fsync,
  ftruncateSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  truncateSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import type { LocalNode } from "../tree.ts";

export interface ManifestEntry {
  path: string;
  blob: string;
  mode: number;
  mtimeMs: number;
  atimeMs?: number;
  ghostOf?: LocalNode["ghostOf"];
  pendingMeta?: LocalNode["pendingMeta"];
  keptNote?: LocalNode["keptNote"];
  /** A symbolic link's target (no blob). */
  link?: string;
  /** A fifo, socket or device node (no blob). */
  special?: LocalNode["special"];
  rdev?: LocalNode["rdev"];
  uid?: number;
  gid?: number;
  /** An attachment's file: which one it is, and the version its bytes build on. */
  attachment?: LocalNode["attachment"];
  /** A local folder (see localDirs.ts), not a file: its kind. */
  dir?: "until-note" | "always";
}

/**
 * How long manifest changes gather before they are written: a temp file that is created, written
 * and renamed over a note within this time (sed -i, rsync, python's os.replace) never costs a
 * manifest write. fsync(2) on a local file writes it at once.
 */
const MANIFEST_DELAY_MS = 50;
/** The log is folded into the manifest once it is this large. */
const LOG_REWRITE_BYTES = 1024 * 1024;

const fsyncFd = promisify(fsync);

/** An open local file. */
export class LocalHandle {
  private readonly fd: number;
  readonly writable: boolean;

  private constructor(fd: number, writable: boolean) {
    this.fd = fd;
    this.writable = writable;
  }

  static open(blob: string, writable: boolean): LocalHandle {
    return new LocalHandle(openSync(blob, writable ? "r+" : "r"), writable);
  }

  read(length: number, position: number): Buffer {
    const buf = Buffer.alloc(length);
    return buf.subarray(0, readSync(this.fd, buf, 0, length, position));
  }

  /** Writes at `position`, or at the real end for O_APPEND; returns bytes written and the new size. */
  write(data: Buffer, position: number, append: boolean): { written: number; size: number } {
    const at = append ? this.size() : position;
    const written = writeSync(this.fd, data, 0, data.length, at);
    return { written, size: this.size() };
  }

  truncate(size: number): void {
    ftruncateSync(this.fd, size);
  }

  size(): number {
    return fstatSync(this.fd).size;
  }

  /** fsync(2) waits for the disk: off the event loop. */
  sync(): Promise<void> {
    return fsyncFd(this.fd);
  }

  close(): void {
    closeSync(this.fd);
  }
}

export class LocalFiles {
  readonly dir: string;
  private readonly manifest: string;
  private readonly logFile: string;
  private logFd: number | undefined;
  private logBytes = 0;
  /** What the manifest and its log say now: path -> the entry's JSON. */
  private written = new Map<string, string>();
  private entries: (() => ManifestEntry[]) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly onError: (err: unknown) => void;

  /** `onError`: a manifest write that failed in the background (it is tried again at the next change). */
  constructor(cacheDir: string, onError: (err: unknown) => void) {
    this.dir = join(cacheDir, "local");
    this.manifest = join(cacheDir, "local.json");
    this.logFile = join(cacheDir, "local.log");
    this.onError = onError;
  }

  /**
   * The local files recorded: the manifest (a snapshot) and the changes appended to its log since
   * (a line torn by a crash is skipped: that change never completed).
   */
  async init(): Promise<ManifestEntry[]> {
    await mkdir(this.dir, { recursive: true });
    const byPath = new Map<string, ManifestEntry>();
    try {
      for (const e of JSON.parse(await readFile(this.manifest, "utf8")) as ManifestEntry[])
        byPath.set(e.path, e);
    } catch {
      // none yet
    }
    let log = "";
    try {
      log = await readFile(this.logFile, "utf8");
    } catch {
      // no changes since the snapshot
    }
    for (const line of log.split("\n")) {
      if (!line) continue;
      try {
        const rec = JSON.parse(line) as { put: ManifestEntry } | { del: string };
        if ("put" in rec) byPath.set(rec.put.path, rec.put);
        else byPath.delete(rec.del);
      } catch {
        // torn by a crash
      }
    }
    this.written = new Map([...byPath].map(([path, e]) => [path, JSON.stringify(e)]));
    return [...byPath.values()];
  }

  /** A new blob holding `body`. */
  create(body?: Buffer): string {
    const blob = join(this.dir, randomUUID());
    writeFileSync(blob, body ?? Buffer.alloc(0), { mode: 0o600 });
    return blob;
  }

  read(blob: string): Buffer {
    return readFileSync(blob);
  }

  /** `length` bytes at `position` of a local file (fewer at its end). */
  readAt(blob: string, length: number, position: number): Buffer {
    const fh = LocalHandle.open(blob, false);
    try {
      return fh.read(length, position);
    } finally {
      fh.close();
    }
  }

  truncate(blob: string, size: number): void {
    truncateSync(blob, size);
  }

  remove(blob: string): void {
    if (blob) rmSync(blob, { force: true }); // links, fifos and sockets have none
  }

  /**
   * Records that the set of local files changed; the change is written a moment later from
   * `entries` (read when it runs), so bursts of changes cost one write. (A program closing a file
   * it wrote calls `flush` at once: what it saw saved must survive a kill -9 of the daemon.)
   */
  save(entries: () => ManifestEntry[]): void {
    this.entries = entries;
    this.timer ??= setTimeout(() => {
      try {
        this.flush();
      } catch (err) {
        this.onError(err);
      }
    }, MANIFEST_DELAY_MS);
  }

  /**
   * Writes a pending change now: only what differs from what is recorded, appended to the log in
   * one write(2); the snapshot is rewritten (temp file, then rename) when the log has grown large.
   */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const entries = this.entries;
    this.entries = undefined;
    if (!entries) return;
    const now = new Map(entries().map((e) => [e.path, JSON.stringify(e)]));
    let lines = "";
    for (const [path, json] of now) if (this.written.get(path) !== json) lines += `{"put":${json}}\n`;
    for (const path of this.written.keys()) if (!now.has(path)) lines += `${JSON.stringify({ del: path })}\n`;
    this.written = now;
    if (!lines) return;
    if (this.logBytes > LOG_REWRITE_BYTES) {
      this.snapshot();
      return;
    }
    this.logFd ??= openSync(this.logFile, "a", 0o600);
    this.logBytes += writeSync(this.logFd, lines);
  }

  /** The manifest becomes what is recorded now, and the log starts over. */
  private snapshot(): void {
    const tmp = `${this.manifest}.tmp`;
    writeFileSync(tmp, `[${[...this.written.values()].join(",")}]`, { mode: 0o600 });
    renameSync(tmp, this.manifest);
    if (this.logFd !== undefined) closeSync(this.logFd);
    this.logFd = openSync(this.logFile, "w", 0o600);
    this.logBytes = 0;
  }
}

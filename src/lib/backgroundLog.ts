// Log lines written to a descriptor (stderr) in the background, in order, never blocking the
// process and never keeping it alive. pino's own destination (sonic-boom 4) retries a failed write
// forever, every 100 ms, unless the error is EAGAIN: a process whose stderr reader is gone (the
// program that started it died: EPIPE) then never finished `process.exit` — `txtfs serve` ignored
// SIGTERM for good (test/cli/serveLogs.test.ts). Here a write that fails for any other reason than
// EAGAIN ends the log: later lines are dropped, nothing waits.
import { EventEmitter } from "node:events";
import { write, writeSync } from "node:fs";

/** Lines waiting beyond this (a reader that stopped reading) are dropped, not kept in memory. */
const MAX_WAITING_BYTES = 4 * 1024 * 1024;

/** How long to wait before writing again to a descriptor that is full (EAGAIN). */
const FULL_RETRY_MS = 10;

/** Logs not closed yet: what waits in each is written once when the process exits (one hook for all). */
const unclosed = new Set<BackgroundLog>();
let exitHooked = false;

export class BackgroundLog extends EventEmitter {
  private readonly fd: number;
  /** How each line is written (the terminal's readable form of a JSON record); as it is by default. */
  private readonly render: (line: string) => string;
  private waiting: string[] = [];
  private waitingBytes = 0;
  private writing = false;
  private broken = false;
  private ending = false;
  private closed = false;

  constructor(fd: number, render: (line: string) => string = (line) => line) {
    super();
    this.fd = fd;
    this.render = render;
    unclosed.add(this);
    if (!exitHooked) {
      exitHooked = true;
      process.once("exit", () => {
        for (const log of unclosed) log.flushSync();
      });
    }
  }

  /** Queues a line (pino calls this with each formatted line). */
  write(line: string): boolean {
    if (this.broken || this.ending) return false;
    if (this.waitingBytes + line.length > MAX_WAITING_BYTES) return false;
    line = this.render(line);
    this.waiting.push(line);
    this.waitingBytes += line.length;
    if (!this.writing) this.next();
    return true;
  }

  /** Calls back once every line queued so far is written (or the log ended). */
  flush(cb: () => void = () => {}): void {
    if (!this.writing) cb();
    else this.once("drain", cb);
  }

  /** Writes what waits, synchronously and once (at exit); a failure ends the log. */
  flushSync(): void {
    if (this.broken || !this.waiting.length) return;
    const text = this.take();
    try {
      writeSync(this.fd, text);
    } catch {
      this.broken = true;
    }
  }

  /** No more lines: 'close' once what waits is written. */
  end(): void {
    this.ending = true;
    if (!this.writing) this.close();
  }

  private take(): Buffer {
    const text = Buffer.from(this.waiting.join(""));
    this.waiting = [];
    this.waitingBytes = 0;
    return text;
  }

  private next(): void {
    if (!this.waiting.length || this.broken) {
      this.writing = false;
      this.emit("drain");
      if (this.ending || this.broken) this.close();
      return;
    }
    this.writing = true;
    this.send(this.take(), 0);
  }

  private send(buf: Buffer, from: number): void {
    write(this.fd, buf, from, buf.length - from, null, (err, n) => {
      if (err?.code === "EAGAIN") {
        setTimeout(() => this.send(buf, from), FULL_RETRY_MS).unref();
        return;
      }
      if (err) {
        this.broken = true;
        this.waiting = [];
        this.waitingBytes = 0;
      } else if (from + n < buf.length) {
        this.send(buf, from + n);
        return;
      }
      this.next();
    });
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    unclosed.delete(this);
    this.emit("close");
  }
}

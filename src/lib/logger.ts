import { type DestinationStream, type Logger, pino } from "pino";
import { BackgroundLog } from "./backgroundLog.ts";
import { readableLine } from "./readableLog.ts";

export { LOG_LEVELS } from "./logLevels.ts";
export type { Logger };

/**
 * How stderr's log lines look: `json` (pino's lines, for machines), `readable` (short lines for a
 * person), `auto`: readable when stderr is a terminal. A log file is always JSON.
 */
export type LogFormat = "auto" | "json" | "readable";

/** Logs on stderr (stdout is for command results), readable on a terminal, JSON otherwise. */
export function stderrLog(format: LogFormat = "auto"): DestinationStream {
  const readable = format === "readable" || (format === "auto" && process.stderr.isTTY === true);
  return new BackgroundLog(2, readable ? readableLine : undefined);
}

/**
 * Structured logs on stderr (stdout is for command results), or appended to `file`. Level from
 * TXTFS_LOG_LEVEL unless given.
 */
export function createLogger(
  name: string,
  level = process.env.TXTFS_LOG_LEVEL ?? "info",
  destination: DestinationStream = stderrLog(),
): Logger {
  return pino(
    {
      name,
      level,
      redact: ["req.headers.authorization", "req.headers.cookie"],
      serializers: { req: requestLine },
    },
    destination,
  );
}

interface LoggedRequest {
  method?: string;
  url?: string;
  host?: string;
  ip?: string;
  socket?: { remotePort?: number };
}

/** A request as logged: its path, never its query (a one-time sign-in token, a note's name). */
function requestLine(req: LoggedRequest) {
  return {
    method: req.method,
    url: String(req.url ?? "").split("?")[0],
    host: req.host,
    remoteAddress: req.ip,
    remotePort: req.socket?.remotePort,
  };
}

/**
 * A log file opened for appending (created with its folder if missing). `reopen()` after logrotate
 * has moved it starts a new file under the same name (serve calls it on SIGHUP).
 */
export function logFile(path: string): DestinationStream & { reopen(): void; flushSync(): void } {
  // Synchronous writes: a line is on disk before the next one is formatted, and nothing is lost
  // when the process exits right after logging (shutdown, a fatal error).
  return pino.destination({ dest: path, append: true, mkdir: true, sync: true });
}

interface LogStream {
  sync?: boolean;
  end(): void;
  once(event: string, listener: () => void): void;
}

/**
 * Resolves once every line logged so far is written (at most `timeoutMs` later). Lines to stderr
 * are written in the background (a pipe nobody drains never stalls the daemon), so a process that
 * ends itself at once (`_exit`) first waits for them; the log is closed, nothing may log after.
 */
export function logWritten(log: Logger, timeoutMs = 1000): Promise<void> {
  const stream = (log as unknown as Record<symbol, Partial<LogStream> | undefined>)[pino.symbols.streamSym];
  if (!stream?.end || !stream.once || stream.sync) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, timeoutMs);
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    const s = stream as LogStream;
    s.once("close", done);
    s.once("error", done);
    s.end();
  });
}

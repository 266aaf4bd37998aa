import { type Logger, pino } from "pino";

export type { Logger };

/** Structured logs on stderr (stdout is for command results). Level from TXTFS_LOG_LEVEL. */
export function createLogger(name: string, level = process.env.TXTFS_LOG_LEVEL ?? "info"): Logger {
  return pino(
    { name, level, redact: ["req.headers.authorization", "req.headers.cookie"] },
    pino.destination(2),
  );
}

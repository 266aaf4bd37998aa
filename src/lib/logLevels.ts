/** pino's levels, for option parsing without loading pino (the CLI's --help stays fast). */
export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

/** How log lines on stderr look (src/lib/logger.ts): readable on a terminal unless told otherwise. */
export const LOG_FORMATS = ["auto", "json", "readable"] as const;

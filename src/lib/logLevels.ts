/** pino's levels, for option parsing without loading pino (the CLI's --help stays fast). */
export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

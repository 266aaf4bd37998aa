// Option parsing shared by commands: every flag and environment variable is checked before any
// network call or mount, and a bad one is one line naming it and the accepted form (exit 2).
import { InvalidArgumentError, Option } from "commander";
import { LOG_FORMATS, LOG_LEVELS } from "../lib/logLevels.ts";
import { parseDuration } from "../lib/time.ts";

/** A bad flag, variable or config file: the CLI prints the message alone and exits 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

export function parsePort(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isInteger(n) || n < 0 || n > 65535)
    throw new InvalidArgumentError("expected a port number 0-65535");
  return n;
}

export function parsePositiveInt(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < 1)
    throw new InvalidArgumentError("expected a positive integer");
  return n;
}

export function parseDurationOption(value: string): number {
  const seconds = parseDuration(value);
  if (seconds === null || seconds <= 0)
    throw new InvalidArgumentError("expected a duration like 30d, 12h, 90m or 1y");
  return seconds;
}

/** A uid or gid: a non-negative integer below 2^32 - 1 (which means "unset" to the kernel). */
export function parseId(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isInteger(n) || n >= 2 ** 32 - 1)
    throw new InvalidArgumentError("expected a numeric id like 1000 (see `id -u`)");
  return n;
}

/** Seconds, possibly fractional, above zero: `300`, `2.5`. */
export function parseSeconds(value: string): number {
  const n = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value.trim()) || !(n > 0) || !Number.isFinite(n))
    throw new InvalidArgumentError("expected a number of seconds above 0, like 300");
  return n;
}

/** The change feed's long-poll wait: whole seconds 0-60 (what the service accepts). */
export function parsePollWait(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || n > 60) throw new InvalidArgumentError("expected whole seconds 0-60");
  return n;
}

/** A size like 256M, 2G, 512k or a byte count. */
export function parseSize(value: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?$/i.exec(value.trim());
  if (!m) throw new InvalidArgumentError("expected a size like 256M, 2G or 512k");
  const unit = { "": 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 }[m[2]!.toLowerCase() as "" | "k"]!;
  const bytes = Math.floor(Number(m[1]) * unit);
  if (bytes < 1) throw new InvalidArgumentError("expected a size above 0, like 256M");
  return bytes;
}

/** A service URL: http(s) with a host. */
export function parseUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError("expected a URL like http://127.0.0.1:8750");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new InvalidArgumentError("expected an http:// or https:// URL");
  return value.replace(/\/+$/, "");
}

/** An environment variable through the same parser as its flag; the error names the variable. */
export function fromEnv<T>(name: string, parse: (value: string) => T): T | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return undefined;
  try {
    return parse(raw);
  } catch (err) {
    throw new UsageError(`${name}=${JSON.stringify(raw)} is invalid: ${(err as Error).message}`);
  }
}

/** TXTFS_LOG_LEVEL, checked before anything logs (pino would throw deep inside a command). */
export function checkLogLevel(): void {
  fromEnv("TXTFS_LOG_LEVEL", (v) => {
    if (!(LOG_LEVELS as readonly string[]).includes(v))
      throw new InvalidArgumentError(`expected one of ${LOG_LEVELS.join(", ")}`);
    return v;
  });
  fromEnv("TXTFS_LOG_FORMAT", (v) => {
    if (!(LOG_FORMATS as readonly string[]).includes(v))
      throw new InvalidArgumentError(`expected one of ${LOG_FORMATS.join(", ")}`);
    return v;
  });
}

/** `--log-format`: JSON lines for machines, short readable lines for people (default: by stderr). */
export const logFormatOption = () =>
  new Option("--log-format <format>", "log lines on stderr: json, readable, or auto (readable on a terminal)")
    .choices(LOG_FORMATS)
    .default(process.env.TXTFS_LOG_FORMAT ?? "auto");

/**
 * `--trust-proxy`: what Fastify's `trustProxy` accepts. `true` trusts any sender (only when nothing
 * but the proxy can reach the port), a number trusts that many hops, addresses and CIDRs trust
 * those proxies only.
 */
export function parseTrustProxy(value: string): boolean | number | string[] {
  const v = value.trim();
  if (v === "true") return true;
  if (v === "false") return false;
  if (/^\d+$/.test(v)) return Number(v);
  const list = v
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const address = /^(\d{1,3}(\.\d{1,3}){3}|[0-9a-f:]+)(\/\d{1,3})?$|^(loopback|linklocal|uniquelocal)$/i;
  const bad = list.find((s) => !address.test(s));
  if (list.length === 0 || bad !== undefined)
    throw new InvalidArgumentError(
      `expected true, a hop count, or addresses/CIDRs like 127.0.0.1,10.0.0.0/8 (not ${JSON.stringify(bad ?? v)})`,
    );
  return list;
}

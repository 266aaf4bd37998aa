// Option parsing shared by commands: clear errors instead of NaN.
import { InvalidArgumentError } from "commander";
import { parseDuration } from "../lib/time.ts";

export function parsePort(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535)
    throw new InvalidArgumentError("expected a port number 0-65535");
  return n;
}

export function parsePositiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError("expected a positive integer");
  return n;
}

export function parseDurationOption(value: string): number {
  const seconds = parseDuration(value);
  if (seconds === null || seconds <= 0)
    throw new InvalidArgumentError("expected a duration like 30d, 12h, 90m or 1y");
  return seconds;
}

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

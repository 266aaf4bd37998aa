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

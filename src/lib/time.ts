/** ISO 8601 timestamp with milliseconds, always UTC. */
export function nowIso(): string {
  return new Date().toISOString();
}

/** A timestamp strictly after `previous` (so updatedAt changes whenever a record changes). */
export function nextIso(previous: string | null | undefined): string {
  const now = Date.now();
  const prev = previous ? Date.parse(previous) : 0;
  return new Date(Math.max(now, prev + 1)).toISOString();
}

/** UTC day, e.g. 2026-11-21: the unit of `requests_today`. */
export function utcDay(date = new Date()): string {
  return date.toISOString().slice(0, 10);
}

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400, w: 604800, y: 31536000 };

/** Parses durations like `30d`, `12h`, `90m`, `1y` into seconds; null when malformed. */
export function parseDuration(text: string): number | null {
  const m = /^(\d+)\s*([smhdwy])$/.exec(text.trim());
  if (!m) return null;
  return Number(m[1]) * UNITS[m[2]!]!;
}

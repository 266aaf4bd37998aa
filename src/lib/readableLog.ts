// pino's records as short lines for a person at a terminal: "txtfs: MESSAGE [key=value, ...]",
// with "warning:" or "error:" in front when it is one. The same records as the JSON lines a pipe or
// a log file gets (machines read those); only the rendering differs.
/** pino's numeric levels, as a person reads them (info and below: no word). */
const LEVEL_WORDS: Record<number, string> = { 40: "warning: ", 50: "error: ", 60: "fatal: " };

/** Fields every record has, which a person does not need on each line. */
const HIDDEN = new Set(["level", "time", "pid", "hostname", "name", "msg", "v"]);

/** A value longer than this is cut (with "…"): a line stays a line. */
const MAX_VALUE = 120;

function show(value: unknown): string {
  if (value && typeof value === "object" && "message" in value && typeof value.message === "string")
    return value.message; // an error (pino's err serializer): its message, not its stack
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return text.length > MAX_VALUE ? `${text.slice(0, MAX_VALUE - 1)}…` : text;
}

/** One JSON record to one readable line (a line that is not a record is kept as it is). */
export function readableLine(json: string): string {
  let rec: Record<string, unknown>;
  try {
    rec = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.endsWith("\n") ? json : `${json}\n`;
  }
  const level = LEVEL_WORDS[Number(rec.level)] ?? "";
  const details = Object.entries(rec)
    .filter(([k, v]) => !HIDDEN.has(k) && v !== undefined)
    .map(([k, v]) => `${k}=${show(v)}`);
  const msg = typeof rec.msg === "string" ? rec.msg : "";
  return `txtfs: ${level}${msg}${details.length ? ` [${details.join(", ")}]` : ""}\n`;
}

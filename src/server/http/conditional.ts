// RFC 9110 conditional requests: If-None-Match (weak comparison) and If-Match (strong).
import type { IfMatch } from "../domain/files.ts";

function parseList(header: string): string[] {
  return header
    .split(",")
    .map((t) => t.trim())
    .filter(Boolean);
}

export function parseIfMatch(header: string | undefined): IfMatch | undefined {
  if (header === undefined) return undefined;
  return header.trim() === "*" ? "*" : parseList(header);
}

/** True when the client's cached copy is current (answer 304). */
export function notModified(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === "*") return true;
  const weak = (t: string) => t.replace(/^W\//, "");
  return parseList(header).some((t) => weak(t) === weak(etag));
}

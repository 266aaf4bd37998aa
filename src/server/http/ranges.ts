// Range requests (RFC 9110 §14): `bytes=a-b`, `bytes=a-`, `bytes=-n`. A range past the end is 416; a
// header that is not a bytes range is ignored (the whole body, 200). Several ranges are answered with
// the first one only (one part, no multipart), which the RFC allows a server to do.
export type RangeAnswer =
  | { kind: "whole" }
  | { kind: "part"; start: number; end: number }
  | { kind: "unsatisfiable" };

export function parseRange(
  header: string | undefined,
  size: number,
  ifRange?: string,
  etag?: string,
): RangeAnswer {
  if (!header) return { kind: "whole" };
  // If-Range: the range only for the representation the client already holds part of.
  if (ifRange !== undefined && (ifRange.startsWith("W/") || ifRange !== etag)) return { kind: "whole" };
  const match = /^\s*bytes\s*=\s*(.+)$/i.exec(header);
  if (!match) return { kind: "whole" };
  const specs = match[1]!.split(",").map((s) => s.trim());
  let syntaxOk = false;
  for (const spec of specs) {
    const m = /^(\d*)\s*-\s*(\d*)$/.exec(spec);
    if (!m || (m[1] === "" && m[2] === "")) continue;
    syntaxOk = true;
    if (m[1] === "") {
      const suffix = Number(m[2]);
      if (suffix === 0 || size === 0) continue;
      return { kind: "part", start: Math.max(0, size - suffix), end: size - 1 };
    }
    const start = Number(m[1]);
    const end = m[2] === "" ? size - 1 : Math.min(Number(m[2]), size - 1);
    if (m[2] !== "" && Number(m[2]) < start) {
      syntaxOk = false; // an invalid range-spec: the header is ignored
      break;
    }
    if (start >= size) continue;
    return { kind: "part", start, end };
  }
  return syntaxOk ? { kind: "unsatisfiable" } : { kind: "whole" };
}

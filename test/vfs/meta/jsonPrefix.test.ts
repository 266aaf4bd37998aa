// The sidecar write check (src/vfs/meta/jsonPrefix.ts) against JSON.parse: a text it calls whole is
// an object JSON.parse reads, every beginning of one is a beginning, and a beginning it calls
// invalid is one no text starting with it parses from (so no write a valid sidecar needs is refused).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { jsonObjectPrefix } from "../../../src/vfs/meta/jsonPrefix.ts";

const bytes = (s: string) => Buffer.from(s, "utf8");

const parsesAsObject = (s: string) => {
  try {
    const v = JSON.parse(s);
    return typeof v === "object" && v !== null && !Array.isArray(v);
  } catch {
    return false;
  }
};

describe("jsonObjectPrefix", () => {
  it("reads every beginning of a JSON object as one, and the whole as complete", () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 8 }),
        fc.integer({ min: 0, max: 4 }),
        (doc, indent) => {
          const text = `${JSON.stringify(doc, null, indent)}\n`;
          const b = bytes(text);
          // (the last byte is the newline after the closing brace)
          for (let i = 0; i < b.length - 1; i++)
            expect(jsonObjectPrefix(b.subarray(0, i)), text.slice(0, i)).toBe("partial");
          expect(jsonObjectPrefix(b.subarray(0, b.length - 1))).toBe("complete");
          expect(jsonObjectPrefix(b)).toBe("complete");
        },
      ),
      { numRuns: 150 },
    );
  });

  it("never calls invalid a beginning that a text parsing as an object starts with; complete exactly when it parses", () => {
    const piece = fc.constantFrom(
      ...'{}[]":,\\ \n0123456789-+.eEtrufalsn\u00e9ab/'.split(""),
      '"a"',
      "true",
      "null",
      "1e5",
    );
    // Random pieces, and valid sidecars with one byte changed: texts near valid ones.
    const pieces = fc.array(piece, { maxLength: 30 }).map((p) => p.join(""));
    const mutated = fc
      .tuple(
        fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 5 }),
        fc.nat(),
        piece,
        fc.boolean(),
      )
      .map(([doc, at, p, insert]) => {
        const text = JSON.stringify(doc, null, 1);
        const i = at % (text.length + 1);
        return text.slice(0, i) + p + text.slice(insert ? i : i + 1);
      });
    fc.assert(
      fc.property(fc.oneof(pieces, mutated), (text) => {
        const b = bytes(text);
        const whole = parsesAsObject(text);
        expect(jsonObjectPrefix(b) === "complete", text).toBe(whole);
        if (!whole) return;
        for (let i = 0; i <= b.length; i++)
          expect(jsonObjectPrefix(b.subarray(0, i)), text).not.toBe("invalid");
      }),
      { numRuns: 1500 },
    );
  });

  it("refuses at the first byte that cannot start or continue a sidecar", () => {
    for (const bad of [
      "not json",
      "[1]",
      '"s"',
      "{x",
      '{"a" 1',
      '{"a":tru e}',
      '{"a":01}',
      '{"a":1}}',
      '{"a":"\u0001"}',
      "{} {}",
    ])
      expect(jsonObjectPrefix(bytes(bad)), bad).toBe("invalid");
    for (const ok of ["", "  ", "{", '{"tags": ["a", "b"', '{"n": -1.5e', '{"s": "\\u00', '{"a":{"b":[]}'])
      expect(jsonObjectPrefix(bytes(ok)), ok).toBe("partial");
  });
});

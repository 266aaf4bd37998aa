// The PostgreSQL store's escaping of U+0000 (and of its escape character): a round trip keeps every
// string exactly, and a string with neither character is left untouched.
import fc from "fast-check";
import { expect, it } from "vitest";
import { escapeText, unescapeText } from "../../../src/store/postgres/nulText.ts";

it("round-trips any string, and leaves strings without U+0000 and U+0001 as they are", () => {
  const weird = fc.string({ unit: fc.constantFrom("\u0000", "\u0001", "0", "a", "é", "🌍") });
  fc.assert(
    fc.property(fc.oneof(weird, fc.string({ unit: "binary" })), (s) => {
      const escaped = escapeText(s);
      expect(escaped.includes("\u0000")).toBe(false);
      expect(unescapeText(escaped)).toBe(s);
      // biome-ignore lint/suspicious/noControlCharactersInRegex: the two characters that are escaped
      if (!/[\u0000\u0001]/.test(s)) expect(escaped).toBe(s);
    }),
    { numRuns: 2000 },
  );
});

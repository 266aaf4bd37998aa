// Whether bytes can be the start of a JSON object, and whether they are a whole one: a sidecar
// write is refused at the first byte that can never be part of a valid sidecar, so the program
// that wrote it is told (bash ignores the error of a close, where the rest is checked).
// A byte-level scanner of RFC 8259 (objects, arrays, strings with escapes, numbers, literals).

export type JsonPrefix = "invalid" | "partial" | "complete";

const WS = new Set([0x20, 0x09, 0x0a, 0x0d]);
const HEX = /^[0-9a-fA-F]$/;
const ESCAPES = new Set([...'"\\/bfnrtu'].map((c) => c.charCodeAt(0)));
const isDigit = (b: number) => b >= 0x30 && b <= 0x39;

type Expect = "value" | "key" | "key-or-end" | "value-or-end" | "colon" | "comma-or-end" | "done";

/** Number states of -?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)? (the ones a number may end in last). */
type Num = "minus" | "zero" | "int" | "dot" | "frac" | "e" | "esign" | "exp";
const NUMBER_ENDS: ReadonlySet<Num> = new Set(["zero", "int", "frac", "exp"]);

function stepNumber(state: Num, b: number): Num | undefined {
  const digit = isDigit(b);
  switch (state) {
    case "minus":
      return b === 0x30 ? "zero" : digit ? "int" : undefined;
    case "zero":
      return b === 0x2e ? "dot" : b === 0x65 || b === 0x45 ? "e" : undefined;
    case "int":
      return digit ? "int" : b === 0x2e ? "dot" : b === 0x65 || b === 0x45 ? "e" : undefined;
    case "dot":
      return digit ? "frac" : undefined;
    case "frac":
      return digit ? "frac" : b === 0x65 || b === 0x45 ? "e" : undefined;
    case "e":
      return b === 0x2b || b === 0x2d ? "esign" : digit ? "exp" : undefined;
    case "esign":
    case "exp":
      return digit ? "exp" : undefined;
  }
}

/** What `bytes` are: never part of a JSON object, its beginning, or a whole one (whitespace around). */
export function jsonObjectPrefix(bytes: Uint8Array): JsonPrefix {
  const stack: ("o" | "a")[] = [];
  let expect = "value" as Expect;
  let inString = false;
  let stringIsKey = false;
  let escaping: number | undefined; // -1: after a backslash; 0..3: hex digits of \u still to come
  let number: Num | undefined;
  let literal: { word: string; at: number } | undefined;

  /** What may follow a value that just ended. */
  const afterValue = (): Expect => (stack.length === 0 ? "done" : "comma-or-end");

  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (inString) {
      if (escaping === -1) {
        if (!ESCAPES.has(b)) return "invalid";
        escaping = b === 0x75 ? 4 : undefined;
      } else if (escaping !== undefined) {
        if (!HEX.test(String.fromCharCode(b))) return "invalid";
        escaping = escaping === 1 ? undefined : escaping - 1;
      } else if (b === 0x5c) escaping = -1;
      else if (b === 0x22) {
        inString = false;
        if (stringIsKey) expect = "colon";
        else expect = afterValue();
      } else if (b < 0x20) return "invalid";
      continue;
    }
    if (literal) {
      if (b !== literal.word.charCodeAt(literal.at)) return "invalid";
      if (++literal.at === literal.word.length) {
        literal = undefined;
        expect = afterValue();
      }
      continue;
    }
    if (number) {
      const next = stepNumber(number, b);
      if (next) {
        number = next;
        continue;
      }
      if (!NUMBER_ENDS.has(number)) return "invalid";
      number = undefined;
      expect = afterValue(); // and this byte is read below as what follows the number
    }
    if (WS.has(b)) continue;
    const startsValue = expect === "value" || expect === "value-or-end";
    if (expect === "done") return "invalid";
    if (stack.length === 0 && b !== 0x7b) return "invalid"; // a sidecar is one object
    if (b === 0x7b && startsValue) {
      stack.push("o");
      expect = "key-or-end";
    } else if (b === 0x5b && startsValue) {
      stack.push("a");
      expect = "value-or-end";
    } else if (b === 0x7d && (expect === "key-or-end" || expect === "comma-or-end") && stack.at(-1) === "o") {
      stack.pop();
      expect = afterValue();
    } else if (
      b === 0x5d &&
      (expect === "value-or-end" || expect === "comma-or-end") &&
      stack.at(-1) === "a"
    ) {
      stack.pop();
      expect = afterValue();
    } else if (b === 0x22 && (startsValue || expect === "key" || expect === "key-or-end")) {
      inString = true;
      stringIsKey = expect === "key" || expect === "key-or-end";
    } else if (b === 0x3a && expect === "colon") expect = "value";
    else if (b === 0x2c && expect === "comma-or-end") expect = stack.at(-1) === "o" ? "key" : "value";
    else if (startsValue && (b === 0x2d || isDigit(b)))
      number = b === 0x2d ? "minus" : b === 0x30 ? "zero" : "int";
    else if (startsValue && (b === 0x74 || b === 0x66 || b === 0x6e)) {
      literal = { word: b === 0x74 ? "true" : b === 0x66 ? "false" : "null", at: 1 };
    } else return "invalid";
  }
  return expect === "done" ? "complete" : "partial";
}

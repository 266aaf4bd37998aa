// How deeply a JSON text nests, measured on the text before it is parsed: every walk of a parsed
// body (the input guard, schema validation, JSON.stringify of a saved replay) recurses, and a body
// of 50,000 `[` would overflow the stack in whichever came first.

/** Array and object openers and closers, and the quote that starts a string. */
const STRUCTURE = /[[\]{}"]/g;
/** Inside a string only its end and escapes matter (a regex skips the rest natively, fast). */
const STRING_END = /["\\]/g;

/** True when `text` opens more than `max` arrays/objects inside each other. */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let at = 0;
  for (;;) {
    STRUCTURE.lastIndex = at;
    const found = STRUCTURE.exec(text);
    if (!found) return false;
    at = found.index + 1;
    const c = found[0];
    if (c === '"') {
      for (;;) {
        STRING_END.lastIndex = at;
        const end = STRING_END.exec(text);
        if (!end) return false; // an unterminated string: JSON.parse refuses it
        at = end.index + (end[0] === "\\" ? 2 : 1);
        if (end[0] === '"') break;
      }
    } else if (c === "[" || c === "{") {
      if (++depth > max) return true;
    } else {
      depth--;
    }
  }
}

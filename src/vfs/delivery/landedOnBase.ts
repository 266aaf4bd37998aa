// Whether a rename sent alone landed on the content its base had (delivery and bulk delivery both ask).
import type { TxtFile } from "../../lib/apiTypes.ts";
import type { Base } from "../base.ts";

/**
 * Whether a rename or move sent alone (no If-Match: a rename never conflicts) landed on the content
 * `base` had: only then is the version it made one our later saves may build on. Otherwise an edit
 * made elsewhere came between, and a save built on `base` must meet it as a conflict, not write
 * over it (the note keeps theirs, ours becomes a copy).
 */
export function landedOnBase(meta: TxtFile, base: Base | undefined): boolean {
  return !!base?.hash && meta.contentHash === base.hash;
}

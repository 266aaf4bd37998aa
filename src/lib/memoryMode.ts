// The mount daemon's phases of memory use. Listing the account (100,000 notes: ~55 MiB of JSON
// parsed into records) is a burst of short-lived allocations; V8's size-over-speed heuristics
// (--optimize-for-size) collect garbage so eagerly then that the listing took ~25% longer
// (100,000 notes: 1.55-1.9 s against 1.2-1.3 s). For the life of the mount they are what keeps the
// daemon near what it uses (10,000 notes read through a 32 MiB cache: ~105 MiB RSS with them,
// ~160 MiB without). So the daemon starts without them and turns them on once it is mounted.
// V8 consults this flag as it goes (heap growing, the memory reducer), so setting it late works:
// docs/benchmarks.md has both figures.
//
// A large note in hand is the listing's case again, in megabytes: each save of a 1 MB note makes
// a few megabytes of buffers and strings, and with the heuristics on each such burst cost two full
// collections of the heap (5-12 ms each; `cat 1MB > note && cat note`: median 46-55 ms against
// 30-33 without them, docs/benchmarks.md). So while large bodies are being handled, and for a few
// seconds after the last one, the heuristics are off; then on again, and the memory reducer gives
// back what the burst took.
//
// The listing's garbage is collected once, at once, when the long life begins: V8 otherwise sets
// the heap's next limit from the listing's peak, and the first `ls -lR` (100,000 notes: a node and
// attributes for each) grew into it, +58 MiB instead of +25 (docs/benchmarks.md). The collection
// costs ~50-80 ms of the mount at 100,000 notes.
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/** A note body at least this large is a burst of its own (a copy or two of it are garbage soon). */
export const LARGE_BODY_BYTES = 256 * 1024;
/** How long speed is favoured after the last large body. */
const LARGE_BODY_SPELL_MS = 3000;

let favouringMemory = false;
let spell: NodeJS.Timeout | undefined;

/** From now on V8 favours memory over speed (the listing is done; the long life begins). */
export function favourMemoryFromNowOn(): void {
  favouringMemory = true;
  if (!spell) setFlagsFromString("--optimize-for-size");
  collectGarbage();
}

/** A full garbage collection now (V8's `gc()`, which the daemon is not started with). */
function collectGarbage(): void {
  setFlagsFromString("--expose-gc");
  (runInNewContext("gc") as () => void)();
}

/**
 * A note body of `bytes` is being written, read or sent: if it is large, speed is favoured for a
 * moment. A no-op in a process that never favoured memory (the service, tests).
 */
export function handlingBody(bytes: number): void {
  if (!favouringMemory || bytes < LARGE_BODY_BYTES) return;
  if (!spell) setFlagsFromString("--no-optimize-for-size");
  clearTimeout(spell);
  spell = setTimeout(() => {
    spell = undefined;
    if (favouringMemory) setFlagsFromString("--optimize-for-size");
  }, LARGE_BODY_SPELL_MS);
  spell.unref();
}

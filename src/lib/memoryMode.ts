// The mount daemon's two phases of memory use. Listing the account (100,000 notes: ~55 MiB of
// JSON parsed into records) is a burst of short-lived allocations; V8's size-over-speed heuristics
// (--optimize-for-size) collect garbage so eagerly then that the listing took ~25% longer
// (100,000 notes: 1.55-1.9 s against 1.2-1.3 s). For the life of the mount they are what keeps the
// daemon near what it uses (10,000 notes read through a 32 MiB cache: ~105 MiB RSS with them,
// ~160 MiB without). So the daemon starts without them and turns them on once it is mounted.
// V8 consults this flag as it goes (heap growing, the memory reducer), so setting it late works:
// docs/benchmarks.md has both figures.
import { setFlagsFromString } from "node:v8";

/** From now on V8 favours memory over speed (the listing is done; the long life begins). */
export function favourMemoryFromNowOn(): void {
  setFlagsFromString("--optimize-for-size");
}

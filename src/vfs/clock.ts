// The wall clock the vfs reads: the times it shows (mtimes, ctimes of changes made here), the times
// it stamps (a journal entry's savedAt, a conflict copy's name, a report's `at`) and the ages it
// measures against them (a delete's grace). One clock, given to the vfs at construction
// (VfsOptions.clock) and read by every part through VfsCore: the simulation (test/vfs/sim) gives
// each device its own, set minutes ahead or behind or jumped back mid-run as NTP can.
// Timers (setTimeout) are not the clock's: they measure elapsed time, which no wall-clock jump moves.

export interface Clock {
  /** Milliseconds since the epoch, as Date.now(). */
  now(): number;
}

/** The machine's clock: the mount and `txtfs dav` use it. */
export const systemClock: Clock = { now: () => Date.now() };

/** `clock`'s now as an ISO 8601 timestamp (UTC, milliseconds). */
export const isoNow = (clock: Clock): string => new Date(clock.now()).toISOString();

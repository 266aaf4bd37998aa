// The times a note shows are this mount's (a local write, `touch`, `cp -a`, `rsync -a`, `tar -x`):
// the service keeps only its own updatedAt. They are kept here, per note and per content, so they
// survive a remount while the content is the same: a second `rsync -a` then transfers nothing.
// A remote edit changes the content hash, and the note shows the service's time again.
//
// On disk: `times.json`, a snapshot, and `times.log`, the changes since it (a JSON line each). A
// save appends only what changed, so its cost follows the changes, not the number of notes kept
// (an unmount right after a burst of writes, 100,000 notes with times). The log is folded into a
// new snapshot at load once it is longer than the snapshot, and while running once it is much
// longer (a daemon up for months).
import { appendFileSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface NoteTime {
  /** The content hash the times belong to. */
  hash: string;
  mtimeMs: number;
  atimeMs?: number;
}

/** Changes gather this long before they are written (a `cp -a` of 1,000 notes writes once). */
const SAVE_DELAY_MS = 200;

/** A running daemon folds the log into the snapshot past this many lines (and 4 per note kept). */
const COMPACT_MIN_LINES = 10_000;

/** A line of the log: the note's times, or null when they were dropped. */
type Change = [id: string, time: NoteTime | null];

export class NoteTimes {
  private readonly file: string;
  private readonly log: string;
  private readonly times = new Map<string, NoteTime>();
  /** Notes whose times changed since the last save. */
  private readonly changed = new Set<string>();
  /** Lines in the log. */
  private logLines = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly onError: (err: unknown) => void;

  constructor(cacheDir: string, onError: (err: unknown) => void) {
    this.file = join(cacheDir, "times.json");
    this.log = join(cacheDir, "times.log");
    this.onError = onError;
  }

  load(): void {
    try {
      const saved = JSON.parse(readFileSync(this.file, "utf8")) as Record<string, NoteTime>;
      for (const [id, t] of Object.entries(saved)) this.times.set(id, t);
    } catch {
      // none yet, or torn by a crash: the notes show the service's times
    }
    let lines: string[] = [];
    try {
      lines = readFileSync(this.log, "utf8").split("\n");
    } catch {
      return; // no changes since the snapshot
    }
    for (const line of lines) {
      let change: Change;
      try {
        change = JSON.parse(line) as Change;
      } catch {
        continue; // the empty last line, or a line torn by a crash
      }
      if (change[1]) this.times.set(change[0], change[1]);
      else this.times.delete(change[0]);
    }
    this.logLines = lines.length - 1;
    // A last line torn by a crash would join the next change appended: start a clean log.
    if (lines.length > this.times.size || lines.at(-1) !== "") this.compact();
  }

  /** The times kept for note `id` while its content hash is `hash`. */
  get(id: string, hash: string): NoteTime | undefined {
    const t = this.times.get(id);
    return t && t.hash === hash ? t : undefined;
  }

  set(id: string, time: NoteTime): void {
    this.times.set(id, time);
    this.changed.add(id);
    this.saveSoon();
  }

  delete(id: string): void {
    if (!this.times.delete(id)) return;
    this.changed.add(id);
    this.saveSoon();
  }

  private saveSoon(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flush();
    }, SAVE_DELAY_MS);
    this.timer.unref();
  }

  /** Appends what changed since the last save to the log (nothing to do when nothing did). */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.changed.size) return;
    let text = "";
    for (const id of this.changed) text += `${JSON.stringify([id, this.times.get(id) ?? null])}\n`;
    try {
      appendFileSync(this.log, text, { mode: 0o600 });
      this.logLines += this.changed.size;
      this.changed.clear();
    } catch (err) {
      this.onError(err);
    }
    if (this.logLines > Math.max(COMPACT_MIN_LINES, 4 * this.times.size)) this.compact();
  }

  /** Writes every note's times as the new snapshot and starts an empty log. */
  private compact(): void {
    try {
      const tmp = `${this.file}.tmp`;
      writeFileSync(tmp, JSON.stringify(Object.fromEntries(this.times)), { mode: 0o600 });
      renameSync(tmp, this.file);
      writeFileSync(this.log, "", { mode: 0o600 });
      this.logLines = 0;
    } catch (err) {
      this.onError(err);
    }
  }
}

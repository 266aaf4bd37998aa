// The times a note shows are this mount's (a local write, `touch`, `cp -a`, `rsync -a`, `tar -x`):
// the service keeps only its own updatedAt. They are kept here, per note and per content, so they
// survive a remount while the content is the same: a second `rsync -a` then transfers nothing.
// A remote edit changes the content hash, and the note shows the service's time again.
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface NoteTime {
  /** The content hash the times belong to. */
  hash: string;
  mtimeMs: number;
  atimeMs?: number;
}

/** Changes gather this long before the file is written (a `cp -a` of 1,000 notes writes it once). */
const SAVE_DELAY_MS = 200;

export class NoteTimes {
  private readonly file: string;
  private readonly times = new Map<string, NoteTime>();
  private timer: NodeJS.Timeout | undefined;
  private readonly onError: (err: unknown) => void;

  constructor(cacheDir: string, onError: (err: unknown) => void) {
    this.file = join(cacheDir, "times.json");
    this.onError = onError;
  }

  load(): void {
    try {
      const saved = JSON.parse(readFileSync(this.file, "utf8")) as Record<string, NoteTime>;
      for (const [id, t] of Object.entries(saved)) this.times.set(id, t);
    } catch {
      // none yet, or torn by a crash: the notes show the service's times
    }
  }

  /** The times kept for note `id` while its content hash is `hash`. */
  get(id: string, hash: string): NoteTime | undefined {
    const t = this.times.get(id);
    return t && t.hash === hash ? t : undefined;
  }

  set(id: string, time: NoteTime): void {
    this.times.set(id, time);
    this.saveSoon();
  }

  delete(id: string): void {
    if (this.times.delete(id)) this.saveSoon();
  }

  private saveSoon(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flush();
    }, SAVE_DELAY_MS);
    this.timer.unref();
  }

  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    try {
      const tmp = `${this.file}.tmp`;
      writeFileSync(tmp, JSON.stringify(Object.fromEntries(this.times)), { mode: 0o600 });
      renameSync(tmp, this.file);
    } catch (err) {
      this.onError(err);
    }
  }
}

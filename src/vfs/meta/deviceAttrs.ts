// What this device keeps of an item that the service has no field for: a note's or folder's mode
// bits (`chmod +x script.sh`) and owner (made by another user, `chown`), a folder's times
// (`touch -d`, `rsync -a`, `tar -x`). Like the links and local-only files, they are this device's:
// kept in the cache dir by item id, so they survive a remount, and never uploaded.
//
// On disk: `attrs.json`, a snapshot, and `attrs.log`, one JSON line per change since. A change is
// appended synchronously (one write(2), microseconds): a chmod that returned survives a kill -9 of
// the daemon. The log is folded into the snapshot at load once it is longer than the snapshot.
import { appendFileSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface KeptAttrs {
  /** Permission bits (07777). */
  mode?: number;
  mtimeMs?: number;
  atimeMs?: number;
  /** Its owner, when not the mount's. */
  uid?: number;
  gid?: number;
}

/** A line of the log: the item's attributes, or null when they were dropped. */
type Change = [key: string, attrs: KeptAttrs | null];

/** Keys: a note's and a folder's ids are apart. */
export const noteKey = (id: string) => `f:${id}`;
export const folderKey = (id: string) => `d:${id}`;

export class DeviceAttrs {
  private readonly file: string;
  private readonly log: string;
  private readonly kept = new Map<string, KeptAttrs>();
  private readonly onError: (err: unknown) => void;

  constructor(cacheDir: string, onError: (err: unknown) => void) {
    this.file = join(cacheDir, "attrs.json");
    this.log = join(cacheDir, "attrs.log");
    this.onError = onError;
  }

  load(): void {
    try {
      const saved = JSON.parse(readFileSync(this.file, "utf8")) as Record<string, KeptAttrs>;
      for (const [key, a] of Object.entries(saved)) this.kept.set(key, a);
    } catch {
      // none yet (or torn by a crash: the rename below makes that a machine crash's at most)
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
      if (change[1]) this.kept.set(change[0], change[1]);
      else this.kept.delete(change[0]);
    }
    // A last line torn by a crash would join the next change appended: start a clean log.
    if (lines.length > this.kept.size || lines.at(-1) !== "") this.compact();
  }

  get(key: string): KeptAttrs | undefined {
    return this.kept.get(key);
  }

  /** Keeps `attrs` for `key` (none: forgets it). */
  set(key: string, attrs: KeptAttrs | undefined): void {
    const empty = !attrs || Object.values(attrs).every((v) => v === undefined);
    if (empty && !this.kept.has(key)) return;
    if (empty) this.kept.delete(key);
    else this.kept.set(key, attrs);
    try {
      appendFileSync(this.log, `${JSON.stringify([key, empty ? null : attrs])}\n`, { mode: 0o600 });
    } catch (err) {
      this.onError(err);
    }
  }

  /** Writes everything kept as the new snapshot and starts an empty log. */
  private compact(): void {
    try {
      const tmp = `${this.file}.tmp`;
      writeFileSync(tmp, JSON.stringify(Object.fromEntries(this.kept)), { mode: 0o600 });
      renameSync(tmp, this.file);
      writeFileSync(this.log, "", { mode: 0o600 });
    } catch (err) {
      this.onError(err);
    }
  }
}

// A small JSON document kept in a file: read once, rewritten whole (temp file, fsync, rename) at
// each change, so what a client was told is kept survives a kill -9 or a restart.
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from "node:fs";
import { dirname } from "node:path";

/** The document in `file` (none: in memory only, `empty`). */
export function readJson<T>(file: string | undefined, empty: T): T {
  if (file === undefined) return empty;
  try {
    return JSON.parse(readFileSync(file, "utf8")) as T;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return empty;
    throw new Error(`${file} cannot be read as JSON: ${(err as Error).message}`);
  }
}

export function writeJson(file: string | undefined, value: unknown): void {
  if (file === undefined) return;
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.tmp`;
  const fd = openSync(tmp, "w", 0o600);
  try {
    writeSync(fd, JSON.stringify(value));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
}

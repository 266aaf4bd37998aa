// Where a mount keeps its journal, local-only files and caches, and which port `--serve` listens on.
// Both must outlive a restart: a journal in a cache dir the next start does not look in is a lost
// save (a mount keyed by a random `--serve` port found 0 of 100 notes after a kill -9), and the
// TXTFS_URL it printed must stay valid for the scripts that use it.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { type CacheOwner, readCacheOwner } from "../lib/cacheDirs.ts";
import { journalDir, readJournal } from "../lib/journalFiles.ts";

/**
 * The cache dir of a mount: keyed by the service's identity — its data dir with `--serve` (never
 * its port), its URL otherwise — and the mountpoint (two mounts never share a journal).
 */
export function mountCacheDir(
  root: string,
  service: { serveData?: string; url: string },
  mountpoint: string,
): string {
  const identity = service.serveData
    ? `serve:${resolve(service.serveData)}`
    : service.url.replace(/\/+$/, "");
  return join(
    root,
    createHash("sha256")
      .update(`${identity}\n${resolve(mountpoint)}`)
      .digest("hex")
      .slice(0, 16),
  );
}

const portFile = (data: string) => join(data, "serve.port");

/** The port `--serve` listened on last time for this data dir (0: none yet, pick one). */
export function rememberedPort(data: string): number {
  try {
    const port = Number(readFileSync(portFile(data), "utf8").trim());
    return Number.isInteger(port) && port > 0 && port < 65536 ? port : 0;
  } catch {
    return 0;
  }
}

export function rememberPort(data: string, port: number): void {
  writeFileSync(portFile(data), `${port}\n`, { mode: 0o600 });
}

export function keyHash(key: string): string {
  return createHash("sha256").update(`txtfs-cache-owner\n${key}`).digest("hex");
}

/** Whether a cache dir's journal holds saves, or a bulk request whose answer is still to be applied. */
function hasPendingSaves(dir: string): boolean {
  const journal = readJournal(dir);
  return journal.saves.length > 0 || journal.inflight;
}

/**
 * Moves the journal of an orphaned cache dir into `dir`: one of the same owner (same key, same
 * mountpoint) with saves still waiting, that no running mount uses. Only when `dir` has none of its
 * own (two journals are not merged). Returns the dir it was taken from.
 */
export function adoptOrphanedJournal(
  root: string,
  dir: string,
  owner: CacheOwner,
  inUse: ReadonlySet<string>,
): string | undefined {
  if (hasPendingSaves(dir)) return undefined;
  let siblings: string[];
  try {
    siblings = readdirSync(root);
  } catch {
    return undefined;
  }
  for (const name of siblings) {
    const other = join(root, name);
    if (resolve(other) === resolve(dir) || inUse.has(resolve(other))) continue;
    const theirs = readCacheOwner(other);
    if (theirs?.keyHash !== owner.keyHash || theirs.mountpoint !== owner.mountpoint) continue;
    if (!hasPendingSaves(other)) continue;
    rmSync(journalDir(dir), { recursive: true, force: true });
    renameSync(journalDir(other), journalDir(dir));
    return other;
  }
  return undefined;
}

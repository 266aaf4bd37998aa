// Where a mount keeps its journal, local-only files and caches, and which port `--serve` listens on.
// Both must outlive a restart: a journal in a cache dir the next start does not look in is a lost
// save (a mount keyed by a random `--serve` port found 0 of 100 notes after a kill -9), and the
// TXTFS_URL it printed must stay valid for the scripts that use it.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

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

/**
 * Who a cache dir's saves belong to: a hash of the API key they are sent with (never the key),
 * and the mountpoint. Written into every cache dir, so a journal left in one that the next start
 * does not look in (the service moved to another URL or port) can be found again.
 */
export interface CacheOwner {
  keyHash: string;
  mountpoint: string;
}

const ownerFile = (dir: string) => join(dir, "owner.json");

export function keyHash(key: string): string {
  return createHash("sha256").update(`txtfs-cache-owner\n${key}`).digest("hex");
}

export function recordCacheOwner(dir: string, owner: CacheOwner): void {
  writeFileSync(ownerFile(dir), `${JSON.stringify(owner)}\n`, { mode: 0o600 });
}

function readCacheOwner(dir: string): CacheOwner | undefined {
  try {
    const owner = JSON.parse(readFileSync(ownerFile(dir), "utf8")) as Partial<CacheOwner>;
    return typeof owner.keyHash === "string" && typeof owner.mountpoint === "string"
      ? (owner as CacheOwner)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether a cache dir's journal holds saves (its log is empty once everything was delivered). Read
 * from the files of src/vfs/delivery/journal.ts (`journal/log`, `bulk.inflight`, older `*.json`)
 * rather than through it: the CLI loads no vfs code before it mounts (test/cli/startup.test.ts).
 */
function hasPendingSaves(dir: string): boolean {
  try {
    const journal = join(dir, "journal");
    if (statSync(join(journal, "log")).size > 0) return true;
  } catch {}
  try {
    return readdirSync(join(dir, "journal")).some((n) => n.endsWith(".json") || n === "bulk.inflight");
  } catch {
    return false;
  }
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
    rmSync(join(dir, "journal"), { recursive: true, force: true });
    renameSync(join(other, "journal"), join(dir, "journal"));
    return other;
  }
  return undefined;
}

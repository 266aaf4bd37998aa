// The cache dirs mounts used, so the saves a journal still holds are found with nothing mounted:
// each mount records its cache dir in the config dir when it starts (~/.config/txtfs/caches/,
// one file per cache dir, so mounts starting together never rewrite each other's), and each
// cache dir says whose it is (owner.json). `txtfs status` and `txtfs sync` read both, as git
// status finds the commits not pushed yet, wherever `--cache-dir` put the journal.
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { MountKind } from "./mountRegistry.ts";
import { configDir } from "./paths.ts";

/**
 * Who a cache dir's saves belong to: a hash of the API key they are sent with (never the key),
 * and the mountpoint. Written into every cache dir, so a journal left in one that the next start
 * does not look in (the service moved to another URL or port) can be found again.
 */
export interface CacheOwner {
  keyHash: string;
  /** A mount's directory, or the URL a `txtfs dav` served (`http://127.0.0.1:PORT/`). */
  mountpoint: string;
  /** Absent: a mount. */
  kind?: MountKind;
}

const ownerFile = (dir: string) => join(dir, "owner.json");

export function recordCacheOwner(dir: string, owner: CacheOwner): void {
  writeFileSync(ownerFile(dir), `${JSON.stringify(owner)}\n`, { mode: 0o600 });
}

export function readCacheOwner(dir: string): CacheOwner | undefined {
  try {
    const owner = JSON.parse(readFileSync(ownerFile(dir), "utf8")) as Partial<CacheOwner>;
    return typeof owner.keyHash === "string" && typeof owner.mountpoint === "string"
      ? (owner as CacheOwner)
      : undefined;
  } catch {
    return undefined;
  }
}

/** A cache dir as a mount (or a `txtfs dav`) recorded it when it started. */
export interface KnownCacheDir {
  cacheDir: string;
  /** A mount's directory, or the URL a `txtfs dav` served. */
  mountpoint?: string;
  /** Absent: a mount (or a dir no daemon recorded). */
  kind?: MountKind;
  /** The service its saves go to (absent: a dir found in the cache root that no mount recorded). */
  url?: string;
  lastMountedAt?: string;
}

const recordsDir = () => join(configDir(), "caches");
const recordFile = (cacheDir: string) =>
  join(recordsDir(), `${createHash("sha256").update(resolve(cacheDir)).digest("hex").slice(0, 16)}.json`);

export function rememberCacheDir(dir: {
  cacheDir: string;
  mountpoint: string;
  url: string;
  kind?: MountKind;
}): void {
  const record: KnownCacheDir = {
    ...dir,
    cacheDir: resolve(dir.cacheDir),
    lastMountedAt: new Date().toISOString(),
  };
  mkdirSync(recordsDir(), { recursive: true, mode: 0o700 });
  const file = recordFile(dir.cacheDir);
  writeFileSync(`${file}.tmp`, `${JSON.stringify(record)}\n`, { mode: 0o600 });
  renameSync(`${file}.tmp`, file);
}

const isDir = (path: string) => {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
};

/**
 * Every cache dir a mount recorded (records of dirs since removed are dropped), and every dir of
 * the default cache root holding a journal (one an older txtfs used, that recorded nothing).
 */
export function knownCacheDirs(defaultRoot: string): KnownCacheDir[] {
  const found = new Map<string, KnownCacheDir>();
  let names: string[] = [];
  try {
    names = readdirSync(recordsDir()).filter((n) => n.endsWith(".json"));
  } catch {}
  for (const name of names) {
    const file = join(recordsDir(), name);
    try {
      const rec = JSON.parse(readFileSync(file, "utf8")) as KnownCacheDir;
      if (typeof rec.cacheDir !== "string") continue;
      if (isDir(rec.cacheDir)) found.set(resolve(rec.cacheDir), rec);
      else rmSync(file, { force: true });
    } catch {} // being replaced right now (its .tmp is renamed over it), or not ours
  }
  let inRoot: string[] = [];
  try {
    inRoot = readdirSync(defaultRoot);
  } catch {}
  for (const name of inRoot) {
    const dir = resolve(defaultRoot, name);
    if (found.has(dir) || !isDir(join(dir, "journal"))) continue;
    const owner = readCacheOwner(dir);
    found.set(dir, {
      cacheDir: dir,
      mountpoint: owner?.mountpoint,
      ...(owner?.kind ? { kind: owner.kind } : {}),
    });
  }
  return [...found.values()];
}

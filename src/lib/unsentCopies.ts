// Saves the service refused for good whose bytes the mount kept in a local file (`NAME.unsent`):
// recorded in the cache dir (unsent.json), so `txtfs status`, `sync` and `unmount` keep saying what
// happened and where the bytes are for as long as that copy is there — across unmounts and
// restarts, mounted or not — not only once. It goes once the copy is moved or deleted.
import { readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface UnsentCopy {
  /** The note whose save was refused (a path in the mount). */
  path: string;
  /** The service's reason. */
  reason: string;
  /** The local file holding its bytes (a path in the mount). */
  keptAs: string;
  at: string;
}

const file = (cacheDir: string) => join(cacheDir, "unsent.json");

export function readUnsentCopies(cacheDir: string): UnsentCopy[] {
  try {
    const list = JSON.parse(readFileSync(file(cacheDir), "utf8")) as unknown;
    return Array.isArray(list)
      ? list.filter((c): c is UnsentCopy => typeof c?.keptAs === "string" && typeof c?.path === "string")
      : [];
  } catch {
    return [];
  }
}

export function writeUnsentCopies(cacheDir: string, copies: readonly UnsentCopy[]): void {
  if (copies.length === 0) {
    rmSync(file(cacheDir), { force: true });
    return;
  }
  writeFileSync(`${file(cacheDir)}.tmp`, `${JSON.stringify(copies, null, 2)}\n`, { mode: 0o600 });
  renameSync(`${file(cacheDir)}.tmp`, file(cacheDir));
}

/**
 * The copies still kept: those known before and the refusals since (`refused`, those with bytes),
 * each while its file is still among the mount's local-only files (`localPaths`).
 */
export function stillKept(
  known: readonly UnsentCopy[],
  refused: readonly { path: string; reason: string; keptAs?: string; at: string }[],
  localPaths: ReadonlySet<string>,
): UnsentCopy[] {
  const byFile = new Map<string, UnsentCopy>();
  for (const c of [...known, ...refused])
    if (c.keptAs && localPaths.has(c.keptAs))
      byFile.set(c.keptAs, { path: c.path, reason: c.reason, keptAs: c.keptAs, at: c.at });
  return [...byFile.values()];
}

// What the service refused for good, recorded in the cache dir so the CLI can still tell it when
// the daemon that saw it is gone:
// - saves whose bytes the mount kept in a local file (`NAME.unsent`): `txtfs status`, `sync` and
//   `unmount` keep saying what happened and where the bytes are for as long as that copy is there
//   (unsent.json), mounted or not, across restarts; it goes once the copy is moved or deleted;
// - refusals that kept nothing (a rename, a delete) that no `txtfs sync` had reported when the
//   daemon stopped (refused.json): the unmount, or else the next sync, reports them once.
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

export const readUnsentCopies = (cacheDir: string): UnsentCopy[] =>
  readList<UnsentCopy>(file(cacheDir), (c) => typeof c.keptAs === "string" && typeof c.path === "string");

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

/** A refusal that kept no bytes: what was refused and why. */
export interface Refusal {
  path: string;
  reason: string;
  at: string;
}

const refusedFile = (cacheDir: string) => join(cacheDir, "refused.json");

function readList<T>(path: string, valid: (x: T) => boolean): T[] {
  try {
    const list = JSON.parse(readFileSync(path, "utf8")) as unknown;
    return Array.isArray(list) ? (list as T[]).filter((x) => x && valid(x)) : [];
  } catch {
    return [];
  }
}

export const readUnreportedRefusals = (cacheDir: string): Refusal[] =>
  readList<Refusal>(refusedFile(cacheDir), (r) => typeof r.path === "string" && typeof r.reason === "string");

/** Adds refusals no sync reported before the daemon stopped (the newest 100 are kept). */
export function addUnreportedRefusals(cacheDir: string, refusals: readonly Refusal[]): void {
  if (refusals.length === 0) return;
  const all = [...readUnreportedRefusals(cacheDir), ...refusals].slice(-100);
  writeFileSync(`${refusedFile(cacheDir)}.tmp`, `${JSON.stringify(all, null, 2)}\n`, { mode: 0o600 });
  renameSync(`${refusedFile(cacheDir)}.tmp`, refusedFile(cacheDir));
}

/** The refusals to report, taken: each is reported once. */
export function takeUnreportedRefusals(cacheDir: string): Refusal[] {
  const list = readUnreportedRefusals(cacheDir);
  if (list.length) rmSync(refusedFile(cacheDir), { force: true });
  return list;
}

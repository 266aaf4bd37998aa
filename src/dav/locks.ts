// WebDAV write locks (RFC 4918 section 6-7): exclusive or shared, depth 0 or infinity, with a
// timeout; kept by a keeper (a file, or the store) so a restart, or another server on the same
// database, keeps every lock a client was granted.
import { randomUUID } from "node:crypto";
import { readJson, writeJson } from "./jsonState.ts";
import { isWithin, parentOf } from "./paths.ts";

export interface Lock {
  token: string;
  /** The locked resource (its root, for depth infinity). */
  path: string;
  scope: "exclusive" | "shared";
  depth: "0" | "infinity";
  /** The <D:owner> element's XML as the client sent it ("" for none). */
  owner: string;
  /** Seconds asked for; the lock ends `timeoutS` after it was granted or last refreshed. */
  timeoutS: number;
  expiresAt: number;
}

/** The longest a lock lasts without a refresh, whatever a client asks ("Infinite" included). */
export const MAX_LOCK_SECONDS = 7 * 24 * 3600;

/** What one request changed of the locks: written by its keeper once the method has answered. */
export interface LockChanges {
  /** Granted or refreshed. */
  put: Lock[];
  /** Released, or gone with their resource. */
  drop: string[];
  /** Of `put`, the new grants: the keeper refuses them (LockConflict) if a conflicting lock was granted meanwhile. */
  granted: Lock[];
}

/** Where a site's locks are kept (a file; the store, shared by every server on one database). */
export interface LockKeeper {
  /** The live locks now. */
  load(now: number): Promise<Lock[]>;
  save(changes: LockChanges, now: number): Promise<void>;
}

/** A grant that lost to a conflicting lock granted elsewhere (another server) meanwhile. */
export class LockConflict extends Error {}

/** The locks a new lock on `path` with this depth would conflict with (none: it may be granted). */
export function conflictsIn(
  locks: readonly Lock[],
  path: string,
  depth: Lock["depth"],
  scope: Lock["scope"],
) {
  const overlapping = locks.filter(
    (l) =>
      l.path === path ||
      (l.depth === "infinity" && isWithin(path, l.path)) ||
      (depth === "infinity" && isWithin(l.path, path)),
  );
  return scope === "exclusive" ? overlapping : overlapping.filter((l) => l.scope === "exclusive");
}

/** The locks as one request sees them (loaded by its keeper when it began), and what it changed. */
export class Locks {
  private locks: Lock[];
  private readonly now: () => number;
  private readonly put = new Map<string, Lock>();
  private readonly drop = new Set<string>();
  private readonly granted = new Set<string>();

  constructor(locks: Lock[], now: () => number = Date.now) {
    this.now = now;
    this.locks = locks;
  }

  /** What this request changed (empty: nothing to write). */
  changes(): LockChanges | undefined {
    if (!this.put.size && !this.drop.size) return undefined;
    const put = [...this.put.values()];
    return { put, drop: [...this.drop], granted: put.filter((l) => this.granted.has(l.token)) };
  }

  private live(): Lock[] {
    const t = this.now();
    this.locks = this.locks.filter((l) => l.expiresAt > t);
    return this.locks;
  }

  /** The locks that cover `path`: on it, or depth infinity on a collection above it. */
  covering(path: string): Lock[] {
    return this.live().filter((l) => l.path === path || (l.depth === "infinity" && isWithin(path, l.path)));
  }

  /** Locks on `path` or anywhere below it (what a DELETE or MOVE of a collection must hold). */
  within(path: string): Lock[] {
    return this.live().filter((l) => isWithin(l.path, path));
  }

  /** The locks a change of `path`'s membership in its parent must hold: the parent's own. */
  onParent(path: string): Lock[] {
    const parent = parentOf(path);
    return path === "/" ? [] : this.live().filter((l) => l.path === parent && l.depth === "0");
  }

  byToken(token: string): Lock | undefined {
    return this.live().find((l) => l.token === token);
  }

  /** The locks a new lock on `path` with this depth would conflict with (none: it may be granted). */
  conflicts(path: string, depth: Lock["depth"], scope: Lock["scope"]): Lock[] {
    return conflictsIn(this.live(), path, depth, scope);
  }

  grant(lock: Omit<Lock, "token" | "expiresAt">): Lock {
    const made: Lock = {
      ...lock,
      token: `opaquelocktoken:${randomUUID()}`,
      expiresAt: this.now() + lock.timeoutS * 1000,
    };
    this.locks.push(made);
    this.put.set(made.token, made);
    this.granted.add(made.token);
    return made;
  }

  refresh(lock: Lock, timeoutS: number): Lock {
    lock.timeoutS = timeoutS;
    lock.expiresAt = this.now() + timeoutS * 1000;
    this.put.set(lock.token, lock);
    return lock;
  }

  release(token: string): void {
    this.locks = this.locks.filter((l) => l.token !== token);
    this.forget(token);
  }

  /** The resource (and what is below it) is gone: so are the locks rooted there. */
  dropWithin(path: string): void {
    for (const l of this.locks.filter((l) => isWithin(l.path, path))) this.forget(l.token);
    this.locks = this.locks.filter((l) => !isWithin(l.path, path));
  }

  private forget(token: string): void {
    this.put.delete(token);
    this.granted.delete(token);
    this.drop.add(token);
  }
}

/** Locks kept in a JSON file (`txtfs dav`, and `txtfs serve` without a store of its own): one process owns it. */
export class FileLockKeeper implements LockKeeper {
  private locks: Lock[];
  private readonly file: string | undefined;

  /** `file` undefined: in memory only. */
  constructor(file: string | undefined) {
    this.file = file;
    this.locks = readJson<Lock[]>(file, []);
  }

  async load(now: number): Promise<Lock[]> {
    return this.locks.filter((l) => l.expiresAt > now).map((l) => ({ ...l }));
  }

  async save(changes: LockChanges, now: number): Promise<void> {
    const live = this.locks.filter((l) => l.expiresAt > now && !changes.drop.includes(l.token));
    for (const g of changes.granted)
      if (conflictsIn(live, g.path, g.depth, g.scope).some((l) => l.token !== g.token))
        throw new LockConflict(`${g.path} was locked meanwhile`);
    const put = new Set(changes.put.map((l) => l.token));
    this.locks = [...live.filter((l) => !put.has(l.token)), ...changes.put];
    writeJson(this.file, this.locks);
  }
}

/** A Timeout header ("Second-600", "Infinite", a list of them) as seconds, bounded. */
export function timeoutSeconds(header: string | undefined): number {
  for (const part of (header ?? "").split(",")) {
    const t = part.trim();
    if (/^infinite$/i.test(t)) return MAX_LOCK_SECONDS;
    const m = /^second-(\d+)$/i.exec(t);
    if (m) return Math.max(1, Math.min(MAX_LOCK_SECONDS, Number(m[1])));
  }
  return 3600;
}

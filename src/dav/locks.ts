// WebDAV write locks (RFC 4918 section 6-7): exclusive or shared, depth 0 or infinity, with a
// timeout; kept in a file so a restart keeps every lock a client was granted.
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

export class Locks {
  private locks: Lock[];

  /** Where they are kept; undefined: in memory only. */
  private readonly file: string | undefined;
  private readonly now: () => number;

  constructor(file: string | undefined, now: () => number = Date.now) {
    this.file = file;
    this.now = now;
    this.locks = readJson<Lock[]>(file, []);
  }

  private live(): Lock[] {
    const t = this.now();
    const before = this.locks.length;
    this.locks = this.locks.filter((l) => l.expiresAt > t);
    if (this.locks.length !== before) this.save();
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
    const overlapping = this.live().filter(
      (l) =>
        l.path === path ||
        (l.depth === "infinity" && isWithin(path, l.path)) ||
        (depth === "infinity" && isWithin(l.path, path)),
    );
    return scope === "exclusive" ? overlapping : overlapping.filter((l) => l.scope === "exclusive");
  }

  grant(lock: Omit<Lock, "token" | "expiresAt">): Lock {
    const made: Lock = {
      ...lock,
      token: `opaquelocktoken:${randomUUID()}`,
      expiresAt: this.now() + lock.timeoutS * 1000,
    };
    this.locks.push(made);
    this.save();
    return made;
  }

  refresh(lock: Lock, timeoutS: number): Lock {
    lock.timeoutS = timeoutS;
    lock.expiresAt = this.now() + timeoutS * 1000;
    this.save();
    return lock;
  }

  release(token: string): void {
    this.locks = this.locks.filter((l) => l.token !== token);
    this.save();
  }

  /** The resource (and what is below it) is gone: so are the locks rooted there. */
  dropWithin(path: string): void {
    const before = this.locks.length;
    this.locks = this.locks.filter((l) => !isWithin(l.path, path));
    if (this.locks.length !== before) this.save();
  }

  private save(): void {
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

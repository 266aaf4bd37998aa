// The checks before a change, in this order: the If: header's conditions (412 when no list holds),
// then the locks the change must hold (423 Locked when a token is missing from If).
import type { DavEntry } from "./backend.ts";
import { DavError } from "./errors.ts";
import { type IfList, ifHolds, parseIf, submittedTokens } from "./ifHeader.ts";
import type { Lock } from "./locks.ts";
import { pathOf } from "./paths.ts";
import { type DavRequest, header } from "./request.ts";

export function ifLists(req: DavRequest): IfList[] | undefined {
  const h = header(req, "if");
  return h === undefined ? undefined : parseIf(h);
}

/** The tokens of the locks this request submitted (in its If header). */
export function tokensOf(req: DavRequest): Set<string> {
  const lists = ifLists(req);
  return lists ? submittedTokens(lists) : new Set();
}

/**
 * 423 unless the request holds, for each locked resource the change touches (`locks`), the token of
 * one of its locks: several locks on one resource are shared ones, and each holder may write.
 */
export function mustHold(req: DavRequest, locks: Lock[]): void {
  if (!locks.length) return;
  const held = tokensOf(req);
  const byResource = new Map<string, Lock[]>();
  for (const l of locks) byResource.set(l.path, [...(byResource.get(l.path) ?? []), l]);
  for (const [path, on] of byResource)
    if (!on.some((l) => held.has(l.token)))
      throw new DavError(423, `${path} is locked`, "lock-token-submitted");
}

/** The locks a change of `path` (its bytes, properties, or its being made or removed) touches. */
export function locksOnChange(req: DavRequest, path: string, subtree: boolean): Lock[] {
  const { locks } = req.site;
  const on = subtree ? [...locks.covering(path), ...locks.within(path)] : locks.covering(path);
  return [...new Set([...on, ...locks.onParent(path)])];
}

/** 412 when the request has an If header and none of its lists holds. */
export async function checkIf(req: DavRequest): Promise<void> {
  const lists = ifLists(req);
  if (!lists) return;
  const { site } = req;
  const holds = await ifHolds(lists, async (resource) => {
    let path = req.path;
    if (resource !== undefined) {
      try {
        path = pathOf(new URL(resource, "http://x").pathname, req.prefix);
      } catch {
        return undefined;
      }
    }
    const entry = await site.backend.stat(path);
    return {
      tokens: new Set(site.locks.covering(path).map((l) => l.token)),
      etag: entry && !entry.collection ? entry.etag : undefined,
    };
  });
  if (!holds) throw new DavError(412, "no list of the If header holds");
}

/** If-Match / If-None-Match on the request's resource (RFC 9110 section 13). */
export function checkMatch(
  req: DavRequest,
  entry: DavEntry | undefined,
  reading: boolean,
): Answer304 | undefined {
  const etag = entry && !entry.collection ? entry.etag : undefined;
  const ifMatch = header(req, "if-match");
  if (ifMatch !== undefined) {
    const ok = ifMatch.trim() === "*" ? entry !== undefined : listed(ifMatch, etag);
    if (!ok) throw new DavError(412, "If-Match does not hold");
  }
  const ifNoneMatch = header(req, "if-none-match");
  if (ifNoneMatch !== undefined) {
    const matched = ifNoneMatch.trim() === "*" ? entry !== undefined : listed(ifNoneMatch, etag);
    if (matched) {
      if (reading) return { notModified: true };
      throw new DavError(412, "If-None-Match does not hold");
    }
  }
  return undefined;
}

export interface Answer304 {
  notModified: true;
}

function listed(list: string, etag: string | undefined): boolean {
  if (etag === undefined) return false;
  const bare = etag.replace(/^W\//, "");
  return list.split(",").some((t) => t.trim().replace(/^W\//, "") === bare);
}

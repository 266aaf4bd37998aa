// The If: header (RFC 4918 section 10.4): lists of conditions on lock tokens and ETags, each list
// for the request's resource or for the one its tag names. True when any list holds.
import { DavError } from "./errors.ts";

export interface Condition {
  not: boolean;
  /** A state token (a lock token, or e.g. DAV:no-lock that no resource has). */
  token?: string;
  /** An entity tag, with its quotes. */
  etag?: string;
}

export interface IfList {
  /** The URL the list is tagged with; undefined: the request's resource. */
  resource?: string;
  conditions: Condition[];
}

/** Parses an If header; 400 when it is not one. */
export function parseIf(header: string): IfList[] {
  const lists: IfList[] = [];
  let i = 0;
  let tag: string | undefined;
  const bad = (why: string) => new DavError(400, `the If header cannot be read (${why}): ${header}`);
  const skip = () => {
    while (i < header.length && /\s/.test(header[i]!)) i++;
  };
  const until = (end: string) => {
    const j = header.indexOf(end, i);
    if (j < 0) throw bad(`no closing ${end}`);
    const text = header.slice(i, j);
    i = j + 1;
    return text;
  };
  skip();
  while (i < header.length) {
    const c = header[i];
    if (c === "<") {
      i++;
      tag = until(">");
    } else if (c === "(") {
      i++;
      const conditions: Condition[] = [];
      for (;;) {
        skip();
        if (header[i] === ")") {
          i++;
          break;
        }
        let not = false;
        if (/^not\b/i.test(header.slice(i, i + 4))) {
          not = true;
          i += 3;
          skip();
        }
        if (header[i] === "<") {
          i++;
          conditions.push({ not, token: until(">") });
        } else if (header[i] === "[") {
          i++;
          conditions.push({ not, etag: until("]").trim() });
        } else throw bad("a condition is neither <token> nor [etag]");
      }
      if (!conditions.length) throw bad("an empty list");
      lists.push({ resource: tag, conditions });
    } else throw bad(`unexpected ${JSON.stringify(c)}`);
    skip();
  }
  if (!lists.length) throw bad("no list");
  return lists;
}

/** Every lock token the header names without Not: the locks the request has submitted. */
export function submittedTokens(lists: IfList[]): Set<string> {
  const out = new Set<string>();
  for (const l of lists) for (const c of l.conditions) if (c.token && !c.not) out.add(c.token);
  return out;
}

/** What a list's conditions are checked against: a resource's lock tokens and ETag. */
export interface ResourceState {
  tokens: Set<string>;
  etag?: string;
}

/** Whether any list holds; `stateOf` is given a list's resource (undefined: the request's). */
export async function ifHolds(
  lists: IfList[],
  stateOf: (resource: string | undefined) => Promise<ResourceState | undefined>,
): Promise<boolean> {
  for (const list of lists) {
    const state = await stateOf(list.resource);
    if (!state) continue;
    const holds = list.conditions.every((c) => {
      const met = c.token !== undefined ? state.tokens.has(c.token) : sameEtag(c.etag!, state.etag);
      return c.not ? !met : met;
    });
    if (holds) return true;
  }
  return false;
}

function sameEtag(asked: string, current: string | undefined): boolean {
  return current !== undefined && asked.replace(/^W\//, "") === current.replace(/^W\//, "");
}

// LOCK and UNLOCK (RFC 4918 sections 9.10, 9.11): a new lock (exclusive or shared, depth 0 or
// infinity), a refresh (no body, the lock's token in If), and a lock on an unmapped URL, which
// makes an empty file there (201).
import { checkIf, ifLists, locksOnChange, mustHold } from "../conditions.ts";
import { DavError } from "../errors.ts";
import { submittedTokens } from "../ifHeader.ts";
import { lockXml } from "../liveProps.ts";
import { type Lock, timeoutSeconds } from "../locks.ts";
import { type Answer, type DavRequest, header, xmlAnswer } from "../request.ts";
import { DAV_NS, davChild, elements, parseXml, serialize, XML_HEAD } from "../xml.ts";
import { parentMustBeCollection } from "./write.ts";

function discovery(lock: Lock, prefix: string): string {
  return `${XML_HEAD}<D:prop xmlns:D="DAV:"><D:lockdiscovery>${lockXml(lock, prefix)}</D:lockdiscovery></D:prop>`;
}

export async function lock(req: DavRequest): Promise<Answer> {
  const { site } = req;
  const root = parseXml(req.body);
  const timeoutS = timeoutSeconds(header(req, "timeout"));
  if (!root) return refresh(req, timeoutS);
  if (root.namespaceURI !== DAV_NS || root.localName !== "lockinfo")
    throw new DavError(400, "the LOCK body is not a <D:lockinfo>");
  const scopeEl = davChild(root, "lockscope");
  const scope = scopeEl && elements(scopeEl)[0]?.localName;
  if (scope !== "exclusive" && scope !== "shared")
    throw new DavError(400, "<D:lockscope> is neither exclusive nor shared");
  const typeEl = davChild(root, "locktype");
  if (!typeEl || elements(typeEl)[0]?.localName !== "write")
    throw new DavError(400, "only write locks exist");
  const ownerEl = davChild(root, "owner");
  const depthHeader = (header(req, "depth") ?? "infinity").toLowerCase();
  if (depthHeader !== "0" && depthHeader !== "infinity")
    throw new DavError(400, "LOCK is depth 0 or infinity");
  const depth = depthHeader === "0" ? "0" : "infinity";
  const entry = await site.backend.stat(req.path);
  if (!entry) await parentMustBeCollection(req, req.path);
  const conflicts = site.locks.conflicts(req.path, entry?.collection ? depth : "0", scope);
  if (conflicts.length)
    throw new DavError(423, `${conflicts[0]!.path} is already locked`, "no-conflicting-lock");
  await checkIf(req);
  if (!entry) {
    mustHold(req, locksOnChange(req, req.path, false));
    await site.backend.write(req.path, Buffer.alloc(0));
  }
  const granted = site.locks.grant({
    path: req.path,
    scope,
    depth: entry?.collection ? depth : "0",
    owner: ownerEl ? serialize(ownerEl) : "",
    timeoutS,
  });
  return xmlAnswer(entry ? 200 : 201, discovery(granted, req.prefix), { "Lock-Token": `<${granted.token}>` });
}

async function refresh(req: DavRequest, timeoutS: number): Promise<Answer> {
  const lists = ifLists(req);
  if (!lists) throw new DavError(400, "a LOCK without a body refreshes a lock: its token goes in If");
  const covering = req.site.locks.covering(req.path);
  const held = submittedTokens(lists);
  const lock = covering.find((l) => held.has(l.token));
  if (!lock)
    throw new DavError(412, "no lock of this resource is named in If", "lock-token-matches-request-uri");
  await checkIf(req);
  const refreshed = req.site.locks.refresh(lock, timeoutS);
  return xmlAnswer(200, discovery(refreshed, req.prefix), { "Lock-Token": `<${refreshed.token}>` });
}

export async function unlock(req: DavRequest): Promise<Answer> {
  const raw = header(req, "lock-token")?.trim();
  if (!raw) throw new DavError(400, "UNLOCK needs a Lock-Token header");
  const token = raw.replace(/^<|>$/g, "");
  const lock = req.site.locks.byToken(token);
  if (!lock || !req.site.locks.covering(req.path).includes(lock))
    throw new DavError(409, "that lock does not cover this resource", "lock-token-matches-request-uri");
  req.site.locks.release(token);
  return { status: 204 };
}

// PROPPATCH (RFC 4918 section 9.2): every set and remove in order, all or none: a protected
// property refused (403) fails the others (424) and nothing is changed.

import type { Element } from "@xmldom/xmldom";
import { checkIf, locksOnChange, mustHold } from "../conditions.ts";
import { DavError } from "../errors.ts";
import { PROTECTED } from "../liveProps.ts";
import { hrefOf } from "../paths.ts";
import { type Answer, type DavRequest, xmlAnswer } from "../request.ts";
import {
  clark,
  DAV_NS,
  davChild,
  elements,
  esc,
  parseXml,
  propElement,
  serialize,
  XML_HEAD,
} from "../xml.ts";
import { propstat } from "./propfind.ts";

export async function proppatch(req: DavRequest): Promise<Answer> {
  const { site } = req;
  const entry = await site.backend.stat(req.path);
  if (!entry) throw new DavError(404);
  await checkIf(req);
  mustHold(req, locksOnChange(req, req.path, false));
  const root = parseXml(req.body);
  if (!root || root.namespaceURI !== DAV_NS || root.localName !== "propertyupdate")
    throw new DavError(400, "the PROPPATCH body is not a <D:propertyupdate>");
  // In document order: a later instruction on the same property wins.
  const changes = new Map<string, Element | undefined>();
  for (const step of elements(root)) {
    if (step.namespaceURI !== DAV_NS || (step.localName !== "set" && step.localName !== "remove")) continue;
    const prop = davChild(step, "prop");
    for (const el of prop ? elements(prop) : []) {
      const name = clark(el);
      changes.delete(name);
      changes.set(name, step.localName === "set" ? el : undefined);
    }
  }
  const own = site.backend.ownPropertyNames(entry.collection);
  const refused = [...changes.keys()].filter(
    (n) => PROTECTED.has(n) || (own.all.includes(n) && !own.writable.includes(n)),
  );
  const names = [...changes.keys()];
  let results: [string, number][];
  if (refused.length) {
    results = names.map((n) => [n, refused.includes(n) ? 403 : 424]);
  } else {
    const dead = new Map<string, string | undefined>();
    for (const [name, el] of changes) {
      if (own.writable.includes(name))
        await site.backend.setOwnProperty(
          req.path,
          name,
          el === undefined ? undefined : (el.textContent ?? ""),
        );
      else dead.set(name, el && serialize(el));
    }
    if (dead.size) await site.props.change(req.path, dead);
    results = names.map((n) => [n, 200]);
  }
  const byStatus = new Map<number, string[]>();
  for (const [name, status] of results)
    byStatus.set(status, [...(byStatus.get(status) ?? []), propElement(name)]);
  const stats = [...byStatus].map(([status, props]) => propstat(props.join(""), status)).join("");
  const href = esc(hrefOf(req.path, req.prefix, entry.collection));
  return xmlAnswer(
    207,
    `${XML_HEAD}<D:multistatus xmlns:D="DAV:"><D:response><D:href>${href}</D:href>${stats}</D:response></D:multistatus>`,
  );
}

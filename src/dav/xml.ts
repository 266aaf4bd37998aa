// XML in and out: request bodies parsed by a namespace-aware DOM parser (@xmldom/xmldom), answers
// written as text with every value escaped. Properties are named in Clark notation, "{ns}local".
import { DOMParser, type Element, type Node, XMLSerializer } from "@xmldom/xmldom";
import { DavError } from "./errors.ts";

export const DAV_NS = "DAV:";
/** The namespace of txtfs's own properties (context, tags, connections, id). */
export const TXTFS_NS = "urn:txtfs:";

const ELEMENT_NODE = 1;

/** The body's root element, or undefined for an empty body; malformed XML is a 400. */
export function parseXml(body: Buffer): Element | undefined {
  const text = body.toString("utf8");
  if (!text.trim()) return undefined;
  let failed: string | undefined;
  let root: Element | null = null;
  try {
    const doc = new DOMParser({
      onError: (level, message) => {
        if (level !== "warning") failed ??= message;
      },
    }).parseFromString(text, "application/xml");
    root = doc.documentElement;
  } catch (err) {
    failed = (err as Error).message; // fatal errors are thrown, not reported
  }
  if (failed || !root)
    throw new DavError(400, `the request body is not well-formed XML${failed ? `: ${failed}` : ""}`);
  return root;
}

export function clark(el: Element): string {
  return `{${el.namespaceURI ?? ""}}${el.localName}`;
}

export function splitClark(name: string): { ns: string; local: string } {
  const end = name.indexOf("}");
  return { ns: name.slice(1, end), local: name.slice(end + 1) };
}

/** The element children of `el` (text and comments skipped). */
export function elements(el: Element): Element[] {
  const out: Element[] = [];
  for (let n: Node | null = el.firstChild; n; n = n.nextSibling)
    if (n.nodeType === ELEMENT_NODE) out.push(n as Element);
  return out;
}

/** The first child element of `el` named {DAV:}local. */
export function davChild(el: Element, local: string): Element | undefined {
  return elements(el).find((c) => c.namespaceURI === DAV_NS && c.localName === local);
}

/** An element as XML text with the namespace declarations it needs, to be stored and given back. */
export function serialize(el: Element): string {
  return new XMLSerializer().serializeToString(el);
}

export function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** An empty or text element for a property name, declaring its own namespace. */
export function propElement(name: string, text?: string): string {
  const { ns, local } = splitClark(name);
  if (ns === DAV_NS) return text === undefined ? `<D:${local}/>` : `<D:${local}>${text}</D:${local}>`;
  const decl = ns ? ` xmlns:x="${esc(ns)}"` : ` xmlns=""`;
  const tag = ns ? `x:${local}` : local;
  return text === undefined ? `<${tag}${decl}/>` : `<${tag}${decl}>${text}</${tag}>`;
}

export const XML_HEAD = '<?xml version="1.0" encoding="utf-8"?>\n';

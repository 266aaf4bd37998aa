// Plain-text reference pages for agents, generated from the OpenAPI document (so they follow the
// routes) plus the prose of prose.ts: /llms.txt (index), /reference/<page>.txt, /llms-full.txt.
import { LIMITS } from "../domain/limits.ts";
import { API_DESCRIPTION_VERSION, countApi, describeCounts } from "../openapi/counts.ts";
import { PAGES } from "./prose.ts";
import { refName, refsOf, shape } from "./shapes.ts";

// biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document, walked generically
type Json = Record<string, any>;

interface Operation {
  method: string;
  path: string;
  op: Json;
}

const METHODS = ["get", "post", "put", "patch", "delete"];

function operations(doc: Json): Operation[] {
  return Object.entries<Json>(doc.paths).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((m) => ({ method: m.toUpperCase(), path, op: item[m] })),
  );
}

const twinKey = (o: Operation) => `${o.method} ${o.path.replace(/^\/api\/me(?=\/|$)/, "/api/v1")}`;
const successOf = (o: Operation) =>
  JSON.stringify(Object.entries(o.op.responses ?? {}).filter(([s]) => /^2/.test(s)));
/** A /api/me operation that is the same as a /api/v1 one (same path shape, same success bodies). */
const isTwin = (me: Operation, v1: Operation) =>
  me.path.startsWith("/api/me") &&
  twinKey(me) === `${v1.method} ${v1.path}` &&
  successOf(me) === successOf(v1);

function jsonSchemaOf(content: Json | undefined): Json | undefined {
  return content?.["application/json"]?.schema;
}

function exampleValue(s: Json | undefined, doc: Json, depth = 0): unknown {
  if (!s || depth > 3) return "...";
  const name = refName(s);
  if (name) return exampleValue(doc.components.schemas[name], doc, depth + 1);
  if (s.anyOf) return exampleValue(s.anyOf[0], doc, depth);
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  if (s.const !== undefined) return s.const;
  if (type === "string") return s.format === "date-time" ? "2026-01-01T00:00:00Z" : "text";
  if (type === "integer" || type === "number") return 1;
  if (type === "boolean") return true;
  if (type === "array") return [];
  if (type === "object") {
    const required: string[] = s.required ?? [];
    return Object.fromEntries(required.map((k) => [k, exampleValue(s.properties?.[k], doc, depth + 1)]));
  }
  return null;
}

function curl(o: Operation, doc: Json): string {
  const path = o.path.replace(/\{(\w+)\}/g, (_, p) => `$${p.toUpperCase()}`);
  const lines = [`curl -sS -X ${o.method} "$TXTFS_URL${path}"`];
  const open = Array.isArray(o.op.security) && o.op.security.length === 0;
  const session = o.op.security?.[0]?.sessionCookie;
  if (session) lines.push(`  -b "session=$TXTFS_SESSION" -H "X-CSRF-Token: $CSRF"`);
  else if (!open) lines.push('  -H "Authorization: Bearer $TXTFS_API_KEY"');
  const body = o.op.requestBody?.content;
  if (body?.["application/json"]) {
    lines.push('  -H "Content-Type: application/json"');
    lines.push(`  -d '${JSON.stringify(exampleValue(body["application/json"].schema, doc))}'`);
  } else if (body?.["text/plain"] || body?.["text/markdown"]) {
    lines.push('  -H "Content-Type: text/markdown" --data-binary @note.md');
  }
  return lines.join(" \\\n");
}

function params(o: Operation): string[] {
  return (o.op.parameters ?? []).map(
    (p: Json) =>
      `${p.in} ${p.name}${p.required ? "" : "?"}: ${shape(p.schema)}${p.description ? ` — ${p.description}` : ""}`,
  );
}

function scopeLine(o: Operation): string {
  const sec: Json[] = o.op.security ?? [];
  if (sec.length === 0) return "none (public)";
  if (sec[0]?.sessionCookie) return "browser session cookie (key page) + X-CSRF-Token on changes";
  const key = sec.find((s) => s.apiKey)?.apiKey ?? [];
  const oauth = sec.find((s) => s.oauth2)?.oauth2 ?? [];
  return `${key.length ? `key scope ${key.join(", ")}` : "any valid key"}; OAuth ${oauth.length ? oauth.join(", ") : "any token"}`;
}

function renderOperation(o: Operation, twin: Operation | undefined, doc: Json): string {
  const name = o.op["x-verb"] ?? o.op.operationId;
  const out = [`### ${name} — ${o.method} ${o.path}`, o.op.summary ?? ""];
  out.push(`operationId: ${o.op.operationId}`);
  if (twin) out.push(`Also: ${twin.method} ${twin.path} (operationId ${twin.op.operationId}), same shapes.`);
  out.push(`Auth: ${scopeLine(o)}`);
  const ps = params(o);
  if (ps.length) out.push("Parameters:", ...ps.map((p) => `  ${p}`));
  const body = o.op.requestBody?.content;
  if (body) {
    const json = jsonSchemaOf(body);
    out.push(
      json ? `Request body (JSON): ${shape(json)}` : `Request body: ${Object.keys(body).join(" or ")}`,
    );
  }
  const responses = Object.entries<Json>(o.op.responses ?? {});
  for (const [status, r] of responses.filter(([s]) => /^[23]/.test(s))) {
    const json = jsonSchemaOf(r.content);
    const what = json ? shape(json) : r.content ? Object.keys(r.content).join(" or ") : "no body";
    out.push(`${status}: ${what}`);
  }
  const errors = responses.filter(([s]) => /^[45]/.test(s)).map(([s]) => s);
  if (errors.length) out.push(`Errors (Error body): ${errors.join(", ")}`);
  out.push("Example:", curl(o, doc));
  return out.join("\n");
}

function renderRecords(names: Set<string>, doc: Json): string {
  const done = new Set<string>();
  const queue = [...names];
  const out: string[] = [];
  while (queue.length) {
    const name = queue.shift()!;
    if (done.has(name) || !doc.components.schemas[name]) continue;
    done.add(name);
    const s = doc.components.schemas[name];
    out.push(`${name}${s.description ? ` — ${s.description}` : ""}\n${shape(s)}`);
    for (const n of refsOf(s)) if (!done.has(n)) queue.push(n);
  }
  return out.join("\n\n");
}

const limitsText = () =>
  [
    `context: ${LIMITS.contextChars} chars; tags: ${LIMITS.tags} per item, ${LIMITS.tagChars} chars each`,
    `connection reason: ${LIMITS.reasonChars} chars; plan source: ${LIMITS.planSourceChars} chars`,
    `names: 1-${LIMITS.nameBytes} bytes UTF-8; file content: ${LIMITS.contentBytes} bytes`,
    `page size (list, changes): default ${LIMITS.pageDefault}, max ${LIMITS.pageMax}`,
    `import: ${LIMITS.importFiles} files; batch: ${LIMITS.batchOps} operations; sync push: ${LIMITS.syncPush}`,
  ].join("\n");

export interface ReferencePage {
  slug: string;
  title: string;
  text: string;
}

/** Every reference page, generated from the document. */
export function referencePages(doc: Json): ReferencePage[] {
  const ops = operations(doc);
  const byKey = new Map(ops.map((o) => [`${o.method} ${o.path}`, o]));
  return Object.entries(PAGES).map(([slug, page]) => {
    const mine = ops.filter((o) => page.areas.includes(o.op.tags?.[0]));
    // A /api/me operation with a /api/v1 twin is mentioned under the twin, not repeated.
    const shown = mine.filter((o) => {
      const v1 = byKey.get(twinKey(o));
      return !(v1 && v1 !== o && isTwin(o, v1));
    });
    const sections = shown.map((o) => {
      const twin = o.path.startsWith("/api/v1") ? mine.find((m) => m !== o && isTwin(m, o)) : undefined;
      return renderOperation(o, twin, doc);
    });
    const refs = new Set<string>();
    for (const o of shown) refsOf({ r: o.op.responses, b: o.op.requestBody }, refs);
    refs.delete("Error");
    const parts = [
      `# txtfs reference: ${page.title}`,
      page.intro,
      "Base URL: $TXTFS_URL (e.g. http://127.0.0.1:8080). Shapes are TypeScript-like; `?` = optional; responses may carry extra fields (additive).",
    ];
    if (slug === "errors") {
      const statuses = new Map<string, string>();
      for (const o of ops) {
        for (const [s, r] of Object.entries<Json>(o.op.responses ?? {})) {
          if (/^[45]/.test(s) && !statuses.has(s)) statuses.set(s, r.description);
        }
      }
      parts.push(
        `## Error body\n${shape(doc.components.schemas.Error)}`,
        `## Statuses\n${[...statuses]
          .sort()
          .map(([s, d]) => `${s}: ${d}`)
          .join("\n")}\n304: not modified (If-None-Match), no body.`,
        `## Limits\n${limitsText()}`,
        `## Example\ncurl -sS "$TXTFS_URL/api/v1/files/nope" -H "Authorization: Bearer $TXTFS_API_KEY"\n# 404 {"error":{"code":"not_found","message":"...","resolution":"...","requestId":"req_..."}}`,
      );
    }
    parts.push(`## Operations\n\n${sections.join("\n\n")}`);
    if (refs.size) parts.push(`## Records\n\n${renderRecords(refs, doc)}`);
    return { slug, title: page.title, text: `${parts.join("\n\n")}\n` };
  });
}

/** /llms.txt: what this is and where each page is (the llms.txt convention). */
export function llmsIndex(doc: Json, pages: ReferencePage[]): string {
  const lines = [
    "# txtfs",
    "",
    "> Remote Text Filesystem Service: plain-text and Markdown notes as files in folders, with context, tags, connections, sharing, comments, suggestions, versions, a change feed and sync. API v1 (beta). Use it as agent memory: read workspace context, write notes, connect them.",
    "",
    "Authenticate with `Authorization: Bearer <API key>` (mint one at /keys) or an OAuth access token. Errors are `{error:{code,message,resolution,requestId}}`.",
    "",
    "## Reference (plain text)",
    "",
    ...pages.map((p) => `- [${p.title}](/reference/${p.slug}.txt): ${PAGES[p.slug]!.blurb}`),
    "- [Everything in one file](/llms-full.txt)",
    "",
    "## Machine-readable and tools",
    "",
    `- [OpenAPI 3.1](/openapi.json): ${describeCounts(countApi(doc as { paths: Record<string, object> }))}; description ${API_DESCRIPTION_VERSION}`,
    "- [Discover](/api/v1): verbs, scopes and limits as JSON",
    "- [TypeScript client](/client/txtfs.js): one ESM file, no dependencies",
    "- [Playground](/docs): try every operation in the browser",
    "- MCP server: /mcp (Streamable HTTP; OAuth scope mcp:use or an API key), or `txtfs mcp` over stdio",
  ];
  return `${lines.join("\n")}\n`;
}

export function llmsFull(doc: Json, pages: ReferencePage[]): string {
  return [llmsIndex(doc, pages), ...pages.map((p) => p.text)].join("\n---\n\n");
}

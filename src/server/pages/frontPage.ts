// The front page (/): what this server is and where everything is.
import { API_DESCRIPTION_VERSION, type ApiCounts, describeCounts } from "../openapi/counts.ts";
import { ICON_LINKS } from "./favicon.ts";

const esc = (s: string) => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);

export function renderFrontPage(opts: { version: string; counts: ApiCounts; signIn: boolean }): string {
  const links: [string, string, string][] = [
    ["/docs", "Playground", "try every operation in the browser (Swagger UI)"],
    ["/llms.txt", "Reference for agents", "plain-text pages, short enough for a model's context"],
    ["/openapi.json", "OpenAPI 3.1", `${describeCounts(opts.counts)}, generated from the routes`],
    ["/client/txtfs.js", "TypeScript client", "one ES module, no dependencies"],
    [
      "/keys",
      "API keys",
      opts.signIn ? "sign in, then mint, rotate and revoke keys" : "mint keys (needs sign-in)",
    ],
    ["/dashboard", "Usage dashboard", "your keys' requests, errors, rate limits and latency per day"],
    ["/api/v1", "Discover", "verbs, scopes and limits as JSON"],
  ];
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">${ICON_LINKS}<title>txtfs</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:44rem;margin:3rem auto;padding:0 1rem;color:#222}
h1{margin-bottom:0}.sub{color:#666;margin-top:.2rem}li{margin:.4rem 0}code{background:#f3f3f3;padding:0 .2rem}</style>
</head><body>
<h1>txtfs</h1>
<p class="sub">Remote Text Filesystem Service · API v1 (beta) · its description ${API_DESCRIPTION_VERSION} · server txtfs ${esc(opts.version)}</p>
<p>Plain-text and Markdown notes as files in folders, with context, tags, connections, sharing,
comments, suggestions, versions, a change feed and sync. Mount them as a drive with
<code>txtfs mount</code>, or use the API with a key: <code>Authorization: Bearer txt_…</code>.
Agents can connect over MCP at <code>/mcp</code>.</p>
<ul>
${links.map(([href, name, what]) => `<li><a href="${href}">${esc(name)}</a> — ${esc(what)}</li>`).join("\n")}
</ul>
</body></html>
`;
}

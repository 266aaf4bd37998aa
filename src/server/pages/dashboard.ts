// The usage dashboard page: per key, a server-side SVG chart of requests per day (errors in red,
// rate-limit hits marked) and a table with errors by status and latency percentiles.
import type { KeyReport } from "../domain/usageReport.ts";
import { ICON_LINKS } from "./favicon.ts";

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const ms = (v: number | null) => (v === null ? "–" : v > 5000 ? "> 5 s" : `≤ ${v} ms`);

export function chartSvg(key: KeyReport): string {
  const w = 560;
  const h = 140;
  const pad = 24;
  const max = Math.max(1, ...key.days.map((d) => d.requests));
  const bw = (w - pad * 2) / key.days.length;
  const bars = key.days
    .map((d, i) => {
      const x = pad + i * bw + 2;
      const total = ((h - pad * 2) * d.requests) / max;
      const err = ((h - pad * 2) * d.errorCount) / max;
      const y = h - pad - total;
      const label = `${d.day}: ${d.requests} requests, ${d.errorCount} errors, ${d.rateLimited} rate-limited`;
      return (
        `<g class="day" data-day="${d.day}" data-requests="${d.requests}"><title>${esc(label)}</title>` +
        `<rect x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${(bw - 4).toFixed(1)}" height="${(total - err).toFixed(1)}" fill="#4a7bd0"/>` +
        `<rect x="${x.toFixed(1)}" y="${(h - pad - err).toFixed(1)}" width="${(bw - 4).toFixed(1)}" height="${err.toFixed(1)}" fill="#d0544a"/>` +
        (d.rateLimited
          ? `<circle cx="${(x + (bw - 4) / 2).toFixed(1)}" cy="${(y - 6).toFixed(1)}" r="3" fill="#e0a020"/>`
          : "") +
        "</g>"
      );
    })
    .join("");
  const first = key.days[0]?.day ?? "";
  const last = key.days.at(-1)?.day ?? "";
  return (
    `<svg class="chart" role="img" aria-label="requests per day for ${esc(key.label)}" viewBox="0 0 ${w} ${h}" width="${w}" height="${h}" xmlns="http://www.w3.org/2000/svg">` +
    `<line x1="${pad}" y1="${h - pad}" x2="${w - pad}" y2="${h - pad}" stroke="#999"/>` +
    `<text x="${pad}" y="14" font-size="11" fill="#555">max ${max}/day</text>` +
    `<text x="${pad}" y="${h - 6}" font-size="11" fill="#555">${first}</text>` +
    `<text x="${w - pad}" y="${h - 6}" font-size="11" fill="#555" text-anchor="end">${last}</text>` +
    `${bars}</svg>`
  );
}

function table(key: KeyReport): string {
  const rows = key.days
    .filter((d) => d.requests > 0)
    .reverse()
    .map(
      (d) =>
        `<tr><td>${d.day}</td><td class="n">${d.requests}</td><td>${
          Object.entries(d.errors)
            .map(([code, n]) => `${code}×${n}`)
            .join(" ") || "–"
        }</td><td class="n">${d.rateLimited}</td><td>${ms(d.p50)}</td><td>${ms(d.p95)}</td><td>${ms(d.p99)}</td></tr>`,
    )
    .join("");
  return `<table><thead><tr><th>Day (UTC)</th><th>Requests</th><th>Errors by status</th><th>Rate-limited</th><th>p50</th><th>p95</th><th>p99</th></tr></thead><tbody>${
    rows || '<tr><td colspan="7">No requests in this period.</td></tr>'
  }</tbody></table>`;
}

export function renderDashboard(opts: { email: string | null; keys: KeyReport[]; days: string[] }): string {
  const body = !opts.email
    ? '<p>Sign in on the <a href="/keys">key page</a> to see your usage (from a shell that holds the service\'s key: <code>txtfs open dashboard</code>).</p>'
    : opts.keys.length === 0
      ? '<p>You have no API keys yet: mint one on the <a href="/keys">key page</a>.</p>'
      : opts.keys
          .map(
            (k) => `<section class="key" data-key="${esc(k.id)}">
<h2>${esc(k.label || "(no label)")} <code>${esc(k.tokenPrefix)}…</code>${k.revoked ? " (revoked)" : ""}</h2>
<p class="totals">${k.total.requests} requests, ${k.total.errors} errors, ${k.total.rateLimited} rate-limited in ${opts.days.length} days</p>
${chartSvg(k)}
${table(k)}
</section>`,
          )
          .join("\n");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">${ICON_LINKS}<title>txtfs usage</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:15px/1.45 system-ui,sans-serif;max-width:48rem;margin:2rem auto;padding:0 1rem;color:#222}
table{border-collapse:collapse;margin:.5rem 0 2rem}td,th{border-bottom:1px solid #ddd;padding:.2rem .6rem;text-align:left}
.n{text-align:right}.totals{color:#555}</style></head><body>
<p><a href="/">txtfs</a> · usage dashboard${opts.email ? ` · ${esc(opts.email)}` : ""} · <a href="/keys">keys</a></p>
<h1>Usage by key</h1>
<p>Blue: requests per day; red: errors; amber dot: rate-limit hits. Counted in memory and saved every few seconds.</p>
${body}
</body></html>
`;
}

// The key page's HTML: plain forms (no script), each change carrying the session's CSRF token.
import type { UserRow } from "../../store/repos/rows.ts";
import { ICON_LINKS } from "../pages/favicon.ts";

type KeyRecord = {
  id: string;
  label: string;
  token_prefix: string;
  created_at: string;
  last_used_at: string | null;
  expires_at: string | null;
  scopes: string[];
  requests_today: number;
  revoked_at?: string | null;
};

export interface KeyPageModel {
  providerName: string | null;
  signedIn: {
    user: UserRow;
    csrf: string;
    keys: KeyRecord[];
    identities: { id: string; provider: string; subject: string; username: string | null; active: boolean }[];
    vault: { name: string; label: string; hint: string; updatedAt: string }[];
    scopes: readonly string[];
    defaultScopes: readonly string[];
  } | null;
  extra?: { newKey?: { key: KeyRecord; secret: string }; rotated?: KeyRecord };
}

const esc = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

const STYLE = `body{font:15px/1.45 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:.3rem;text-align:left;vertical-align:top}
code{background:#f3f3f3;padding:.1rem .3rem}.secret{font-size:1.1rem;padding:.5rem;border:2px solid #2a7;display:block;margin:.5rem 0}
form.inline{display:inline}fieldset{margin:1rem 0}`;

function layout(body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
${ICON_LINKS}<title>txtfs API keys</title><style>${STYLE}</style></head><body><h1>txtfs API keys</h1>${body}</body></html>`;
}

function keyStatus(k: KeyRecord): string {
  if (k.revoked_at) return "revoked";
  if (k.expires_at && k.expires_at <= new Date().toISOString()) return "expired";
  return "active";
}

export function renderKeyPage(m: KeyPageModel): string {
  if (!m.signedIn) {
    return layout(
      m.providerName
        ? `<p>Sign in once with your identity provider to mint API keys.</p><p><a id="sign-in" href="/auth/login">Sign in with ${esc(m.providerName)}</a></p>`
        : "<p>This server has no identity provider configured. From a shell that holds its key (the one <code>txtfs mount --serve</code> or <code>txtfs serve</code> printed), <code>txtfs open keys</code> opens this page signed in; or mint keys with <code>txtfs admin key add</code>.</p>",
    );
  }
  const s = m.signedIn;
  const csrf = `<input type="hidden" name="_csrf" value="${esc(s.csrf)}">`;
  const parts: string[] = [];
  parts.push(
    `<p>Signed in as <strong id="who">${esc(s.user.email)}</strong>. <form class="inline" method="post" action="/auth/logout">${csrf}<button id="sign-out">Sign out</button></form></p>`,
  );
  if (m.extra?.newKey) {
    parts.push(
      `<section id="new-key-box"><h2>Your new key</h2><p>Copy it now: it is shown only this once.</p><code class="secret" id="new-key">${esc(m.extra.newKey.secret)}</code>` +
        (m.extra.rotated
          ? `<p id="rotated">The old key ${esc(m.extra.rotated.token_prefix)}… ${m.extra.rotated.revoked_at ? "stopped working" : `keeps working until ${esc(m.extra.rotated.expires_at ?? "")}`}.</p>`
          : "") +
        "</section>",
    );
  }
  const rows = s.keys
    .map((k) => {
      const status = keyStatus(k);
      const actions =
        status === "active"
          ? `<form class="inline" method="post" action="/keys/${esc(k.id)}/rotate">${csrf}<select name="grace" aria-label="old key keeps working"><option value="0">stop old key now</option><option value="3600">old key works 1 h</option><option value="86400" selected>old key works 24 h</option></select> <button class="rotate">Rotate</button></form>
<form class="inline" method="post" action="/keys/${esc(k.id)}/revoke">${csrf}<button class="revoke">Revoke</button></form>`
          : "";
      return `<tr data-key-id="${esc(k.id)}" data-prefix="${esc(k.token_prefix)}"><td><code>${esc(k.token_prefix)}…</code></td><td>${esc(k.label)}</td><td>${esc(k.scopes.join(", "))}</td><td>${esc(k.expires_at ?? "never")}</td><td>${esc(k.last_used_at ?? "never")}</td><td class="requests">${k.requests_today}</td><td class="status">${status}</td><td>${actions}</td></tr>`;
    })
    .join("\n");
  parts.push(
    `<h2>Keys</h2><table id="keys"><thead><tr><th>Prefix</th><th>Label</th><th>Scopes</th><th>Expires</th><th>Last use</th><th>Requests today</th><th>Status</th><th></th></tr></thead><tbody>${rows || '<tr><td colspan="8">No keys yet.</td></tr>'}</tbody></table>`,
  );
  const scopeBoxes = s.scopes
    .map(
      (sc) =>
        `<label><input type="checkbox" name="scopes" value="${esc(sc)}"${s.defaultScopes.includes(sc) ? " checked" : ""}> ${esc(sc)}</label>`,
    )
    .join(" ");
  parts.push(
    `<form method="post" action="/keys" id="mint"><fieldset><legend>Mint a key</legend>${csrf}
<label>Label <input name="label" id="label" maxlength="100"></label>
<p>${scopeBoxes}</p>
<label>Expires <select name="expires" id="expires"><option value="30d">in 30 days</option><option value="90d" selected>in 90 days</option><option value="365d">in a year</option><option value="never">never</option></select></label>
<button id="mint-key">Mint key</button></fieldset></form>`,
  );
  const ai = s.vault.find((v) => v.name === "ai-key");
  parts.push(
    `<h2>Vaulted credentials</h2><p>Your own AI provider key, stored encrypted; it is never shown again.</p>` +
      (ai
        ? `<p id="ai-key">AI key ${esc(ai.label ? `(${ai.label}) ` : "")}<code>${esc(ai.hint)}</code>, saved ${esc(ai.updatedAt)} <form class="inline" method="post" action="/keys/vault/ai-key/delete">${csrf}<button id="ai-key-delete">Remove</button></form></p>`
        : '<p id="ai-key">No AI key saved.</p>') +
      `<form method="post" action="/keys/vault/ai-key" id="vault">${csrf}<label>Provider <input name="label" id="ai-label" maxlength="64"></label> <label>Key <input name="secret" id="ai-secret" type="password" autocomplete="off" required></label> <label>Server (optional, OpenAI-compatible) <input name="baseUrl" id="ai-base-url" type="url" maxlength="512" placeholder="https://api.openai.com/v1"></label> <label>Model (optional) <input name="model" id="ai-model" maxlength="128"></label> <button id="ai-key-save">Save AI key</button></form>`,
  );
  const ids = s.identities
    .map((i) => `<li>${esc(i.provider)}: ${esc(i.username ?? i.subject)}${i.active ? " (active)" : ""}</li>`)
    .join("");
  parts.push(
    `<h2>Linked identities</h2><ul id="identities">${ids}</ul><p><a id="link-identity" href="/auth/login?link=1">Link another identity</a></p>`,
  );
  return layout(parts.join("\n"));
}

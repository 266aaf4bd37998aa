// A fingerprint of everything an account holds, read through the API: its files (each ETag covers
// content and metadata) with their bodies, folders, the change-feed head (every published change
// moves it), shares, devices, webhooks, and the comments, suggestions and versions of the files.
// Equal before and after a refused request means that request changed nothing.
import { createHash } from "node:crypto";
import type { Api } from "./server.ts";

async function json(api: Api, path: string): Promise<unknown> {
  const res = await api.get(path);
  if (res.status !== 200) throw new Error(`fingerprint: GET ${path} answered ${res.status} ${res.text}`);
  return res.body;
}

/** Fields that move on reads (last use, last sight) and would make the fingerprint flaky. */
function stable(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stable);
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value).sort(([a], [b]) => a.localeCompare(b))) {
      if (/^(lastSeenAt|last_seen_at|lastUsedAt|last_used_at)$/.test(k)) continue;
      out[k] = stable(v);
    }
    return out;
  }
  return value;
}

export async function accountFingerprint(api: Api): Promise<string> {
  const index = (await json(api, "/api/me/files")) as { files: { id: string }[] };
  const parts: unknown[] = [index];
  for (const file of index.files) {
    parts.push((await api.get(`/api/v1/files/${file.id}/raw`)).text);
    parts.push(await json(api, `/api/v1/files/${file.id}/versions?limit=1000`));
    parts.push(await json(api, `/api/v1/files/${file.id}/comments`));
    parts.push(await json(api, `/api/v1/files/${file.id}/suggestions`));
    parts.push(await json(api, `/api/v1/files/${file.id}/connections`));
    parts.push(await json(api, `/api/v1/files/${file.id}/plan`));
  }
  parts.push(await json(api, "/api/v1/shares"));
  parts.push(await json(api, "/api/v1/devices"));
  // A webhook's delivery bookkeeping moves on its own (attempts to unreachable URLs): only what
  // a request sets counts.
  const { webhooks } = (await json(api, "/api/v1/webhooks")) as { webhooks: Record<string, unknown>[] };
  parts.push(webhooks.map(({ id, url, events, description }) => ({ id, url, events, description })));
  parts.push(await json(api, "/api/v1/theme"));
  return createHash("sha256")
    .update(JSON.stringify(stable(parts)))
    .digest("hex");
}

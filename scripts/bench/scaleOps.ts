// The operations bench:scale measures, on a store its fill made (scale.ts, scaleCompare.ts): each
// one request of the first account (or of the reader a deep folder of it is shared with), run once
// per sampled note. Shared by the sequential run and the side-by-side comparison of two stores.
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Account, topicWord, vocabulary } from "./scaleData.ts";

const log = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);

export async function call(
  url: string,
  key: string,
  method: string,
  path: string,
  body?: unknown,
  headers = {},
) {
  const res = await fetch(url + path, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body ? { "content-type": "application/json" } : {}),
      ...headers,
    },
    body: body ? JSON.stringify(body) : undefined,
  });
  if (res.status === 304) return { status: 304, body: undefined, etag: res.headers.get("etag") ?? "" };
  // The search index still catching up (after a fill or an upgrade): wait as a client would.
  if (res.status === 503 && res.headers.get("retry-after")) {
    log(`${method} ${path}: 503, retrying after ${res.headers.get("retry-after")} s`);
    await new Promise((r) => setTimeout(r, Number(res.headers.get("retry-after")) * 1000));
    return call(url, key, method, path, body, headers);
  }
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${(await res.text()).slice(0, 300)}`);
  // biome-ignore lint/suspicious/noExplicitAny: the service's JSON, read field by field
  return { status: res.status, body: (await res.json()) as any, etag: res.headers.get("etag") ?? "" };
}

/** What a kept data dir remembers between runs: the accounts and the notes made so far. */
export interface State {
  accounts: Account[];
  /** Notes made per account so far, in order (all of account 0's: the samples come from them). */
  made: number[];
  sample: string[];
  total: number;
}

export interface Operation {
  name: string;
  run: (id: string, k: number) => Promise<unknown>;
}

/** How many topics' rare words the owner's notes hold at a size (40 notes a topic, at most 40). */
export const topicsAt = (state: State) => Math.max(1, Math.min(40, Math.floor(state.made[0]! / 40)));

/**
 * Reads what the operations need from the store behind `urls` (requests alternate between them)
 * and returns them with the sampled notes. `topics`: the rare words to search for (those of the
 * smallest store measured, so every size searches the same words).
 */
export async function operations(o: {
  urls: string[];
  data: string;
  state: State;
  samples: number;
  size: number;
  topics: number;
}): Promise<{ sample: string[]; ops: Operation[] }> {
  const { urls, data, state, samples, size, topics } = o;
  const url = urls[0]!;
  const owner = state.accounts[0]!;
  const reader = state.accounts.at(-1)!;
  // The owner's second note is in f1/sub1/deep1: that folder is shared with the reader, whose
  // read of the note checks the share through it.
  const inShared = state.sample[1]!;
  if (!existsSync(join(data, "bench-scale-shared"))) {
    const folderId = (await call(url, owner.key, "GET", `/api/v1/files/${inShared}`)).body.folderId;
    await call(url, owner.key, "POST", `/api/v1/folders/${folderId}/share`, {
      email: reader.email,
      role: "reader",
    });
    writeFileSync(join(data, "bench-scale-shared"), folderId);
  }
  const sample = Array.from({ length: samples }, (_, k) => state.sample[k * 2]!);
  // 200 of the owner's notes (cycled when it has fewer), apart from the sampled ones.
  const syncTargets = Array.from({ length: 200 }, (_, i) => state.sample[(60 + i) % state.sample.length]!);
  // Edits keep each note's text and add a line, so its words (the rare-word search's) stay.
  const etags = new Map<string, string>();
  const texts = new Map<string, string>();
  for (const id of new Set([...sample, ...syncTargets])) {
    const r = await call(url, owner.key, "GET", `/api/v1/files/${id}`);
    etags.set(id, r.etag);
    texts.set(id, r.body.content);
  }
  // Rare words of the owner's topics (40 notes each) that its notes hold at the smallest size.
  const rareWord = (k: number) => topicWord(k % topics, 3);
  let deepCursor: string | undefined;
  {
    // A cursor half-way through the owner's listing, found by pages of 1,000 (at most 50).
    let cursor: string | undefined;
    const pages = Math.min(50, Math.floor(state.made[0]! / 2000));
    for (let p = 0; p < pages; p++) {
      const page = (
        await call(url, owner.key, "GET", `/api/v1/files?limit=1000${cursor ? `&cursor=${cursor}` : ""}`)
      ).body;
      cursor = page.nextCursor ?? cursor;
    }
    deepCursor = cursor;
  }
  const created: string[] = [];
  let server = 0;
  const any = () => urls[server++ % urls.length]!; // with two servers, requests alternate
  const ops: Operation[] = [
    {
      name: "listing page, first (100)",
      run: () => call(any(), owner.key, "GET", "/api/v1/files?limit=100"),
    },
    {
      name: "listing page, deep cursor",
      run: () =>
        call(any(), owner.key, "GET", `/api/v1/files?limit=100${deepCursor ? `&cursor=${deepCursor}` : ""}`),
    },
    { name: "GET /api/me", run: () => call(any(), owner.key, "GET", "/api/me") },
    { name: "read", run: (id) => call(any(), owner.key, "GET", `/api/v1/files/${id}`) },
    {
      name: "304",
      run: async (id) => {
        const r = await call(any(), owner.key, "GET", `/api/v1/files/${id}`, undefined, {
          "if-none-match": etags.get(id),
        });
        if (r.status !== 304) throw new Error(`304 expected, got ${r.status}`);
      },
    },
    {
      name: "PUT",
      run: (id, k) =>
        call(any(), owner.key, "PUT", `/api/v1/files/${id}`, {
          content: `${texts.get(id)}\nedited ${size} ${k}`,
        }),
    },
    {
      name: "create",
      run: async (_id, k) =>
        created.push(
          (
            await call(any(), owner.key, "POST", "/api/v1/files", {
              name: `made-${size}-${k}-${Date.now()}.md`,
              content: `made ${k}`,
            })
          ).body.file.id,
        ),
    },
    {
      name: "rename",
      run: (_id, k) =>
        call(any(), owner.key, "PUT", `/api/v1/files/${created[k]}`, {
          name: `renamed-${size}-${k}-${Date.now()}.md`,
        }),
    },
    { name: "delete", run: (_id, k) => call(any(), owner.key, "DELETE", `/api/v1/files/${created[k]}`) },
    {
      name: "changes, old cursor",
      run: () => call(any(), owner.key, "GET", "/api/v1/changes?cursor=0&limit=100"),
    },
    {
      name: "changes, fresh cursor",
      run: () => call(any(), owner.key, "GET", "/api/v1/changes?cursor=latest&limit=100"),
    },
    {
      name: "search, a rare word",
      run: async (_id, k) => {
        const r = await call(any(), owner.key, "GET", `/api/v1/search?q=${rareWord(k)}`);
        if (r.body.results.length === 0) throw new Error(`no note holds ${rareWord(k)}`);
      },
    },
    {
      name: "search, two common words",
      run: () => call(any(), owner.key, "GET", `/api/v1/search?q=${vocabulary[0]}%20${vocabulary[1]}`),
    },
    {
      name: "related notes",
      run: (id) => call(any(), owner.key, "GET", `/api/v1/files/${id}/connections`),
    },
    {
      name: "share check (reader, deep folder)",
      run: () => call(any(), reader.key, "GET", `/api/v1/files/${inShared}`),
    },
    {
      name: "sync, 200 pushes",
      run: (_id, k) =>
        call(any(), owner.key, "POST", "/api/v1/sync", {
          cursor: "latest",
          limit: 1,
          push: syncTargets.map((target, i) => ({
            id: `s${i}`,
            op: "file.update",
            target,
            body: { content: `${texts.get(target)}\nsynced ${size} ${k} ${i}` },
          })),
        }),
    },
  ];
  return { sample, ops };
}

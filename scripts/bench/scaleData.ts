// The notes bench:scale fills a store with, and the accounts they belong to: deterministic (every
// run, and every commit compared, builds the same notes), realistic in shape: 0.5-8 KB of words
// from one vocabulary and their topic's, 120 folders 3 deep, 1-4 tags of 200 of varying popularity.
import { join } from "node:path";

// A deterministic generator.
let seed = 42;
const rand = () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
  return seed / 2_147_483_648;
};
export const vocabulary = Array.from(
  { length: 5000 },
  (_, i) => `w${i.toString(36)}x${(i * 7919).toString(36)}`,
);
// Zipf-like: low indexes are common, as words and tags are in real notes.
const zipf = (n: number) => Math.min(n - 1, Math.floor(n ** rand()) - 1 + Math.floor(rand() * 2));

/** A topic's rare word: each run of 40 notes of an account shares 12 of them. */
export const topicWord = (topic: number, k: number) => `t${topic.toString(36)}k${k}`;

/** The `k`-th note of an account (its path is unique within the account). */
export function note(k: number): { path: string; content: string; tags: string[] } {
  const bytes = 500 + Math.floor(rand() * 7500);
  const topic = Math.floor(k / 40);
  const words: string[] = [];
  for (let len = 0; len < bytes; ) {
    const w =
      rand() < 0.05 ? topicWord(topic, Math.floor(rand() * 12)) : vocabulary[zipf(vocabulary.length)]!;
    words.push(w);
    len += w.length + 1;
  }
  const tags = [...new Set(Array.from({ length: 1 + Math.floor(rand() * 4) }, () => `tag${zipf(200)}`))];
  return { path: `f${k % 10}/sub${k % 4}/deep${k % 3}/n${k}.md`, content: words.join(" "), tags };
}

export interface Account {
  id: string;
  email: string;
  key: string;
}

/**
 * Creates `count` accounts with a key each, through the measured checkout's own domain code (its
 * schema, its migrations) on the store its server will open, before that server starts.
 */
export async function createAccounts(
  txtfsRoot: string,
  store: { dataDir: string; db?: string },
  first: number,
  count: number,
): Promise<Account[]> {
  const { openStore } = await import(join(txtfsRoot, "src/store/open.ts"));
  const { createKey, createUser } = await import(join(txtfsRoot, "src/server/domain/accounts.ts"));
  const opened = await openStore(store);
  try {
    const out: Account[] = [];
    // In transactions of 500: one commit per account would cost 10,000 fsyncs.
    for (let start = first; start < first + count; start += 500) {
      const made = await opened.transaction(async (tx: unknown) => {
        const rows: Account[] = [];
        for (let a = start; a < Math.min(first + count, start + 500); a++) {
          const email = `scale${a}@localhost`;
          const user = await createUser(tx, email, `Scale ${a}`);
          const { secret } = await createKey(tx, user.id, { label: "bench" });
          rows.push({ id: user.id, email, key: secret });
        }
        return rows;
      });
      out.push(...made);
    }
    return out;
  } finally {
    await opened.close();
  }
}

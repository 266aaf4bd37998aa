// Backing up a PostgreSQL store the way docs/operations.md says: pg_dump --format=custom while
// writers run, pg_restore into an empty database, and a server on the copy carries on.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { createDatabase, dropDatabase, pgBinDir } from "../helpers/pgCluster.ts";
import { Api, startTestServer } from "../helpers/server.ts";
import { testPgUrl } from "../helpers/storeUnderTest.ts";

const dir = mkdtempSync(join(tmpdir(), "txtfs-pgbackup-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it("pg_dump while writers run, pg_restore into a new database: every acknowledged write is there", async () => {
  const bin = pgBinDir()!;
  const source = await createDatabase(testPgUrl()!);
  const target = await createDatabase(testPgUrl()!);
  const t = await startTestServer({ db: source });
  try {
    const alice = await t.user("alice@example.com");
    const acked: { id: string; content: string; at: number }[] = [];
    let writing = true;
    const writer = async (w: number) => {
      for (let i = 0; writing; i++) {
        const content = `writer ${w} note ${i}`;
        const res = await alice.api.post("/api/v1/files", { name: `w${w}-${i}.md`, content });
        if (res.status !== 201) throw new Error(`write failed: ${res.status} ${res.text}`);
        acked.push({ id: res.body.file.id, content, at: Date.now() });
      }
    };
    const writers = [0, 1].map(writer);
    await new Promise((r) => setTimeout(r, 300));
    const { cursor } = (await alice.api.get("/api/v1/changes?cursor=latest")).body;
    const atCursor = acked.length;
    await new Promise((r) => setTimeout(r, 200)); // the writers go on past the cursor
    const dumpStarted = Date.now();
    const dump = join(dir, "txtfs.dump");
    execFileSync(join(bin, "pg_dump"), ["--format=custom", "--no-owner", `--file=${dump}`, source]);
    writing = false;
    await Promise.all(writers);
    execFileSync(join(bin, "pg_restore"), ["--no-owner", "--exit-on-error", `--dbname=${target}`, dump]);

    const copy = await startTestServer({ db: target });
    try {
      expect((await copy.client().get("/readyz")).status).toBe(200);
      const api = new Api(copy.url, alice.key); // the same key: key hashes are in the dump
      const before = acked.filter((a) => a.at < dumpStarted);
      expect(before.length).toBeGreaterThan(0);
      for (const a of before) expect((await api.get(`/api/v1/files/${a.id}`)).body.content).toBe(a.content);
      // The feed continues from where a client was: positions survived the copy.
      const changes = (await api.get(`/api/v1/changes?cursor=${cursor}&limit=1000`)).body;
      const sinceCursor = acked.filter((a, i) => i >= atCursor && a.at < dumpStarted).length;
      expect(sinceCursor).toBeGreaterThan(0);
      expect(changes.changes.length).toBeGreaterThanOrEqual(sinceCursor);
      const created = await api.post("/api/v1/files", { name: "after-restore.md", content: "new" });
      expect(created.status).toBe(201);
    } finally {
      await copy.close();
    }
  } finally {
    await t.close();
    await dropDatabase(source);
    await dropDatabase(target);
  }
}, 60_000);

// `txtfs admin migrate --from sqlite:PATH --to postgres://...`: everything of an embedded store moves
// into PostgreSQL, verified by counts and hashes, and a server on the copy carries on seamlessly.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newId } from "../../src/lib/ids.ts";
import { runTxtfs } from "../helpers/cli.ts";
import { createDatabase, dropDatabase } from "../helpers/pgCluster.ts";
import { mkdir, mkfile, startTestServer, type TestUser } from "../helpers/server.ts";
import { testPgUrl } from "../helpers/storeUnderTest.ts";

const dir = mkdtempSync(join(tmpdir(), "txtfs-migrate-"));
const sqlitePath = join(dir, "txtfs.db");
let db: string;
const before: Record<string, unknown> = {};
let alice: TestUser;
let bob: TestUser;
let sharedId: string;
let cursor: number;
let versionedId: string;
let attachmentId: string;
const ATTACHMENT = Buffer.from([0, 1, 2, 255, 254, 0, 0x80]);
const replay = { name: "idem.md", content: "once" };

beforeAll(async () => {
  db = await createDatabase(testPgUrl()!);
  const t = await startTestServer({ db: `sqlite:${sqlitePath}` });
  try {
    expect(t.server.store.kind).toBe("sqlite");
    alice = await t.user("alice@example.com");
    bob = await t.user("bob@example.com");
    const top = await mkdir(alice, { name: "top", tags: ["t"] });
    const mid = await mkdir(alice, { name: "mid", parentFolderId: top.id });
    const leaf = await mkdir(alice, { name: "leaf", parentFolderId: mid.id, context: "deep" });
    const files: { id: string }[] = [];
    for (const [i, folderId] of [top.id, mid.id, leaf.id, null].entries()) {
      files.push(
        await mkfile(alice, { name: `n${i}.md`, content: `v1 ${i}`, folderId, tags: ["x", `i${i}`] }),
      );
    }
    // versions
    for (let v = 2; v <= 4; v++) {
      const res = await alice.api.put(`/api/v1/files/${files[0]!.id}`, { content: `v${v} ü ✓ 𝄞` });
      expect(res.status).toBe(200);
    }
    await alice.api.post(`/api/v1/files/${files[0]!.id}/connections`, {
      targetFileId: files[1]!.id,
      reason: "r",
    });
    await alice.api.delete(`/api/v1/files/${files[3]!.id}`); // a tombstone in the feed
    const idem = await alice.api.post("/api/v1/files", replay, { "idempotency-key": "k-1" });
    expect(idem.status).toBe(201);
    sharedId = files[2]!.id;
    const now = new Date().toISOString();
    await t.server.store.transaction((tx) =>
      tx.shares.insert({
        id: newId("s"),
        resource_type: "file",
        resource_id: sharedId,
        owner_id: alice.id,
        grantee_id: bob.id,
        grantee_email: bob.email,
        role: "reader",
        status: "active",
        created_by: alice.id,
        created_at: now,
        updated_at: now,
        expires_at: null,
      }),
    );
    await bob.api.post("/api/v1/files", { name: "bobs.txt", content: "b" });
    // An attachment: its bytes (a BLOB) must arrive as the same bytes (bytea).
    const made = await fetch(`${t.url}/api/v1/attachments?name=bin.png`, {
      method: "POST",
      headers: { authorization: `Bearer ${alice.key}` },
      body: ATTACHMENT,
    });
    expect(made.status).toBe(201);
    attachmentId = ((await made.json()) as { attachment: { id: string } }).attachment.id;
    before.aliceFiles = (await alice.api.get("/api/me/files")).body;
    before.aliceFeed = (await alice.api.get("/api/v1/changes?cursor=0&limit=1000")).body;
    before.bobShared = (await bob.api.get(`/api/v1/files/${sharedId}`)).body;
    versionedId = files[0]!.id;
    before.versions = await t.server.store.read((tx) => tx.versions.listForFile(versionedId));
    cursor = (before.aliceFeed as { cursor: number }).cursor;
  } finally {
    await t.close();
  }
});

afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  if (db) await dropDatabase(db);
});

describe("txtfs admin migrate", () => {
  it("copies everything, reports counts and hashes, and a server on the copy carries on", async () => {
    const res = await runTxtfs(["admin", "migrate", "--from", `sqlite:${sqlitePath}`, "--to", db]);
    expect(res.stderr).toMatch(/migrate: files 0\/5\nmigrate: files 5\/5/);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/counts and hashes match/);
    // Counts as reported equal the source's.
    const src = new DatabaseSync(sqlitePath, { readOnly: true });
    const reported = new Map(
      res.stdout
        .split("\n")
        .slice(1)
        .map((l) => l.split("\t"))
        .filter((p) => p.length === 3)
        .map(([table, rows, hash]) => [table!, { rows: Number(rows), hash: hash! }]),
    );
    for (const table of [
      "users",
      "api_keys",
      "folders",
      "files",
      "file_versions",
      "connections",
      "shares",
      "feed",
      "idempotency_keys",
    ]) {
      const n = (src.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
      expect(reported.get(table)?.rows, table).toBe(n);
      expect(reported.get(table)?.hash).toMatch(/^[0-9a-f]{64}$/);
    }
    expect(reported.get("file_versions")!.rows).toBeGreaterThanOrEqual(4);
    src.close();

    const t = await startTestServer({ db });
    try {
      expect(t.server.store.kind).toBe("postgres");
      const a = t.client(alice.key);
      const b = t.client(bob.key);
      // The same keys, listings, ETags and feed positions.
      expect((await a.get("/api/me/files")).body).toEqual(before.aliceFiles);
      expect((await a.get("/api/v1/changes?cursor=0&limit=1000")).body).toEqual(before.aliceFeed);
      expect((await a.get(`/api/v1/changes?cursor=${cursor}`)).body).toEqual({
        changes: [],
        cursor,
        hasMore: false,
      });
      expect((await b.get(`/api/v1/files/${sharedId}`)).body).toEqual(before.bobShared);
      // Every version, with its numbers, hashes and authors.
      const versions = await t.server.store.read((tx) => tx.versions.listForFile(versionedId));
      expect(versions).toEqual(before.versions);
      expect(versions).toHaveLength(4);
      const raw = await fetch(`${t.url}/api/v1/attachments/${attachmentId}/raw`, {
        headers: { authorization: `Bearer ${alice.key}` },
      });
      expect(Buffer.from(await raw.arrayBuffer())).toEqual(ATTACHMENT);
      // The saved Idempotency-Key still replays.
      const again = await a.post("/api/v1/files", replay, { "idempotency-key": "k-1" });
      expect(again.status).toBe(201);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      // New changes continue the account's seq.
      const created = await a.post("/api/v1/files", { name: "after.md" });
      expect(created.body.seq).toBe(cursor + 1);
    } finally {
      await t.close();
    }
  });

  it("refuses a target that already holds data, changing nothing", async () => {
    const res = await runTxtfs(["admin", "migrate", "--from", `sqlite:${sqlitePath}`, "--to", db]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/already has data/);
    const t = await startTestServer({ db });
    try {
      const files = (await t.client(alice.key).get("/api/me/files")).body.files;
      expect(files.map((f: { name: string }) => f.name)).toContain("after.md");
      expect(files).toHaveLength((before.aliceFiles as { files: unknown[] }).files.length + 1);
    } finally {
      await t.close();
    }
  });

  it("rejects a bad source or target", async () => {
    expect((await runTxtfs(["admin", "migrate", "--from", join(dir, "x.db"), "--to", db])).stderr).toMatch(
      /--from must be sqlite:PATH/,
    );
    expect(
      (await runTxtfs(["admin", "migrate", "--from", `sqlite:${join(dir, "none.db")}`, "--to", db])).stderr,
    ).toMatch(/no embedded store/);
    expect(
      (await runTxtfs(["admin", "migrate", "--from", `sqlite:${sqlitePath}`, "--to", "mysql://x"])).code,
    ).toBe(1);
  });
});

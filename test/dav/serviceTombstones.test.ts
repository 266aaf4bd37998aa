// The tombstones of `/dav/`, kept in the store, are bounded: a PUT continues a deleted note only
// within the window, only for the key that deleted it, once; an account never holds more than
// their count or bytes; expired ones are swept; a delete that rolls back leaves none.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ServiceTombstones } from "../../src/dav/serviceTombstones.ts";
import { createUser } from "../../src/server/domain/accounts.ts";
import type { FileSnapshot } from "../../src/server/domain/fileRevival.ts";
import { SqliteStore } from "../../src/store/sqlite/sqliteStore.ts";

let dir: string;
let store: SqliteStore;
let userId: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "txtfs-dav-tombstones-"));
  store = new SqliteStore(join(dir, "txtfs.db"));
  userId = await store.transaction(async (tx) => (await createUser(tx, "t@example.com")).id);
});
afterAll(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

const snapshot = (name: string, bytes = 10, folderId: string | null = null) =>
  ({
    file: { id: `f_${name}`, owner_id: userId, folder_id: folderId, name },
    versions: [],
    connections: [],
    setTags: undefined,
    bytes,
  }) as unknown as FileSnapshot;

const count = () => store.read(async (tx) => (await tx.davTombstones.sizes(userId)).length);

describe("the tombstones of /dav/", () => {
  it("serve the same key, at the same place, once, within the window; expired ones are swept", async () => {
    let now = 1_000_000;
    const t = new ServiceTombstones({ ttlMs: 1000, count: 10, bytes: 1000 }, () => now);
    const take = (principal: string, folderId: string | null, name: string) =>
      store.transaction((tx) => t.take(tx, principal, userId, folderId, name));
    await store.transaction((tx) => t.remember(tx, userId, "k_1", snapshot("a.md")));
    expect(await take("k_2", null, "a.md")).toBeUndefined();
    expect(await take("k_1", "d_1", "a.md")).toBeUndefined();
    expect((await take("k_1", null, "a.md"))?.file.id).toBe("f_a.md");
    expect(await take("k_1", null, "a.md")).toBeUndefined();
    await store.transaction((tx) => t.remember(tx, userId, "k_1", snapshot("b.md")));
    now += 1000;
    expect(await take("k_1", null, "b.md")).toBeUndefined();
    expect(await count()).toBe(0);
    await store.transaction((tx) => t.remember(tx, userId, "k_1", snapshot("c.md")));
    now += 1000;
    // The next delete, by anyone, sweeps what expired.
    await store.transaction((tx) => t.remember(tx, userId, "k_2", snapshot("d.md")));
    expect(await count()).toBe(1);
    expect(
      await store.transaction((tx) => tx.davTombstones.deleteExpired(new Date(now + 1000).toISOString())),
    ).toBe(1);
  });

  it("keep at most their count and bytes per account, the oldest going first", async () => {
    let now = 2_000_000;
    const t = new ServiceTombstones({ ttlMs: 60_000, count: 2, bytes: 100 }, () => now++);
    const remember = (s: FileSnapshot) => store.transaction((tx) => t.remember(tx, userId, "k", s));
    const take = (name: string) => store.transaction((tx) => t.take(tx, "k", userId, null, name));
    await remember(snapshot("1.md"));
    await remember(snapshot("2.md"));
    await remember(snapshot("3.md"));
    expect(await count()).toBe(2);
    expect(await take("1.md")).toBeUndefined();
    await remember(snapshot("big.md", 95));
    expect(await count()).toBe(1);
    await remember(snapshot("huge.md", 101));
    expect(await take("huge.md")).toBeUndefined();
    expect((await take("big.md"))?.file.name).toBe("big.md");
  });

  it("are neither kept by a delete that rolls back nor taken by a revival that rolls back", async () => {
    const t = new ServiceTombstones();
    const failed = store.transaction(async (tx) => {
      await t.remember(tx, userId, "k", snapshot("rolled.md"));
      throw new Error("refused");
    });
    await expect(failed).rejects.toThrow("refused");
    expect(await store.transaction((tx) => t.take(tx, "k", userId, null, "rolled.md"))).toBeUndefined();
    await store.transaction((tx) => t.remember(tx, userId, "k", snapshot("kept.md")));
    const undone = store.transaction(async (tx) => {
      expect((await t.take(tx, "k", userId, null, "kept.md"))?.file.name).toBe("kept.md");
      throw new Error("revival failed");
    });
    await expect(undone).rejects.toThrow("revival failed");
    expect((await store.transaction((tx) => t.take(tx, "k", userId, null, "kept.md")))?.file.name).toBe(
      "kept.md",
    );
  });
});

// Group commit in the embedded store (src/store/sqlite/sqliteStore.ts): units of work waiting
// together share one COMMIT, each in its own savepoint, so one that fails rolls back alone and the
// others are answered only once their COMMIT is done.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SqliteStore } from "../../../src/store/sqlite/sqliteStore.ts";

let dir: string;
let store: SqliteStore;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "txtfs-group-commit-"));
  store = new SqliteStore(join(dir, "txtfs.db"));
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const now = new Date().toISOString();
const addUser = (id: string) => (tx: Parameters<Parameters<SqliteStore["transaction"]>[0]>[0]) =>
  tx.users.insert({ id, email: `${id}@x`, name: id, created_at: now });
const users = () => store.read(async (tx) => (await tx.users.list()).map((u) => u.id).sort());

describe("group commit", () => {
  it("units waiting together share one COMMIT; a failing one rolls back alone and gets its own error", async () => {
    const before = { ...store.commits };
    const results = await Promise.allSettled([
      store.transaction(addUser("u_a")),
      store.transaction(async (tx) => {
        await addUser("u_b")(tx);
        throw new Error("unit b fails after writing");
      }),
      store.transaction(addUser("u_c")),
      store.transaction(addUser("u_a")), // a duplicate: SQLite's constraint error, this unit only
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled", "rejected"]);
    expect((results[1] as PromiseRejectedResult).reason.message).toBe("unit b fails after writing");
    expect(String((results[3] as PromiseRejectedResult).reason)).toMatch(/UNIQUE/);
    expect(await users()).toEqual(["u_a", "u_c"]);
    expect(store.commits.count - before.count).toBe(1);
    expect(store.commits.units - before.units).toBe(2);
  });

  it("a unit alone in its group that fails after writing leaves nothing", async () => {
    await expect(
      store.transaction(async (tx) => {
        await addUser("u_alone")(tx);
        throw new Error("the lone unit fails after writing");
      }),
    ).rejects.toThrow("the lone unit fails after writing");
    expect(await users()).toEqual([]);
    // The same write again: nothing of the first is left to clash with; then a failing one alone
    // (a constraint error) after it, and another that commits.
    await store.transaction(addUser("u_alone"));
    await expect(store.transaction(addUser("u_alone"))).rejects.toThrow(/UNIQUE/);
    await store.transaction(addUser("u_next"));
    expect(await users()).toEqual(["u_alone", "u_next"]);
  });

  it("a unit that changed more pages than the in-memory sub-journal holds (64 KiB, then a temp file) still rolls back alone", async () => {
    // temp_store = FILE: the sub-journal of a large unit spills to a temp file; rolling the unit
    // back reads it from there.
    await store.transaction(async (tx) => {
      for (let i = 0; i < 3000; i++) await addUser(`u_old${String(i).padStart(4, "0")}`)(tx);
    });
    const bulky = async (tx: Parameters<Parameters<SqliteStore["transaction"]>[0]>[0]) => {
      for (let i = 0; i < 3000; i++) await addUser(`u_new${String(i).padStart(4, "0")}`)(tx);
      // Every old user's row changed too (the pages the sub-journal keeps to roll them back).
      for (let i = 0; i < 3000; i++) await tx.users.nextSeq(`u_old${String(i).padStart(4, "0")}`);
      await tx.users.flushSeqs();
      throw new Error("the bulky unit fails at its end");
    };
    const results = await Promise.allSettled([
      store.transaction(addUser("u_first")),
      store.transaction(bulky),
      store.transaction(addUser("u_last")),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    const all = await users();
    expect(all.filter((id) => id.startsWith("u_new"))).toEqual([]);
    expect(all.filter((id) => id.startsWith("u_old"))).toHaveLength(3000);
    expect(all).toContain("u_first");
    expect(all).toContain("u_last");
    const rows = await store.read((tx) => tx.users.list());
    expect(rows.filter((u) => Number(u.feed_seq) !== 0)).toEqual([]);
  });

  it("a unit arriving while a group runs goes into the next one; every unit is answered after its COMMIT", async () => {
    const seen: string[] = [];
    const first = store.transaction(async (tx) => {
      await addUser("u_1")(tx);
      // Another request arrives while this group runs.
      void store.transaction(addUser("u_2")).then(() => seen.push("u_2 answered"));
      return "first";
    });
    expect(await first).toBe("first");
    seen.push("first answered");
    await store.read(async () => {}); // after the second group too
    await new Promise((r) => setImmediate(r));
    expect(seen).toEqual(["first answered", "u_2 answered"]);
    expect(await users()).toEqual(["u_1", "u_2"]);
  });

  it("a write asked for before a read or a close is committed first, as the mutex alone kept them", async () => {
    const write = store.transaction(addUser("u_before_read"));
    expect(await users()).toEqual(["u_before_read"]);
    await write;
    const last = store.transaction(addUser("u_before_close"));
    await store.close();
    await expect(last).resolves.toEqual({ changes: 1 });
    await expect(store.transaction(addUser("u_after_close"))).rejects.toThrow(/closed/);
    store = new SqliteStore(join(dir, "txtfs.db"));
    expect(await users()).toEqual(["u_before_close", "u_before_read"]);
  });
});

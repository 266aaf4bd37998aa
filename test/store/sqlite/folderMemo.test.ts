// A unit of work remembers the folders it read (FolderRepo): never past a write to folders, a
// rolled-back savepoint or its own end, and a caller changing a row it was given changes nothing.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser } from "../../../src/server/domain/accounts.ts";
import type { FolderRow } from "../../../src/store/repos/rows.ts";
import { SqliteStore } from "../../../src/store/sqlite/sqliteStore.ts";

let dir: string;
let store: SqliteStore;
let owner: string;
const at = "2026-11-29T00:00:00.000Z";
const folder = (id: string, name: string, parent: string | null = null): FolderRow => ({
  id,
  owner_id: owner,
  parent_id: parent,
  name,
  context: "",
  tags: "[]",
  revision: 1,
  created_at: at,
  updated_at: at,
});

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "txtfs-folder-memo-"));
  store = new SqliteStore(join(dir, "txtfs.db"));
  owner = (await store.transaction((tx) => createUser(tx, "memo@example.com"))).id;
  await store.transaction(async (tx) => {
    await tx.folders.insert(folder("d_A", "a"));
    await tx.folders.insert(folder("d_B", "b", "d_A"));
  });
});
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const names = (rows: FolderRow[]) => rows.map((r) => r.name);

describe("folders read in a unit of work", () => {
  it("a row changed by its caller is not what the next read gets", async () => {
    await store.read(async (tx) => {
      const a = await tx.folders.byId("d_A");
      a!.name = "changed by the caller";
      (await tx.folders.ancestry("d_B"))[0]!.name = "changed too";
      expect((await tx.folders.byId("d_A"))!.name).toBe("a");
      expect(names(await tx.folders.ancestry("d_B"))).toEqual(["b", "a"]);
    });
  });

  it("a write to folders is seen by the next read, and a missing folder once made", async () => {
    await store.transaction(async (tx) => {
      expect(await tx.folders.byId("d_C")).toBeUndefined();
      expect(names(await tx.folders.ancestry("d_B"))).toEqual(["b", "a"]);
      await tx.folders.insert(folder("d_C", "c"));
      expect((await tx.folders.byId("d_C"))!.name).toBe("c");
      await tx.folders.update({ ...(await tx.folders.byId("d_B"))!, parent_id: "d_C", name: "b2" });
      expect(names(await tx.folders.ancestry("d_B"))).toEqual(["b2", "c"]);
      await tx.folders.setAiExcluded("d_C", true);
      expect((await tx.folders.byId("d_C"))!.ai_excluded).toBe(1);
      await tx.folders.update({ ...(await tx.folders.byId("d_B"))!, parent_id: "d_A", name: "b" });
      await tx.folders.delete("d_C");
      expect(await tx.folders.byId("d_C")).toBeUndefined();
    });
  });

  it("what a rolled-back savepoint wrote is not remembered", async () => {
    await store.transaction(async (tx) => {
      expect(names(await tx.folders.ancestry("d_B"))).toEqual(["b", "a"]);
      await expect(
        tx.savepoint(async () => {
          await tx.folders.update({ ...(await tx.folders.byId("d_A"))!, name: "renamed" });
          expect(names(await tx.folders.ancestry("d_B"))).toEqual(["b", "renamed"]);
          throw new Error("this item fails");
        }),
      ).rejects.toThrow("this item fails");
      expect((await tx.folders.byId("d_A"))!.name).toBe("a");
      expect(names(await tx.folders.ancestry("d_B"))).toEqual(["b", "a"]);
    });
  });

  it("another unit of work reads what was committed since", async () => {
    const before = await store.read((tx) => tx.folders.byId("d_A"));
    await store.transaction(async (tx) => tx.folders.update({ ...before!, name: "a-committed" }));
    expect((await store.read((tx) => tx.folders.byId("d_A")))!.name).toBe("a-committed");
  });
});

// `/dav/`'s back end finds one entry by its name through the store's indexes: a PUT, GET, DELETE,
// MOVE or stat of one note in a big folder never lists that folder (counted at the repos, the
// calls that read a whole folder's notes or attachments).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ServiceBackend } from "../../src/dav/serviceBackend.ts";
import { createUser } from "../../src/server/domain/accounts.ts";
import type { Actor } from "../../src/server/domain/actor.ts";
import { createFile } from "../../src/server/domain/files.ts";
import { createFolder } from "../../src/server/domain/folders.ts";
import { SqliteStore } from "../../src/store/sqlite/sqliteStore.ts";
import type { Store, Tx } from "../../src/store/store.ts";

const LISTINGS: Record<string, ReadonlySet<string>> = {
  files: new Set(["list", "listJson", "inFolders"]),
  attachments: new Set(["page", "inFolders"]),
};

/** The store, with every call that reads a folder's whole content counted. */
function counting(store: Store): { store: Store; listings: string[] } {
  const listings: string[] = [];
  const wrapTx = (tx: Tx): Tx =>
    new Proxy(tx, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver) as unknown;
        const watched = typeof key === "string" ? LISTINGS[key] : undefined;
        if (!watched || typeof value !== "object" || value === null) return value;
        return new Proxy(value, {
          get(repo, method, r) {
            const fn = Reflect.get(repo, method, r) as unknown;
            if (typeof fn !== "function" || typeof method !== "string" || !watched.has(method)) return fn;
            return (...args: unknown[]) => {
              listings.push(`${String(key)}.${method}`);
              return (fn as (...a: unknown[]) => unknown).apply(repo, args);
            };
          },
        });
      },
    });
  const wrapped = new Proxy(store, {
    get(target, key, receiver) {
      if (key === "transaction")
        return <T>(fn: (tx: Tx) => Promise<T>, opts?: never) =>
          target.transaction((tx) => fn(wrapTx(tx)), opts);
      if (key === "read") return <T>(fn: (tx: Tx) => Promise<T>) => target.read((tx) => fn(wrapTx(tx)));
      const value = Reflect.get(target, key, receiver) as unknown;
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { store: wrapped, listings };
}

let dir: string;
let store: SqliteStore;
let actor: Actor;
const LIMITS = { maxBytes: 1 << 20, quotaBytes: 1 << 30 } as never;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "txtfs-dav-lookup-"));
  store = new SqliteStore(join(dir, "txtfs.db"));
  const user = await store.transaction((tx) => createUser(tx, "lookup@example.com"));
  actor = {
    userId: user.id,
    email: user.email,
    name: "",
    principal: "k_test",
    scopes: new Set(["files:read", "files:write"]),
    source: "dav",
  };
  await store.transaction(async (tx) => {
    const folder = await createFolder(tx, actor, { name: "big", parentFolderId: null });
    for (let i = 0; i < 40; i++)
      await createFile(tx, actor, { name: `n${i}.md`, folderId: folder.folder.id, content: `note ${i}\n` });
    for (let i = 0; i < 5; i++) await createFile(tx, actor, { name: `top${i}.md`, content: `top ${i}\n` });
  });
});
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("one entry of /dav/ by its name", () => {
  it("PUT (new and over), GET, stat, MOVE and DELETE of a note never list its folder", async () => {
    const { store: counted, listings } = counting(store);
    const dav = new ServiceBackend(counted, actor, LIMITS);
    expect((await dav.stat("/big/n7.md"))?.size).toBe("note 7\n".length);
    expect((await dav.read("/big/n7.md")).toString()).toBe("note 7\n");
    await dav.write("/big/n7.md", Buffer.from("changed\n"));
    await dav.write("/big/new.md", Buffer.from("new\n"));
    await dav.write("/top9.md", Buffer.from("new at the top\n"));
    expect((await dav.stat("/top9.md"))?.collection).toBe(false);
    await dav.rename("/big/new.md", "/big/renamed.md");
    await dav.remove("/big/renamed.md");
    expect(await dav.stat("/big/renamed.md")).toBeUndefined();
    expect(await dav.stat("/big/nothing.md")).toBeUndefined();
    expect((await dav.stat("/big"))?.collection).toBe(true);
    expect((await dav.read("/big/n7.md")).toString()).toBe("changed\n");
    expect(listings).toEqual([]);
    // A listing is what reads a folder whole.
    expect((await dav.list("/big")).length).toBe(40);
    expect(listings.length).toBeGreaterThan(0);
  });
});

// The change feed's per-account counter within one unit of work (UserRepo.nextSeq): the first seq
// comes from the account's row, the next ones are counted and written once before COMMIT. Seqs
// stay gapless and in order through savepoints rolled back, reads of the row in the transaction
// see them, and a unit of work that fails leaves the counter as it was. Runs on SQLite and, in the
// postgres project, on PostgreSQL (where the first bump also locks the row).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Tx } from "../../src/store/store.ts";
import { startTestServer, type TestServer, type TestUser } from "../helpers/server.ts";

let t: TestServer;
let u: TestUser;

beforeAll(async () => {
  t = await startTestServer();
  u = await t.user();
});
afterAll(() => t?.close());

const head = async () => Number((await t.server.store.read((tx) => tx.users.byId(u.id)))?.feed_seq);
const inTx = <T>(fn: (tx: Tx) => Promise<T>) => t.server.store.transaction(fn);
const fail = new Error("rolled back on purpose");

describe("feed counter in a unit of work", () => {
  it("counts on from the row, and the row holds the last seq once committed", async () => {
    const start = await head();
    const seqs = await inTx(async (tx) => [
      await tx.users.nextSeq(u.id),
      await tx.users.nextSeq(u.id),
      await tx.users.nextSeq(u.id),
    ]);
    expect(seqs).toEqual([start + 1, start + 2, start + 3]);
    expect(await head()).toBe(start + 3);
  });

  it("a savepoint rolled back hands its seqs out again: no gap, also when it took the first", async () => {
    const start = await head();
    const seqs = await inTx(async (tx) => {
      const got: number[] = [];
      // The first seq of the unit of work taken inside a savepoint that is rolled back.
      await tx
        .savepoint(async () => {
          got.push(await tx.users.nextSeq(u.id), await tx.users.nextSeq(u.id));
          throw fail;
        })
        .catch(() => {});
      got.push(await tx.users.nextSeq(u.id));
      await tx.savepoint(async () => got.push(await tx.users.nextSeq(u.id)));
      await tx
        .savepoint(async () => {
          got.push(await tx.users.nextSeq(u.id));
          expect(Number((await tx.users.byId(u.id))?.feed_seq)).toBe(start + 3); // a read flushes
          throw fail;
        })
        .catch(() => {});
      got.push(await tx.users.nextSeq(u.id));
      expect(Number((await tx.users.byId(u.id))?.feed_seq)).toBe(start + 3);
      return got;
    });
    expect(seqs).toEqual([start + 1, start + 2, start + 1, start + 2, start + 3, start + 3]);
    expect(await head()).toBe(start + 3);
  });

  it("a unit of work that fails leaves the counter as it was", async () => {
    const start = await head();
    await expect(
      inTx(async (tx) => {
        await tx.users.nextSeq(u.id);
        await tx.users.nextSeq(u.id);
        throw fail;
      }),
    ).rejects.toThrow(fail.message);
    expect(await head()).toBe(start);
  });

  it("a sync of many items: one seq each, gapless, the cursor at the last, the next write after it", async () => {
    const { body: before } = await u.api.get("/api/v1/changes?cursor=latest");
    const push = Array.from({ length: 30 }, (_, i) => ({
      id: `c${i}`,
      op: "file.create",
      body: { name: `seq-${i}.md`, content: `${i}` },
    }));
    // One item fails (a note that does not exist): the others go on.
    push.splice(10, 0, {
      id: "bad",
      op: "file.update",
      target: "f_nothere",
      body: { content: "x" },
    } as never);
    const sync = await u.api.post("/api/v1/sync", { cursor: before.cursor, push });
    expect(sync.status).toBe(200);
    expect(sync.body.pushResults.filter((r: { status: number }) => r.status >= 300)).toHaveLength(1);
    // (its own changes are not pulled back: the feed shows them)
    const { body: feed } = await u.api.get(`/api/v1/changes?cursor=${before.cursor}`);
    const seqs = (feed.changes as { seq: number }[]).map((c) => c.seq);
    expect(seqs).toEqual(Array.from({ length: 30 }, (_, i) => before.cursor + 1 + i));
    expect(sync.body.cursor).toBe(before.cursor + 30);
    const put = await u.api.post("/api/v1/files", { name: "after.md", content: "a" });
    expect(put.status).toBe(201);
    const { body: next } = await u.api.get(`/api/v1/changes?cursor=${before.cursor + 30}`);
    expect(next.changes.map((c: { seq: number }) => c.seq)).toEqual([before.cursor + 31]);
  });
});

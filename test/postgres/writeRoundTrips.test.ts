// What a PUT costs PostgreSQL in round trips (PostgresStore.roundTrips): each is a network wait
// with the account's lock held, so they bound one account's write rate more than the commit does.
// The number is pinned: a change that adds a round trip to every write shows here.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PostgresStore } from "../../src/store/postgres/postgresStore.ts";
import { mkfile, startTestServer, type TestServer } from "../helpers/server.ts";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ usageFlushMs: 3_600_000 }); // no background writes between the PUTs
});
afterAll(() => t.close());

describe("round trips of a write on PostgreSQL", () => {
  it("a PUT of a note: its reads, its writes, one round trip for the notification and COMMIT", async () => {
    const store = t.server.store as unknown as PostgresStore;
    const u = await t.user();
    const note = await mkfile(u, { name: "trips.md", content: "v0" });
    const put = async (content: string) => {
      const res = await u.api.put(`/api/v1/files/${note.id}`, { content });
      expect(res.status, res.text).toBe(200);
      return store.lastWriteRoundTrips;
    };
    await put("warm"); // caches (key, account) filled
    const trips = [await put("v1"), await put("v2"), await put("v3")];
    process.stderr.write(`[round trips] PUT: ${trips.join(", ")}\n`);
    expect(new Set(trips).size).toBe(1);
    expect(trips[0]).toBe(PUT_ROUND_TRIPS);
    expect((await u.api.get(`/api/v1/files/${note.id}`)).body.content).toBe("v3");
  });

  it("a note that gains and loses links pays for them only while its text has or had some", async () => {
    const store = t.server.store as unknown as PostgresStore;
    const u = await t.user();
    await mkfile(u, { name: "other.md", content: "the target" });
    const note = await mkfile(u, { name: "linking.md", content: "no links" });
    const put = async (content: string) => {
      const res = await u.api.put(`/api/v1/files/${note.id}`, { content });
      expect(res.status, res.text).toBe(200);
      return store.lastWriteRoundTrips;
    };
    await put("still none");
    const gained = await put("now [[other]]");
    const kept = await put("still [[other]], edited");
    const lost = await put("none again");
    const plain = await put("none, edited");
    process.stderr.write(`[round trips] gained ${gained}, kept ${kept}, lost ${lost}, plain ${plain}\n`);
    expect(plain).toBe(PUT_ROUND_TRIPS);
    for (const trips of [gained, kept, lost]) expect(trips).toBeGreaterThan(PUT_ROUND_TRIPS);
    expect((await u.api.get(`/api/me/files/${note.id}/links`)).body.links).toEqual([]);
  });
});

/**
 * The account's lock, BEGIN, the note read, its update and version, its comments' and suggestions'
 * anchors, the shares (who hears of it), the feed counter and row, the webhooks, notify + COMMIT
 * (one round trip: they were two), the unlock. A note whose old and new text have no link, alias
 * or tag syntax costs nothing more for links: its rows in the link index are already right.
 */
const PUT_ROUND_TRIPS = 13;

// The content cache (src/vfs/contentCache.ts): the bodies used last in memory, the rest in a ring
// file in the cache dir that wraps around; bounded in bytes, and never serving a body that was
// overwritten, replaced or left by an earlier daemon.
import { mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ContentCache } from "../../src/vfs/contentCache.ts";

let dir: string;
const ring = () => join(dir, "bodies.ring");
const body = (n: number, size = 1000) => Buffer.alloc(size, 97 + (n % 26));
const caches: ContentCache[] = [];
const open = (max: number) => {
  const c = new ContentCache(max, dir);
  caches.push(c);
  return c;
};

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "txtfs-cc-"));
});
afterEach(() => {
  for (const c of caches.splice(0)) c.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("content cache", () => {
  it("keeps the last bodies in memory and the rest in the ring, within its bound; the oldest go", () => {
    const c = open(10_000); // 2,500 bytes in memory, a ring of 7,500
    for (let i = 0; i < 30; i++) c.set(`f_${i}`, `"${i}"`, body(i));
    expect(c.bytes).toBeLessThanOrEqual(10_000);
    expect(statSync(ring()).size).toBeLessThanOrEqual(7_500);
    expect(c.entries).toBe(9); // what was overwritten is forgotten as it goes
    for (let i = 0; i < 21; i++) expect(c.fresh(`f_${i}`, `"${i}"`)).toBeUndefined(); // overwritten
    for (let i = 21; i < 30; i++) expect(c.fresh(`f_${i}`, `"${i}"`)?.equals(body(i))).toBe(true);
    expect(c.fresh("f_29", '"28"')).toBeUndefined(); // another version
  });

  it("random sets, reads and deletes against a model: a body served is always the one set last", () => {
    const c = open(20_000);
    const model = new Map<string, { etag: string; body: Buffer }>();
    let seed = 7;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let step = 0; step < 5_000; step++) {
      const id = `f_${rnd(40)}`;
      const op = rnd(10);
      if (op < 4) {
        const b = Buffer.alloc(1 + rnd(3_000), 33 + rnd(90));
        const etag = `"${step}"`;
        c.set(id, etag, b);
        model.set(id, { etag, body: Buffer.from(b) });
      } else if (op < 9) {
        const m = model.get(id);
        const got = c.fresh(id, m?.etag);
        if (got) expect(got.equals(m!.body)).toBe(true); // a miss is allowed (bounded), a wrong body never
        const old = c.get(id);
        if (old) {
          expect(old.etag).toBe(m?.etag);
          const b = old.body();
          if (b) expect(b.equals(m!.body)).toBe(true);
        }
      } else {
        c.delete(id);
        model.delete(id);
        expect(c.get(id)).toBeUndefined();
      }
      expect(c.bytes).toBeLessThanOrEqual(20_000);
      expect(c.entries).toBeLessThanOrEqual(40);
    }
  });

  it("a new version replaces the old one; a delete forgets it", () => {
    const c = open(1_000); // 250 bytes in memory, a ring of 750
    c.set("f_1", '"1"', body(1, 300)); // too big for memory: to the ring at once
    expect(c.fresh("f_1", '"1"')?.equals(body(1, 300))).toBe(true);
    c.set("f_1", '"2"', body(2, 400));
    expect(c.isFresh("f_1", '"2"')).toBe(true);
    expect(c.isFresh("f_1", '"1"')).toBe(false);
    expect(c.get("f_1")?.body()?.equals(body(2, 400))).toBe(true);
    c.set("f_1", '"3"', Buffer.from("small")); // in memory now
    expect(c.fresh("f_1", '"3"')?.toString()).toBe("small");
    expect(c.fresh("f_1", '"2"')).toBeUndefined();
    c.delete("f_1");
    expect(c.get("f_1")).toBeUndefined();
    expect(c.entries).toBe(0);
  });

  it("a ring cut short under it is a miss, never an error or another body", () => {
    const c = open(1_000);
    c.set("f_1", '"1"', body(1, 300));
    truncateSync(ring(), 0);
    expect(c.get("f_1")?.body()).toBeUndefined();
    expect(c.fresh("f_1", '"1"')).toBeUndefined();
    expect(c.entries).toBe(0);
  });

  it("starts empty: the ring of an earlier daemon (maybe torn by a crash) is never read", () => {
    const first = open(1_000);
    first.set("f_1", '"1"', body(1, 300));
    writeFileSync(ring(), "torn", { flag: "a" });
    const c = open(1_000);
    expect(statSync(ring()).size).toBe(0);
    expect(c.fresh("f_1", '"1"')).toBeUndefined();
    c.set("f_2", '"2"', body(2, 300));
    expect(readFileSync(ring()).equals(body(2, 300))).toBe(true);
  });

  it("a piece of a body is read alone, from memory or from the ring, and only of the version asked for", () => {
    const c = open(4_000); // 1,000 bytes in memory, a ring of 3,000
    const text = (n: number, size: number) =>
      Buffer.from(Array.from({ length: size }, (_, i) => 65 + ((i + n) % 26)));
    c.set("f_ring", '"1"', text(1, 2_000)); // too big for memory: in the ring
    c.set("f_hot", '"2"', text(2, 500));
    for (const [id, etag, b] of [
      ["f_ring", '"1"', text(1, 2_000)],
      ["f_hot", '"2"', text(2, 500)],
    ] as const) {
      const pieces: [number, number][] = [
        [0, 100],
        [123, 400],
        [b.length - 10, 100], // cut at the end
        [b.length, 100], // past the end: empty
      ];
      for (const [pos, len] of pieces) {
        expect(c.freshRange(id, etag, pos, len)?.equals(b.subarray(pos, pos + len))).toBe(true);
      }
      expect(c.freshRange(id, '"other"', 0, 10)).toBeUndefined();
      expect(c.freshRange(id, undefined, 0, 10)).toBeUndefined();
    }
    truncateSync(ring(), 0);
    expect(c.freshRange("f_ring", '"1"', 1_000, 10)).toBeUndefined(); // cut short: a miss, and forgotten
    expect(c.isFresh("f_ring", '"1"')).toBe(false);
  });

  it("a body larger than the whole cache is handed back but not kept", () => {
    const c = open(100);
    c.set("f_small", '"s"', Buffer.from("small"));
    const big = Buffer.alloc(101, 120);
    expect(c.set("f_big", '"b"', big)).toBe(big);
    expect(c.isFresh("f_big", '"b"')).toBe(false);
    expect(c.fresh("f_small", '"s"')?.toString()).toBe("small");
  });
});

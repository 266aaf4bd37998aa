// The content cache (src/vfs/contentCache.ts): bodies as files in the cache dir, bounded in bytes,
// least recently used first out; what is on disk is exactly what the index names.
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ContentCache } from "../../src/vfs/contentCache.ts";

let dir: string;
const bodies = () => join(dir, "bodies");
const onDisk = () =>
  readdirSync(bodies()).reduce((sum, f) => sum + statSync(join(bodies(), f)).size, 0);

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "txtfs-cc-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("content cache", () => {
  it("keeps bodies on disk within its bound; the least recently used go, their files with them", () => {
    const c = new ContentCache(10_000, dir);
    for (let i = 0; i < 30; i++) c.set(`f_${i}`, `"${i}"`, Buffer.alloc(1000, 97 + (i % 26)));
    expect(c.bytes).toBeLessThanOrEqual(10_000);
    expect(onDisk()).toBe(c.bytes);
    expect(readdirSync(bodies())).toHaveLength(c.entries);
    expect(c.fresh("f_0", '"0"')).toBeUndefined(); // evicted
    expect(c.fresh("f_29", '"29"')?.equals(Buffer.alloc(1000, 97 + 3))).toBe(true);
    expect(c.fresh("f_29", '"28"')).toBeUndefined(); // another version
  });

  it("a new version replaces the old one's file; a delete removes it", () => {
    const c = new ContentCache(1 << 20, dir);
    c.set("f_1", '"1"', Buffer.from("one"));
    c.set("f_1", '"2"', Buffer.from("two!"));
    expect(readdirSync(bodies())).toHaveLength(1);
    expect(c.fresh("f_1", '"2"')?.toString()).toBe("two!");
    expect(c.isFresh("f_1", '"2"')).toBe(true);
    expect(c.isFresh("f_1", '"1"')).toBe(false);
    expect(c.get("f_1")?.body()?.toString()).toBe("two!");
    c.delete("f_1");
    expect(readdirSync(bodies())).toEqual([]);
    expect(c.get("f_1")).toBeUndefined();
  });

  it("a body whose file was removed under it is a miss, never an error or another body", () => {
    const c = new ContentCache(1 << 20, dir);
    c.set("f_1", '"1"', Buffer.from("kept"));
    for (const f of readdirSync(bodies())) rmSync(join(bodies(), f));
    const old = c.get("f_1");
    expect(old?.etag).toBe('"1"');
    expect(old?.body()).toBeUndefined();
    expect(c.fresh("f_1", '"1"')).toBeUndefined();
    expect(c.entries).toBe(0);
  });

  it("starts empty: bodies left by an earlier daemon (maybe torn by a crash) are removed", () => {
    new ContentCache(1 << 20, dir).set("f_1", '"1"', Buffer.from("old"));
    writeFileSync(join(bodies(), "f_2.7"), "torn");
    const c = new ContentCache(1 << 20, dir);
    expect(readdirSync(bodies())).toEqual([]);
    expect(c.fresh("f_1", '"1"')).toBeUndefined();
  });

  it("a body larger than the whole cache is handed back but not kept", () => {
    const c = new ContentCache(100, dir);
    c.set("f_small", '"s"', Buffer.from("small"));
    const big = Buffer.alloc(101, 120);
    expect(c.set("f_big", '"b"', big)).toBe(big);
    expect(c.isFresh("f_big", '"b"')).toBe(false);
    expect(c.fresh("f_small", '"s"')?.toString()).toBe("small");
    expect(existsSync(bodies())).toBe(true);
  });
});

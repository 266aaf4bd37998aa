// The tombstones of `/dav/` are bounded: a PUT continues a deleted note only within the window,
// only for the key that deleted it, once; and they never hold more than their count or bytes.
import { describe, expect, it } from "vitest";
import { ServiceTombstones } from "../../src/dav/serviceTombstones.ts";
import type { FileSnapshot } from "../../src/server/domain/fileRevival.ts";

const snapshot = (name: string, bytes = 10, folderId: string | null = null) =>
  ({
    file: { id: `f_${name}`, owner_id: "u_1", folder_id: folderId, name },
    versions: [],
    connections: [],
    setTags: undefined,
    bytes,
  }) as unknown as FileSnapshot;

describe("the tombstones of /dav/", () => {
  it("serve the same key, at the same place, once, within the window", () => {
    let now = 0;
    const t = new ServiceTombstones({ ttlMs: 1000, count: 10, bytes: 1000 }, () => now);
    t.remember("k_1", snapshot("a.md"));
    expect(t.take("k_2", "u_1", null, "a.md")).toBeUndefined();
    expect(t.take("k_1", "u_1", "d_1", "a.md")).toBeUndefined();
    expect(t.take("k_1", "u_1", null, "a.md")?.file.id).toBe("f_a.md");
    expect(t.take("k_1", "u_1", null, "a.md")).toBeUndefined();
    t.remember("k_1", snapshot("b.md"));
    now = 1000;
    expect(t.take("k_1", "u_1", null, "b.md")).toBeUndefined();
    expect(t.size).toBe(0);
  });

  it("keep at most their count and bytes, the oldest going first", () => {
    const t = new ServiceTombstones({ ttlMs: 60_000, count: 2, bytes: 100 }, () => 0);
    t.remember("k", snapshot("1.md"));
    t.remember("k", snapshot("2.md"));
    t.remember("k", snapshot("3.md"));
    expect(t.size).toBe(2);
    expect(t.take("k", "u_1", null, "1.md")).toBeUndefined();
    t.remember("k", snapshot("big.md", 95));
    expect(t.size).toBe(1);
    t.remember("k", snapshot("huge.md", 101));
    expect(t.take("k", "u_1", null, "huge.md")).toBeUndefined();
    expect(t.take("k", "u_1", null, "big.md")?.file.name).toBe("big.md");
  });
});

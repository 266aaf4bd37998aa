// The account's attachment quota, met at the write: a write that would take the account's
// attachments past it fails at once with EDQUOT, counting what this mount wrote and has not
// delivered yet; nothing written before is lost or changed. A quota filled by another device is
// found at delivery: the file stays here, said, and the next write knows.
import { randomBytes } from "node:crypto";
import { constants as fsc } from "node:fs";
import { describe, expect, it } from "vitest";
import { TxtfsClient } from "../../src/client/api.ts";
import type { Vfs } from "../../src/vfs/vfs.ts";
import { startTestServer } from "../helpers/server.ts";
import { deviceOn, scratchDir } from "./fixture.ts";

async function put(vfs: Vfs, path: string, bytes: Buffer): Promise<void> {
  const fd = await vfs.create(path, 0o644);
  try {
    await vfs.write(fd, bytes, 0);
  } finally {
    await vfs.flush(fd);
    await vfs.release(fd);
  }
}

async function bytesOf(vfs: Vfs, path: string): Promise<Buffer> {
  const fd = await vfs.open(path, fsc.O_RDONLY);
  try {
    return await vfs.read(fd, 1 << 20, 0);
  } finally {
    await vfs.release(fd);
  }
}

describe("the attachment quota at the write", () => {
  it("EDQUOT at once past the quota, counting saves not delivered yet; shrinking frees it", async () => {
    const small = await startTestServer({ attachments: { quotaBytes: 1000 } });
    try {
      const user = await small.user();
      const client = new TxtfsClient({ url: small.url, key: user.key, source: "mount", timeoutMs: 2000 });
      const sizes = async () =>
        new Map((await client.attachments.all()).map((a) => [a.name, a.size] as [string, number]));
      const vfs = deviceOn(small.url, scratchDir("txtfs-att-quota-"), user.key);
      await vfs.start();
      try {
        const a = randomBytes(600);
        await put(vfs, "/a.bin", a);
        await vfs.drain();
        // Written, not delivered: b's 300 bytes count as soon as they are written.
        const fd = await vfs.create("/b.bin", 0o644);
        expect(await vfs.write(fd, Buffer.alloc(300, 1), 0)).toBe(300);
        await expect(vfs.write(fd, Buffer.alloc(200, 2), 300)).rejects.toMatchObject({ errno: "EDQUOT" });
        await expect(vfs.ftruncate(fd, 500)).rejects.toMatchObject({ errno: "EDQUOT" });
        await vfs.flush(fd);
        await vfs.release(fd);
        await expect(put(vfs, "/c.bin", Buffer.alloc(150, 3))).rejects.toMatchObject({ errno: "EDQUOT" });
        expect((await vfs.getattr("/c.bin")).size).toBe(0); // made, nothing written into it
        // Notes are not attachments: the quota is not theirs.
        await put(vfs, "/note.md", Buffer.alloc(2000, 0x61));
        // Smaller never fails, and what it frees can be used once it is delivered.
        await vfs.truncate("/a.bin", 100);
        await vfs.drain();
        await put(vfs, "/c.bin", Buffer.alloc(150, 3));
        await vfs.drain();
        expect(vfs.takeRefused()).toEqual([]);
        expect(await sizes()).toEqual(
          new Map([
            ["a.bin", 100],
            ["b.bin", 300],
            ["c.bin", 150],
          ]),
        );
        expect((await bytesOf(vfs, "/a.bin")).equals(a.subarray(0, 100))).toBe(true);
        expect((await bytesOf(vfs, "/b.bin")).equals(Buffer.alloc(300, 1))).toBe(true);
        // 550 of 1000 used: 500 more do not fit until a delete of ours has landed.
        await expect(put(vfs, "/d.bin", Buffer.alloc(500, 4))).rejects.toMatchObject({ errno: "EDQUOT" });
        await vfs.unlink("/b.bin");
        await vfs.drain();
        await put(vfs, "/d.bin", Buffer.alloc(500, 4));
        await vfs.drain();
        expect(vfs.takeRefused()).toEqual([]);
        expect(await sizes()).toEqual(
          new Map([
            ["a.bin", 100],
            ["c.bin", 150],
            ["d.bin", 500],
          ]),
        );
      } finally {
        await vfs.stop();
      }
    } finally {
      await small.close();
    }
  });

  it("filled by another device: found at delivery, the file kept here and said; the next write fails at once", async () => {
    const small = await startTestServer({ attachments: { quotaBytes: 1000 } });
    try {
      const user = await small.user();
      const client = new TxtfsClient({ url: small.url, key: user.key, source: "mount", timeoutMs: 2000 });
      const vfs = deviceOn(small.url, scratchDir("txtfs-att-quota2-"), user.key);
      await vfs.start();
      try {
        await put(vfs, "/a.bin", Buffer.alloc(400, 1));
        await vfs.drain();
        await client.attachments.create("other.bin", null, Buffer.alloc(500, 2), { idempotencyKey: "other" });
        const late = Buffer.alloc(200, 3);
        await put(vfs, "/late.bin", late); // this mount still counts 400 of 1000
        await vfs.drain();
        expect(vfs.takeRefused().map((r) => r.path)).toEqual(["/late.bin"]);
        expect(vfs.localOnly().map((l) => l.path)).toEqual(["/late.bin"]);
        expect((await bytesOf(vfs, "/late.bin")).equals(late)).toBe(true);
        await expect(put(vfs, "/next.bin", Buffer.alloc(200, 4))).rejects.toMatchObject({ errno: "EDQUOT" });
        const names = (await client.attachments.all()).map((x) => x.name).sort();
        expect(names).toEqual(["a.bin", "other.bin"]);
      } finally {
        await vfs.stop();
      }
    } finally {
      await small.close();
    }
  });
});

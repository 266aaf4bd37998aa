// Attachments' bytes read from the service are a cache bounded by the cache's size (the fixture's:
// 1 MiB): past it the least recently used clean ones go and are read again, exactly, at their next
// open; a file held open, or under a folder kept on this device (`txtfs pin`), never goes, and a
// pinned folder's are read ahead.
import { randomBytes } from "node:crypto";
import { constants as fsc, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { TxtfsClient } from "../../src/client/api.ts";
import { createLogger } from "../../src/lib/logger.ts";
import type { LocalNode } from "../../src/vfs/tree.ts";
import { Vfs } from "../../src/vfs/vfs.ts";
import { bytesOf, cacheDir, mountVfs, scratchDir, t, u, until, useVfsServer } from "./fixture.ts";

useVfsServer();

const api = () => new TxtfsClient({ url: t.url, key: u.key, source: "test", timeoutMs: 5000 });
const SIZE = 600_000; // two of them are past the fixture's 1 MiB

/** Bytes of files the cache dir holds for local files and attachments. */
function bytesOnDisk(): number {
  const dir = join(cacheDir, "local");
  return readdirSync(dir).reduce((n, f) => n + statSync(join(dir, f)).size, 0);
}

const onDisk = (vfs: Vfs, path: string) => !(vfs.tree.lookup(path) as LocalNode).attachment?.remoteOnly;

describe("attachments' bytes are a bounded cache", () => {
  it("past the cache's size the least recently used go, and are read again exactly", async () => {
    const made = new Map<string, Buffer>();
    for (const name of ["a.bin", "b.bin", "c.bin"]) {
      made.set(name, randomBytes(SIZE));
      await api().attachments.create(name, null, made.get(name)!);
    }
    const vfs = await mountVfs();
    for (const name of made.keys())
      expect((await bytesOf(vfs, `/${name}`)).equals(made.get(name)!)).toBe(true);
    expect(onDisk(vfs, "/c.bin")).toBe(true);
    expect(onDisk(vfs, "/a.bin")).toBe(false);
    expect(bytesOnDisk()).toBeLessThanOrEqual(1 << 20);
    // Read again: exactly its bytes, and now the most recent (the oldest other one goes).
    expect((await bytesOf(vfs, "/a.bin")).equals(made.get("a.bin")!)).toBe(true);
    expect(onDisk(vfs, "/a.bin")).toBe(true);
    expect(onDisk(vfs, "/c.bin")).toBe(false);
    expect((await vfs.getattr("/b.bin")).size).toBe(SIZE);
    expect(vfs.localOnly()).toEqual([]);
  });

  it("a file held open and the files of a folder kept on this device stay, whatever the size", async () => {
    const folder = (await u.api.post("/api/v1/folders", { name: "keep" })).body.folder;
    const made = new Map<string, Buffer>();
    for (const [name, folderId] of [
      ["open.bin", null],
      ["keep/one.bin", folder.id],
      ["x.bin", null],
      ["y.bin", null],
    ] as const) {
      made.set(name, randomBytes(SIZE));
      await api().attachments.create(name.split("/").pop()!, folderId, made.get(name)!);
    }
    const vfs = await mountVfs();
    await vfs.setxattr("/keep", "user.txtfs.state", Buffer.from("available"));
    const fd = await vfs.open("/open.bin", fsc.O_RDONLY);
    try {
      expect((await bytesOf(vfs, "/keep/one.bin")).equals(made.get("keep/one.bin")!)).toBe(true);
      expect((await bytesOf(vfs, "/x.bin")).equals(made.get("x.bin")!)).toBe(true);
      expect((await bytesOf(vfs, "/y.bin")).equals(made.get("y.bin")!)).toBe(true);
      expect(onDisk(vfs, "/open.bin")).toBe(true);
      expect(onDisk(vfs, "/keep/one.bin")).toBe(true);
      expect(onDisk(vfs, "/x.bin")).toBe(false);
      expect((await vfs.read(fd, SIZE, 0)).equals(made.get("open.bin")!)).toBe(true);
    } finally {
      await vfs.release(fd);
    }
  });

  it("a folder pinned here has its attachments read ahead and kept, those made elsewhere later too, and they read offline", async () => {
    const folder = (await u.api.post("/api/v1/folders", { name: "vault" })).body.folder;
    const made = new Map<string, Buffer>([
      ["big.png", randomBytes(SIZE)],
      ["small.pdf", randomBytes(1000)],
    ]);
    for (const [name, bytes] of made) await api().attachments.create(name, folder.id, bytes);
    const vfs = await mountVfs();
    await vfs.setxattr("/vault", "user.txtfs.state", Buffer.from("pinned"));
    expect(onDisk(vfs, "/vault/big.png")).toBe(true);
    expect(onDisk(vfs, "/vault/small.pdf")).toBe(true);
    expect((await vfs.getxattr("/vault/small.pdf", "user.txtfs.state"))?.toString()).toBe("pinned");
    made.set("later.bin", randomBytes(SIZE));
    await api().attachments.create("later.bin", folder.id, made.get("later.bin")!);
    await until(
      () => vfs.tree.lookup("/vault/later.bin") !== undefined && onDisk(vfs, "/vault/later.bin"),
      "read ahead",
    );
    await t.server.close(); // offline from here on
    for (const [name, bytes] of made) expect((await bytesOf(vfs, `/vault/${name}`)).equals(bytes)).toBe(true);
  });

  it("an attachment pinned on its own: read now, kept, read offline; recorded for this device on the service", async () => {
    const device = (await u.api.post("/api/v1/devices", { name: "laptop", platform: "linux" })).body.device;
    const pinned = randomBytes(SIZE);
    await api().attachments.create("a.bin", null, pinned);
    await api().attachments.create("b.bin", null, randomBytes(SIZE));
    const vfs = new Vfs({
      client: new TxtfsClient({ url: t.url, key: u.key, source: "mount", timeoutMs: 2000 }),
      cacheDir: scratchDir("txtfs-vfs-pin-"),
      cacheSize: SIZE, // room for one file's bytes only
      uid: 0,
      gid: 0,
      logger: createLogger("vfs-test", "silent"),
      pollWait: 1,
      deviceId: device.id,
    });
    await vfs.start();
    try {
      await vfs.setxattr("/a.bin", "user.txtfs.state", Buffer.from("pinned"));
      expect(onDisk(vfs, "/a.bin")).toBe(true);
      expect((await vfs.getxattr("/a.bin", "user.txtfs.state"))?.toString()).toBe("pinned");
      expect((await vfs.getxattr("/b.bin", "user.txtfs.state"))?.toString()).toBe("online-only");
      const states = (await u.api.get(`/api/v1/devices/${device.id}/state`)).body.items;
      expect(states).toEqual([
        expect.objectContaining({ attachmentId: expect.any(String), state: "pinned" }),
      ]);
      // b's bytes read past the cache's size (room for one): a stays, pinned.
      await bytesOf(vfs, "/b.bin");
      expect(onDisk(vfs, "/a.bin")).toBe(true);
      await t.server.close(); // offline from here on
      expect((await bytesOf(vfs, "/a.bin")).equals(pinned)).toBe(true);
    } finally {
      await vfs.stop();
    }
  });
});

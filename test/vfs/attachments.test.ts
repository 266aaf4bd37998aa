// Files that are not notes go to the service as attachments through the journal, bytes exact, and
// show on another device: made, rewritten, renamed, removed, changed on both sides (a conflict
// copy keeps ours), and kept across a restart while the service is down.
import { randomBytes } from "node:crypto";
import { constants as fsc } from "node:fs";
import { describe, expect, it } from "vitest";
import { TxtfsClient } from "../../src/client/api.ts";
import type { Vfs } from "../../src/vfs/vfs.ts";
import { startTestServer } from "../helpers/server.ts";
import {
  bytesOf,
  cacheDir,
  deviceOn,
  mountVfs,
  restartService,
  scratchDir,
  t,
  u,
  until,
  useVfsServer,
} from "./fixture.ts";

useVfsServer();

const api = () => new TxtfsClient({ url: t.url, key: u.key, source: "test", timeoutMs: 5000 });

/** What a program does: create (or truncate), write, close. */
async function put(vfs: Vfs, path: string, bytes: Buffer): Promise<void> {
  const fd = await vfs.create(path, 0o644);
  await vfs.write(fd, bytes, 0);
  await vfs.flush(fd); // close(2) returns here
  await vfs.release(fd);
}

async function listed(): Promise<Map<string, Buffer>> {
  const client = api();
  const out = new Map<string, Buffer>();
  for (const a of await client.attachments.all()) {
    const got = await client.attachments.read(a.id);
    out.set(a.name, got!.bytes);
  }
  return out;
}

describe("attachments through the mount", () => {
  it("a file that is not a note reaches the service and another device byte-exact", async () => {
    const a = await mountVfs();
    const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0xff, 0xfe]), randomBytes(300_000)]);
    await a.mkdir("/img");
    await put(a, "/img/photo.png", png);
    await put(a, "/empty.bin", Buffer.alloc(0));
    await a.drain();
    const remote = await listed();
    expect(remote.get("photo.png")?.equals(png)).toBe(true);
    expect(remote.get("empty.bin")?.length).toBe(0);
    expect(a.localOnly()).toEqual([]);

    const b = deviceOn(t.url, scratchDir("txtfs-att-b-"));
    await b.start();
    expect((await b.getattr("/img/photo.png")).size).toBe(png.length);
    expect((await bytesOf(b, "/img/photo.png")).equals(png)).toBe(true);

    // Rewritten on B, renamed and then removed on A: each shows on the other side.
    const v2 = randomBytes(5000);
    await put(b, "/img/photo.png", v2);
    await b.drain();
    await until(async () => (await a.getattr("/img/photo.png")).size === v2.length, "B's version on A");
    expect((await bytesOf(a, "/img/photo.png")).equals(v2)).toBe(true);
    await a.rename("/img/photo.png", "/img/cover.png");
    await a.drain();
    await until(() => b.tree.lookup("/img/cover.png") !== undefined, "the rename on B");
    expect(b.tree.lookup("/img/photo.png")).toBeUndefined();
    expect((await bytesOf(b, "/img/cover.png")).equals(v2)).toBe(true);
    await a.unlink("/img/cover.png");
    await a.drain();
    expect([...(await listed()).keys()]).toEqual(["empty.bin"]);
    await until(() => b.tree.lookup("/img/cover.png") === undefined, "the removal on B");
  });

  it("perl -i's temp (already an attachment) renamed over a note kept local for bytes that are not UTF-8 becomes that file, never an attachment", async () => {
    const a = await mountVfs();
    await put(a, "/b.md", Buffer.from("text first\n")); // a note the service has
    await a.drain();
    const notUtf8 = Buffer.from([0x61, 0xc3, 0x0a, 0xff]);
    await put(a, "/b.md", notUtf8); // kept local now: the note keeps its last text on the service
    const edited = Buffer.from([0x41, 0xc3, 0x0a, 0xff, 0x21]);
    await put(a, "/XXab12cd", edited); // perl's temp: closed, so saved as an attachment
    await a.rename("/XXab12cd", "/b.md");
    await a.drain();
    expect((await listed()).size).toBe(0); // the temp never stays on the service
    // The feed is read in order: once a later record shows, the temp's own records were applied.
    await api().attachments.create("marker.bin", null, Buffer.from("m"));
    await until(() => a.tree.lookup("/marker.bin") !== undefined, "the feed caught up");
    expect(a.tree.lookup("/XXab12cd")).toBeUndefined();
    expect((await bytesOf(a, "/b.md")).equals(edited)).toBe(true);
    expect(a.localOnly().map((l) => l.path)).toEqual(["/b.md"]);
  });

  it("rm -rf of a folder holding notes and attachments: everything goes, nothing comes back a level up", async () => {
    const a = await mountVfs();
    await a.mkdir("/d");
    await put(a, "/d/one.md", Buffer.from("one\n"));
    await put(a, "/d/two.md", Buffer.from("two\n"));
    await put(a, "/d/pic.png", randomBytes(2000));
    await a.drain();
    expect([...(await listed()).keys()]).toEqual(["pic.png"]);
    // What rm -rf does: each file, then the folder, all journalled before the next delivery.
    await a.unlink("/d/pic.png");
    await a.unlink("/d/one.md");
    await a.unlink("/d/two.md");
    await a.rmdir("/d");
    await a.drain();
    expect((await listed()).size).toBe(0);
    await u.api.post("/api/v1/files", { name: "marker.md", content: "m" });
    await until(() => a.tree.lookup("/marker.md") !== undefined, "the feed past the deletes");
    expect(a.readdir("/")).toEqual(["marker.md"]);
  });

  it("changed on both devices: ours is kept as a conflict copy, theirs shows", async () => {
    const a = await mountVfs();
    await put(a, "/data.bin", Buffer.from("v1"));
    await a.drain();
    const b = deviceOn(t.url, scratchDir("txtfs-att-b-"));
    await b.start();
    expect((await bytesOf(b, "/data.bin")).toString()).toBe("v1");
    // A has it open for writing before B's version comes: the feed's record of it waits.
    const fd = await a.open("/data.bin", fsc.O_WRONLY);
    await put(b, "/data.bin", Buffer.from("theirs"));
    await b.drain();
    await a.ftruncate(fd, 0);
    await a.write(fd, Buffer.from("ours!"), 0);
    await a.flush(fd);
    await a.release(fd);
    await a.drain();
    const remote = await listed();
    const copies = [...remote.keys()].filter((n) => n.startsWith("data.conflict-"));
    expect(copies).toHaveLength(1);
    expect(remote.get(copies[0]!)?.toString()).toBe("ours!");
    expect(remote.get("data.bin")?.toString()).toBe("theirs");
    await until(async () => (await bytesOf(a, "/data.bin")).toString() === "theirs", "theirs on A");
    expect(a.conflicts.length).toBe(1);
  });

  it("renamed over another attachment while its newest bytes wait: one file, the new name, those bytes (soak seed 9768)", async () => {
    const a = await mountVfs();
    await a.mkdir("/d");
    await put(a, "/d/q.bin", Buffer.from("q1"));
    await put(a, "/p.png", Buffer.from("the png"));
    await a.drain();
    const port = new URL(t.url).port;
    await t.server.close();
    // Saved, then renamed over p.png: the move joins q.bin's waiting entry, ahead of p.png's delete.
    const newest = randomBytes(300);
    await put(a, "/d/q.bin", newest);
    await a.rename("/d/q.bin", "/p.png");
    const server = await restartService(port);
    try {
      await a.drain();
      expect(a.takeRefused()).toEqual([]);
      const remote = await listed();
      expect([...remote.keys()]).toEqual(["p.png"]);
      expect(remote.get("p.png")?.equals(newest)).toBe(true);
      expect((await bytesOf(a, "/p.png")).equals(newest)).toBe(true);
      // Its old folder removed: nothing of it comes back a level up.
      await a.rmdir("/d");
      await a.drain();
      await api().attachments.create("marker.bin", null, Buffer.from("m"));
      await until(() => a.tree.lookup("/marker.bin") !== undefined, "the feed caught up");
      expect(a.readdir("/").sort()).toEqual(["marker.bin", "p.png"]);
      expect(a.localOnly()).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it("a script's temp file renamed over its output before either went: the output keeps the new bytes, nothing is refused", async () => {
    const a = await mountVfs();
    await put(a, "/report.csv", Buffer.from("old,1\n"));
    await a.drain();
    const port = new URL(t.url).port;
    await t.server.close();
    await put(a, "/report.csv.tmp", Buffer.from("new,2\n"));
    await a.rename("/report.csv.tmp", "/report.csv");
    const server = await restartService(port);
    try {
      await a.drain();
      expect(a.takeRefused()).toEqual([]);
      const remote = await listed();
      expect([...remote.keys()]).toEqual(["report.csv"]);
      expect(remote.get("report.csv")?.toString()).toBe("new,2\n");
      expect(a.localOnly()).toEqual([]);
    } finally {
      await server.close();
    }
  });

  for (const how of ["renamed to", "made as"] as const)
    it(`${how} a name another device took meanwhile: both kept, ours as a conflict copy beside theirs`, async () => {
      const a = await mountVfs();
      if (how === "renamed to") await put(a, "/q.bin", Buffer.from("ours"));
      await a.drain();
      const port = new URL(t.url).port;
      await t.server.close();
      if (how === "renamed to") await a.rename("/q.bin", "/p.png");
      else await put(a, "/p.png", Buffer.from("ours"));
      await a.stop(); // ours waits in the journal
      const server = await restartService(port);
      try {
        await api().attachments.create("p.png", null, Buffer.from("theirs"));
        const again = deviceOn(t.url, cacheDir);
        await again.start();
        await again.drain();
        expect(again.takeRefused()).toEqual([]);
        const remote = await listed();
        const copies = [...remote.keys()].filter((n) => /^p\.conflict-.*\.png$/.test(n));
        expect(copies).toHaveLength(1);
        expect(remote.get(copies[0]!)?.toString()).toBe("ours");
        expect(remote.get("p.png")?.toString()).toBe("theirs");
        expect(remote.size).toBe(2);
        await until(() => again.tree.lookup("/p.png") !== undefined, "theirs shown");
        expect((await bytesOf(again, "/p.png")).toString()).toBe("theirs");
        expect((await bytesOf(again, `/${copies[0]}`)).toString()).toBe("ours");
        expect(again.readdir("/").sort()).toEqual([copies[0], "p.png"].sort());
        expect(again.localOnly()).toEqual([]);
        expect(again.conflicts, JSON.stringify(again.conflicts)).toHaveLength(1);
      } finally {
        await server.close();
      }
    });

  it("a .md made here whose bytes are not UTF-8 goes up byte-exact as an attachment of that name; made text on another device, it is a note everywhere", async () => {
    const a = await mountVfs();
    const latin1 = Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]); // "café" in Latin-1
    await put(a, "/old.md", latin1);
    await a.drain();
    expect((await listed()).get("old.md")?.equals(latin1)).toBe(true);
    expect(a.localOnly()).toEqual([]);
    expect((await u.api.get("/api/v1/files")).body.files).toEqual([]);

    const b = deviceOn(t.url, scratchDir("txtfs-att-b-"));
    await b.start();
    expect((await bytesOf(b, "/old.md")).equals(latin1)).toBe(true);
    await put(b, "/old.md", Buffer.from("café\n"));
    await b.drain();
    expect((await listed()).size).toBe(0);
    const notes = (await u.api.get("/api/v1/files")).body.files as { id: string; name: string }[];
    expect(notes.map((n) => n.name)).toEqual(["old.md"]);
    expect((await u.api.get(`/api/v1/files/${notes[0]!.id}`)).body.content).toBe("café\n");
    await until(() => a.tree.lookup("/old.md")?.kind === "file", "the note on A");
    expect((await bytesOf(a, "/old.md")).toString()).toBe("café\n");
    expect(a.readdir("/")).toEqual(["old.md"]);
    expect(b.takeRefused()).toEqual([]);
  });

  it("an attachment renamed to a note's name with bytes that are not UTF-8 stays on the service under that name", async () => {
    const a = await mountVfs();
    const bytes = Buffer.from([0xff, 0xfe, 0x00, 0x41]);
    await put(a, "/x.bin", bytes);
    await a.drain();
    await a.rename("/x.bin", "/x.md");
    await a.drain();
    const remote = await listed();
    expect([...remote.keys()]).toEqual(["x.md"]);
    expect(remote.get("x.md")?.equals(bytes)).toBe(true);
    expect(a.localOnly()).toEqual([]);
  });

  it("saved while the service is down: journalled, kept across a restart, delivered when it is back", async () => {
    const a = await mountVfs();
    await a.drain();
    const port = new URL(t.url).port;
    await t.server.close();
    const bytes = randomBytes(70_000);
    await put(a, "/offline.dat", bytes);
    // The daemon goes without delivering (a kill -9 leaves the cache dir as it is now).
    const copy = scratchDir("txtfs-att-kill-");
    const { cpSync } = await import("node:fs");
    cpSync(cacheDir, copy, { recursive: true });
    const server = await restartService(port);
    try {
      const again = deviceOn(t.url, copy);
      await again.start();
      expect((await bytesOf(again, "/offline.dat")).equals(bytes)).toBe(true);
      await again.drain();
      expect((await listed()).get("offline.dat")?.equals(bytes)).toBe(true);
      await again.stop();
    } finally {
      await server.close();
    }
  });

  it("a write past the service's largest attachment fails at once (EFBIG), and nothing else changes", async () => {
    const small = await startTestServer({ attachments: { maxBytes: 1000 } });
    try {
      const user = await small.user();
      const client = new TxtfsClient({ url: small.url, key: user.key, source: "mount", timeoutMs: 2000 });
      const vfs = deviceOn(small.url, scratchDir("txtfs-att-efbig-"), user.key);
      await vfs.start();
      try {
        await put(vfs, "/fits.bin", Buffer.from("fits"));
        const fd = await vfs.create("/big.bin", 0o644);
        await expect(vfs.write(fd, randomBytes(1001), 0)).rejects.toMatchObject({ errno: "EFBIG" });
        expect(await vfs.write(fd, Buffer.alloc(1000, 7), 0)).toBe(1000); // up to the limit is fine
        await expect(vfs.write(fd, Buffer.from("x"), 1000)).rejects.toMatchObject({ errno: "EFBIG" });
        await expect(vfs.ftruncate(fd, 5000)).rejects.toMatchObject({ errno: "EFBIG" });
        await vfs.flush(fd);
        await vfs.release(fd);
        await expect(vfs.truncate("/fits.bin", 1001)).rejects.toMatchObject({ errno: "EFBIG" });
        // A note is not an attachment: its own limit applies (5 MiB), not this one.
        await put(vfs, "/note.md", Buffer.alloc(2000, 0x61));
        await vfs.drain();
        expect(vfs.takeRefused()).toEqual([]);
        const remote = new Map<string, number>();
        for (const a of await client.attachments.all()) remote.set(a.name, a.size);
        expect(remote).toEqual(
          new Map([
            ["fits.bin", 4],
            ["big.bin", 1000],
          ]),
        );
        expect((await bytesOf(vfs, "/fits.bin")).toString()).toBe("fits");
      } finally {
        await vfs.stop();
      }
    } finally {
      await small.close();
    }
  });

  it("a save the service refuses for good (too large, its limits not known here) stays on this machine, said, and nothing else changes", async () => {
    const small = await startTestServer({ attachments: { maxBytes: 1000 } });
    try {
      const user = await small.user();
      const client = new TxtfsClient({ url: small.url, key: user.key, source: "mount", timeoutMs: 2000 });
      // An older service, or limits lowered since the start: only the delivery finds out.
      const own = new TxtfsClient({ url: small.url, key: user.key, source: "mount", timeoutMs: 2000 });
      own.attachments.limits = async () => undefined;
      const vfs = deviceOn(small.url, scratchDir("txtfs-att-small-"), user.key, own);
      await vfs.start();
      try {
        await put(vfs, "/fits.bin", Buffer.from("fits"));
        const big = randomBytes(5000);
        await put(vfs, "/big.bin", big);
        await vfs.drain();
        const refused = vfs.takeRefused();
        expect(refused.map((r) => r.path)).toEqual(["/big.bin"]);
        expect(vfs.localOnly().map((l) => l.path)).toEqual(["/big.bin"]);
        expect((await bytesOf(vfs, "/big.bin")).equals(big)).toBe(true);
        const names = (await client.attachments.all()).map((a) => a.name);
        expect(names).toEqual(["fits.bin"]);
      } finally {
        await vfs.stop();
      }
    } finally {
      await small.close();
    }
  });
});

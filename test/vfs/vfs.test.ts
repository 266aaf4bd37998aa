// The mount's semantics in-process (no FUSE): a real server on loopback, the Vfs called directly.
import { randomUUID } from "node:crypto";
import { constants as fsc, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { NetworkError, TxtfsClient } from "../../src/client/api.ts";
import { createLogger } from "../../src/lib/logger.ts";
import { type BulkItem, bulksOf, pushBulk } from "../../src/vfs/delivery/bulk.ts";
import { Journal } from "../../src/vfs/delivery/journal.ts";
import { Vfs } from "../../src/vfs/vfs.ts";
import { startTestServer, type TestServer, type TestUser } from "../helpers/server.ts";

let t: TestServer;
let u: TestUser;
let cacheDir: string;
const vfss: Vfs[] = [];

async function mountVfs(
  opts: { url?: string; cacheSize?: number; writeBehind?: boolean; client?: TxtfsClient } = {},
) {
  const client =
    opts.client ?? new TxtfsClient({ url: opts.url ?? t.url, key: u.key, source: "mount", timeoutMs: 2000 });
  const vfs = new Vfs({
    client,
    cacheDir,
    cacheSize: opts.cacheSize ?? 1 << 20,
    uid: 0,
    gid: 0,
    logger: createLogger("vfs-test", (process.env.VFS_LOG as "silent") ?? "silent"),
    pollWait: 1,
    writeBehind: opts.writeBehind,
  });
  await vfs.start();
  vfss.push(vfs);
  return vfs;
}

async function writeFile(vfs: Vfs, path: string, text: string) {
  const fd = await vfs.create(path, 0o644);
  await vfs.write(fd, Buffer.from(text), 0);
  await vfs.release(fd);
  await vfs.drain(); // write-behind: wait until the save is on the service (or found unreachable)
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until `check` holds (the change feed is polled in the background). */
async function until(check: () => Promise<boolean> | boolean, what: string) {
  const deadline = Date.now() + 5000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

/** The service comes back (after `t.server.close()`) on the same port and data. */
async function restartService(port: string) {
  const { startServer } = await import("../../src/server/serve.ts");
  return startServer({
    host: "127.0.0.1",
    port: Number(port),
    dataDir: t.dataDir,
    retentionDays: 90,
    logger: createLogger("test", "silent"),
    rateLimit: { limit: 1_000_000 },
  });
}

async function readAll(vfs: Vfs, path: string) {
  const fd = await vfs.open(path, fsc.O_RDONLY);
  try {
    return (await vfs.read(fd, 1 << 20, 0)).toString();
  } finally {
    await vfs.release(fd);
  }
}

/** A client whose note creates wait until `open()`: a delivery round stays on its way meanwhile. */
function heldCreates() {
  const client = new TxtfsClient({ url: t.url, key: u.key, source: "mount", timeoutMs: 5000 });
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  let held = 0;
  const create = client.createFile.bind(client);
  client.createFile = async (...args: Parameters<TxtfsClient["createFile"]>) => {
    held++;
    await gate;
    return create(...args);
  };
  return { client, open, held: () => held };
}

const remote = async () =>
  (await u.api.get("/api/me/files")).body.files as { id: string; name: string; size: number }[];

/** A save built on an old version met an edit made elsewhere: the note keeps theirs, ours is a copy beside it. */
async function theirsStaysOursCopied(id: string, note: { name: string; folderId?: string }) {
  expect((await u.api.get(`/api/v1/files/${id}`)).body).toMatchObject({ content: "theirs", ...note });
  const copy = (await remote()).find((f) => f.name.includes(".conflict-"));
  expect(copy?.name).toMatch(new RegExp(`^${note.name.replace(/\.md$/, "")}\\.conflict-.+\\.md$`));
  expect((await u.api.get(`/api/v1/files/${copy!.id}`)).body.content).toBe("ours");
}

beforeEach(async () => {
  t = await startTestServer();
  u = await t.user();
  cacheDir = mkdtempSync(join(tmpdir(), "txtfs-vfs-"));
});

afterEach(async () => {
  for (const v of vfss.splice(0)) await v.stop().catch(() => {});
  await t.close().catch(() => {});
  rmSync(cacheDir, { recursive: true, force: true });
});

describe("vfs", () => {
  it("creating a note is one request; the content reaches the service", async () => {
    const vfs = await mountVfs();
    const before = vfs.stats().requests;
    await writeFile(vfs, "/a.md", "hello\n");
    expect(vfs.stats().requests - before).toBe(1);
    const [file] = await remote();
    expect(file).toMatchObject({ name: "a.md", size: 6 });
    expect((await vfs.getattr("/a.md")).size).toBe(6);
  });

  it("a rename over a note keeps its id and metadata (sed -i, os.replace)", async () => {
    const { file } = (await u.api.post("/api/v1/files", { name: "n.md", content: "old", tags: ["keep"] }))
      .body;
    const vfs = await mountVfs();
    await writeFile(vfs, "/.n.md.tmp1234", "new content");
    await vfs.rename("/.n.md.tmp1234", "/n.md");
    await vfs.drain(); // saves are write-behind
    const files = await remote();
    expect(files).toHaveLength(1);
    expect(files[0]!.id).toBe(file.id);
    const now = (await u.api.get(`/api/v1/files/${file.id}`)).body;
    expect(now).toMatchObject({ content: "new content", tags: ["keep"] });
    expect(vfs.readdir("/")).toEqual(["n.md"]);
  });

  it("vim's backupcopy=no (rename away, create again) edits the same note", async () => {
    const { file } = (await u.api.post("/api/v1/files", { name: "v.md", content: "one", context: "ctx" }))
      .body;
    const vfs = await mountVfs();
    await vfs.rename("/v.md", "/v.md~");
    await writeFile(vfs, "/v.md", "two");
    await vfs.unlink("/v.md~");
    const files = await remote();
    expect(files.map((f) => f.id)).toEqual([file.id]);
    expect((await u.api.get(`/api/v1/files/${file.id}`)).body).toMatchObject({
      content: "two",
      context: "ctx",
    });
  });

  it("vim's save (rename to note~, create note, write, fsync) is one request; a real move still goes with its save", async () => {
    const { file } = (await u.api.post("/api/v1/files", { name: "v.md", content: "one" })).body;
    const client = new TxtfsClient({ url: t.url, key: u.key, source: "mount", timeoutMs: 2000 });
    const vfs = await mountVfs({ client, writeBehind: true });
    await vfs.mkdir("/d");
    expect(await vfs.drain()).toBe(0);
    const puts = () => client.requestsByKind["PUT /api/v1/files/:id"] ?? 0;
    const edit = async (from: string, to: string, text: string) => {
      await vfs.rename(from, `${from}~`);
      const fd = await vfs.create(to, 0o644);
      await vfs.write(fd, Buffer.from(text), 0);
      await vfs.fsync(fd); // on the service before fsync returns
      await vfs.release(fd);
      await vfs.unlink(`${from}~`);
    };
    const before = puts();
    await edit("/v.md", "/v.md", "two");
    // The note kept its name and folder on the service: no rename to send, only the body.
    expect(puts() - before).toBe(1);
    expect((await u.api.get(`/api/v1/files/${file.id}`)).body).toMatchObject({
      name: "v.md",
      content: "two",
    });
    // Moved here (not sent yet), then the same dance: the move goes with the save.
    await vfs.rename("/v.md", "/d/w.md");
    await edit("/d/w.md", "/d/w.md", "three");
    expect(await vfs.drain()).toBe(0);
    expect((await remote()).map((f) => f.id)).toEqual([file.id]);
    expect((await u.api.get(`/api/v1/files/${file.id}`)).body).toMatchObject({
      name: "w.md",
      content: "three",
      folderId: (vfs.tree.lookup("/d") as { id: string }).id,
    });
  });

  it("a write through another handle while a flush waits for the journal is saved by its own flush, never dropped", async () => {
    // Two programs with one note open: A's flush waits for the journal (its lock held by a
    // delivery's answer); B writes meanwhile. A's save, once recorded, must not mark B's bytes
    // as saved: they were lost at B's close (the note showed A's save again).
    const { file } = (await u.api.post("/api/v1/files", { name: "w.md", content: "base\n" })).body;
    const vfs = await mountVfs({ writeBehind: true });
    const a = await vfs.open("/w.md", fsc.O_RDWR);
    const b = await vfs.open("/w.md", fsc.O_RDWR);
    await vfs.write(a, Buffer.from("A"), 0);
    let unlock!: () => void;
    const journal = (vfs as any).c.journal as Journal;
    const held = (journal as any).lock.run(() => new Promise<void>((r) => (unlock = r)));
    const flushA = vfs.flush(a); // waits for the journal
    await new Promise((r) => setTimeout(r, 20));
    await vfs.write(b, Buffer.from("B"), 1); // "ABse\n"
    unlock();
    await held;
    await flushA;
    await vfs.flush(b);
    await vfs.release(a);
    await vfs.release(b);
    expect(await readAll(vfs, "/w.md")).toBe("ABse\n");
    expect(await vfs.drain()).toBe(0);
    expect((await u.api.get(`/api/v1/files/${file.id}`)).body.content).toBe("ABse\n");
  });

  for (const writeBehind of [true, false])
    it(`two handles writing a note whose body is still being fetched: both writes are kept (${writeBehind ? "write-behind" : "write-through"})`, async () => {
      // Each write loaded the body into the shared buffer; the second load replaced the buffer the
      // first write had gone into (and a truncate meanwhile was undone the same way).
      const { file } = (await u.api.post("/api/v1/files", { name: "w.md", content: "0123456789\n" })).body;
      const vfs = await mountVfs({ writeBehind });
      const a = await vfs.open("/w.md", fsc.O_RDWR);
      const b = await vfs.open("/w.md", fsc.O_RDWR);
      await Promise.all([vfs.write(a, Buffer.from("A"), 1), vfs.write(b, Buffer.from("B"), 5)]);
      expect(await readAll(vfs, "/w.md")).toBe("0A234B6789\n");
      await vfs.release(a);
      await vfs.release(b);
      expect(await vfs.drain()).toBe(0);
      expect((await u.api.get(`/api/v1/files/${file.id}`)).body.content).toBe("0A234B6789\n");
    });

  it("with --write-through, a write through another handle while a save's request is on its way stays, and its flush sends it", async () => {
    // The answer used to replace the buffer with what was sent: B's bytes vanished from the mount too.
    const { file } = (await u.api.post("/api/v1/files", { name: "w.md", content: "base\n" })).body;
    const client = new TxtfsClient({ url: t.url, key: u.key, source: "mount", timeoutMs: 2000 });
    const update = client.updateFile.bind(client);
    let gate: Promise<void> | undefined;
    client.updateFile = async (...args: Parameters<TxtfsClient["updateFile"]>) => {
      const done = await update(...args);
      await gate;
      return done;
    };
    const vfs = await mountVfs({ client, writeBehind: false });
    const a = await vfs.open("/w.md", fsc.O_RDWR);
    const b = await vfs.open("/w.md", fsc.O_RDWR);
    await vfs.write(a, Buffer.from("A"), 0);
    let open!: () => void;
    gate = new Promise<void>((r) => (open = r));
    const flushA = vfs.flush(a); // its PUT is answered, the answer held back
    await new Promise((r) => setTimeout(r, 50));
    await vfs.write(b, Buffer.from("B"), 1);
    open();
    await flushA;
    gate = undefined;
    expect(await readAll(vfs, "/w.md")).toBe("ABse\n");
    await vfs.flush(b);
    await vfs.release(a);
    await vfs.release(b);
    expect((await u.api.get(`/api/v1/files/${file.id}`)).body.content).toBe("ABse\n");
    expect((await remote()).map((f) => f.name)).toEqual(["w.md"]); // built on A's save: no conflict copy
  });

  it("a note deleted remotely while a local save waits keeps showing it, and the save creates it again", async () => {
    const { file } = (await u.api.post("/api/v1/files", { name: "d.md", content: "base" })).body;
    const vfs = await mountVfs();
    const fd = await vfs.open("/d.md", fsc.O_RDWR);
    await vfs.write(fd, Buffer.from("ours"), 0);
    await vfs.flush(fd); // journalled, not delivered yet
    await u.api.delete(`/api/v1/files/${file.id}`);
    // The feed's tombstone arrives (poll wait 1 s): the pending save keeps the note in view.
    const tree = vfs.tree;
    tree.remoteDelete(file.id);
    expect(vfs.readdir("/")).toEqual(["d.md"]);
    expect((await vfs.read(fd, 100, 0)).toString()).toBe("ours");
    await vfs.release(fd);
    expect(await vfs.drain()).toBe(0);
    const files = await remote();
    expect(files.map((f) => f.name)).toEqual(["d.md"]);
    expect((await u.api.get(`/api/v1/files/${files[0]!.id}`)).body.content).toBe("ours");
  });

  it("a save made while a note deleted remotely is created again builds on it, never lost or split off", async () => {
    const { file } = (await u.api.post("/api/v1/files", { name: "d.md", content: "base" })).body;
    const h = heldCreates();
    const vfs = await mountVfs({ client: h.client });
    const fd = await vfs.open("/d.md", fsc.O_RDWR);
    expect((await vfs.read(fd, 100, 0)).toString()).toBe("base");
    await u.api.delete(`/api/v1/files/${file.id}`);
    await vfs.write(fd, Buffer.from("ours"), 0);
    await vfs.flush(fd); // delivered soon: the update finds the note gone and creates it again (held)
    while (h.held() === 0) await sleep(5);
    await vfs.write(fd, Buffer.from(" and more"), 4);
    await vfs.flush(fd); // saved while the create is on its way
    expect((await vfs.read(fd, 100, 0)).toString()).toBe("ours and more");
    h.open();
    expect(await vfs.drain()).toBe(0);
    expect((await vfs.read(fd, 100, 0)).toString()).toBe("ours and more");
    await vfs.release(fd);
    expect(await readAll(vfs, "/d.md")).toBe("ours and more");
    expect(vfs.readdir("/")).toEqual(["d.md"]);
    const files = await remote();
    expect(files.map((f) => f.name)).toEqual(["d.md"]);
    expect((await u.api.get(`/api/v1/files/${files[0]!.id}`)).body.content).toBe("ours and more");
    expect(vfs.refused).toEqual([]);
  });

  it("note bodies are cached in a ring file in the cache dir; one overwritten under the daemon is downloaded again", async () => {
    const { file } = (await u.api.post("/api/v1/files", { name: "c.md", content: "cached body ✓" })).body;
    const vfs = await mountVfs({ cacheSize: 40 }); // 10 bytes in memory: the 15-byte body goes to the ring
    const ring = join(cacheDir, "bodies.ring");
    expect(await readAll(vfs, "/c.md")).toBe("cached body ✓");
    expect(readFileSync(ring, "utf8")).toBe("cached body ✓");
    const before = vfs.stats().requests;
    expect(await readAll(vfs, "/c.md")).toBe("cached body ✓"); // from the ring: no request
    expect(vfs.stats().requests).toBe(before);
    writeFileSync(ring, "garbage"); // cut short under the daemon
    expect(await readAll(vfs, "/c.md")).toBe("cached body ✓");
    expect(vfs.stats().requests).toBeGreaterThan(before);
    await u.api.put(`/api/v1/files/${file.id}`, { content: "changed remotely" });
    const { content: _content, ...changed } = (await u.api.get(`/api/v1/files/${file.id}`)).body;
    vfs.tree.upsertFile(changed); // as the change feed would
    expect(await readAll(vfs, "/c.md")).toBe("changed remotely");
    expect(await readAll(vfs, "/c.md")).toBe("changed remotely");
  });

  it("a note renamed here and deleted elsewhere before the rename went: the delete stands, no name is left that cannot be opened", async () => {
    // Soak seeds 2849, 2862, 2871: after `txtfs sync` the mount still listed the renamed name, and
    // opening it failed with ENOENT for good (the service answered 404 for its id), while the rename
    // was reported as a save the service refused.
    const { file } = (await u.api.post("/api/v1/files", { name: "a.md", content: "x" })).body;
    const vfs = await mountVfs();
    expect(await readAll(vfs, "/a.md")).toBe("x");
    await vfs.rename("/a.md", "/b.md"); // journalled, not delivered yet
    await u.api.delete(`/api/v1/files/${file.id}`);
    vfs.tree.remoteDelete(file.id); // the feed's tombstone, while the rename waits: kept in view
    expect(await vfs.drain()).toBe(0);
    expect(vfs.readdir("/")).toEqual([]);
    await expect(vfs.getattr("/b.md")).rejects.toMatchObject({ errno: "ENOENT" });
    expect(await remote()).toEqual([]);
    expect(vfs.refused).toEqual([]);
    // Nothing of it comes back: a new note of that name is a new note.
    await writeFile(vfs, "/b.md", "new");
    expect((await remote()).map((f) => f.name)).toEqual(["b.md"]);
    expect(await readAll(vfs, "/b.md")).toBe("new");
  });

  it("a note renamed and then saved here, deleted elsewhere meanwhile: the save creates it again under its new name", async () => {
    const { file } = (await u.api.post("/api/v1/files", { name: "a.md", content: "x" })).body;
    const vfs = await mountVfs();
    await vfs.rename("/a.md", "/b.md");
    const fd = await vfs.open("/b.md", fsc.O_WRONLY | fsc.O_TRUNC);
    await vfs.write(fd, Buffer.from("ours"), 0);
    await vfs.release(fd); // journalled with the rename
    await u.api.delete(`/api/v1/files/${file.id}`);
    vfs.tree.remoteDelete(file.id);
    expect(await vfs.drain()).toBe(0);
    expect(vfs.readdir("/")).toEqual(["b.md"]);
    expect(await readAll(vfs, "/b.md")).toBe("ours");
    const files = await remote();
    expect(files.map((f) => f.name)).toEqual(["b.md"]);
    expect((await u.api.get(`/api/v1/files/${files[0]!.id}`)).body.content).toBe("ours");
    expect(vfs.refused).toEqual([]);
  });

  it("a note found gone when it is read (its delete not seen yet) leaves the listing at once; one with a save waiting stays", async () => {
    const a = (await u.api.post("/api/v1/files", { name: "a.md", content: "x" })).body.file;
    const b = (await u.api.post("/api/v1/files", { name: "b.md", content: "y" })).body.file;
    const vfs = await mountVfs();
    (vfs as any).c.follower.stop(); // the feed never tells: only the read finds out
    await u.api.delete(`/api/v1/files/${a.id}`);
    await u.api.delete(`/api/v1/files/${b.id}`);
    await expect(readAll(vfs, "/a.md")).rejects.toMatchObject({ errno: "ENOENT" });
    expect(vfs.readdir("/")).toEqual(["b.md"]);
    const fd = await vfs.open("/b.md", fsc.O_WRONLY | fsc.O_APPEND);
    await vfs.write(fd, Buffer.from("ours"), 0);
    await vfs.release(fd); // an append waits: the note stays, and the append creates it again
    expect(await vfs.drain()).toBe(0);
    expect(vfs.readdir("/")).toEqual(["b.md"]);
    const files = await remote();
    expect(files.map((f) => f.name)).toEqual(["b.md"]);
    expect((await u.api.get(`/api/v1/files/${files[0]!.id}`)).body.content).toContain("ours");
  });

  for (const writeBehind of [true, false])
    it(`a save of the same bytes made after a remote delete this mount has not seen yet creates the note again (${writeBehind ? "write-behind" : "write-through"})`, async () => {
      // Skipping such a save as "already there" lost it (soak seed 3501: `sed -i`, a remote delete,
      // `sed -i` again leaving the text as it was): the service's copy was gone before the program saved.
      const { file } = (await u.api.post("/api/v1/files", { name: "n.md", content: "same ñ\n" })).body;
      const vfs = await mountVfs({ writeBehind });
      expect(await readAll(vfs, "/n.md")).toBe("same ñ\n"); // read (and cached) as an editor does
      (vfs as any).c.follower.stop(); // the delete is not seen before the save
      await u.api.delete(`/api/v1/files/${file.id}`);
      const fd = await vfs.open("/n.md", fsc.O_WRONLY | fsc.O_TRUNC);
      await vfs.write(fd, Buffer.from("same ñ\n"), 0);
      await vfs.release(fd);
      expect(await vfs.drain()).toBe(0);
      const files = await remote();
      expect(files.map((f) => f.name)).toEqual(["n.md"]);
      expect((await u.api.get(`/api/v1/files/${files[0]!.id}`)).body.content).toBe("same ñ\n");
    });

  it("a save whose empty first step reached the service with its answer lost goes on top of it, not beside it (`echo x > note`, kill -9)", async () => {
    // CI found it: bash's `>` flushes the truncate alone; on a busy machine that empty step went
    // up alone, the daemon was killed before it recorded the answer, and the save that replaced
    // the step in the journal met our own empty version as if it were an edit made elsewhere.
    const { file } = (await u.api.post("/api/v1/files", { name: "n.md", content: "v1\n" })).body;
    const client = new TxtfsClient({ url: t.url, key: u.key, source: "mount", timeoutMs: 2000 });
    const update = client.updateFile.bind(client);
    let lost = 0;
    client.updateFile = async (...args: Parameters<TxtfsClient["updateFile"]>) => {
      const done = await update(...args);
      if (args[1].content === "" && lost++ === 0) throw new NetworkError("PUT: the answer was lost");
      return done;
    };
    const vfs = await mountVfs({ client, writeBehind: true });
    expect(await readAll(vfs, "/n.md")).toBe("v1\n");
    const fd = await vfs.open("/n.md", fsc.O_WRONLY);
    await vfs.ftruncate(fd, 0);
    await vfs.flush(fd); // the empty first step, journalled
    expect(await vfs.drain()).toBe(1); // it went up alone; its answer was lost: still waiting
    expect((await u.api.get(`/api/v1/files/${file.id}`)).body.content).toBe("");
    await vfs.write(fd, Buffer.from("x\n"), 0);
    await vfs.release(fd);
    expect(await vfs.drain()).toBe(0);
    expect((await u.api.get(`/api/v1/files/${file.id}`)).body.content).toBe("x\n");
    expect((await remote()).map((f) => f.name)).toEqual(["n.md"]);
  });

  it("a clean note deleted remotely goes away", async () => {
    const { file } = (await u.api.post("/api/v1/files", { name: "gone.md", content: "x" })).body;
    const vfs = await mountVfs();
    await u.api.delete(`/api/v1/files/${file.id}`);
    vfs.tree.remoteDelete(file.id);
    expect(vfs.readdir("/")).toEqual([]);
  });

  it("a save the service refuses (share downgraded meanwhile) is reported once and its bytes kept in a local file", async () => {
    const alice = await t.user();
    const team = (await alice.api.post("/api/v1/folders", { name: "Team" })).body.folder;
    const plan = (
      await alice.api.post("/api/v1/files", { name: "plan.md", content: "v1", folderId: team.id })
    ).body.file;
    const share = (
      await alice.api.post(`/api/v1/folders/${team.id}/share`, { email: u.email, role: "writer" })
    ).body.share;
    const vfs = await mountVfs();
    const dir = `/Shared with me/${alice.email}/Team`;
    const fd = await vfs.open(`${dir}/plan.md`, fsc.O_RDWR);
    await vfs.write(fd, Buffer.from("bob's edit"), 0);
    await vfs.flush(fd); // journalled; delivered a moment later
    expect(
      (await alice.api.request("PATCH", `/api/v1/shares/${share.id}`, { json: { role: "reader" } })).status,
    ).toBe(200);
    await vfs.release(fd);
    expect(await vfs.drain()).toBe(0);
    expect((await alice.api.get(`/api/v1/files/${plan.id}`)).body.content).toBe("v1");
    const [refused] = vfs.takeRefused();
    expect(refused).toMatchObject({ path: `${dir}/plan.md`, keptAs: `${dir}/plan.md.unsent` });
    expect(vfs.takeRefused()).toEqual([]); // reported once
    expect(vfs.refused).toHaveLength(1); // still listed by status
    expect(await readAll(vfs, `${dir}/plan.md.unsent`)).toBe("bob's edit");
    expect(vfs.localOnly().map((l) => l.path)).toContain(`${dir}/plan.md.unsent`);
  });

  it("non-note names stay local and survive a restart; renaming to .md uploads", async () => {
    let vfs = await mountVfs();
    await writeFile(vfs, "/draft.bak", "local only");
    expect(await remote()).toHaveLength(0);
    await vfs.stop();
    vfs = await mountVfs();
    expect(await readAll(vfs, "/draft.bak")).toBe("local only");
    await vfs.rename("/draft.bak", "/draft.md");
    expect(await vfs.drain()).toBe(0); // write-behind, like every save
    expect((await remote()).map((f) => f.name)).toEqual(["draft.md"]);
  });

  it("keeps both versions on a conflict", async () => {
    const { file } = (await u.api.post("/api/v1/files", { name: "c.md", content: "base" })).body;
    const vfs = await mountVfs();
    const fd = await vfs.open("/c.md", fsc.O_RDWR);
    await vfs.write(fd, Buffer.from("ours"), 0);
    await u.api.put(`/api/v1/files/${file.id}`, { content: "theirs" });
    await vfs.release(fd);
    expect(await vfs.drain()).toBe(0); // write-behind: the save is delivered after release
    const files = await remote();
    expect(files).toHaveLength(2);
    expect((await u.api.get(`/api/v1/files/${file.id}`)).body.content).toBe("theirs");
    const copy = files.find((f) => f.id !== file.id)!;
    expect(copy.name).toMatch(/^c\.conflict-.+\.md$/);
    expect((await u.api.get(`/api/v1/files/${copy.id}`)).body.content).toBe("ours");
    expect(vfs.conflicts).toHaveLength(1);
  });

  it("a save that moved the note, over a remote edit made since it was read: theirs stays, ours is kept as a copy, the note is where it was moved", async () => {
    const { file } = (await u.api.post("/api/v1/files", { name: "c.md", content: "base" })).body;
    const vfs = await mountVfs();
    await vfs.mkdir("/d");
    expect(await vfs.drain()).toBe(0);
    await vfs.rename("/c.md", "/d/m.md");
    const fd = await vfs.open("/d/m.md", fsc.O_RDWR);
    await vfs.write(fd, Buffer.from("ours"), 0);
    await u.api.put(`/api/v1/files/${file.id}`, { content: "theirs" });
    await vfs.fsync(fd); // alone in the journal: one note's save, its move with it
    await vfs.release(fd);
    expect(await vfs.drain()).toBe(0);
    await theirsStaysOursCopied(file.id, {
      name: "m.md",
      folderId: (vfs.tree.lookup("/d") as { id: string }).id,
    });
    expect(vfs.conflicts).toHaveLength(1);
  });

  it.each([
    ["alone", false],
    ["in bulk (beside another save)", true],
  ])(
    "a rename delivered %s over a remote edit is no base for an edit read before it: theirs stays, ours is a copy",
    async (_, bulk) => {
      const { file } = (await u.api.post("/api/v1/files", { name: "c.md", content: "base" })).body;
      const vfs = await mountVfs();
      const fd = await vfs.open("/c.md", fsc.O_RDWR);
      expect((await vfs.read(fd, 100, 0)).toString()).toBe("base");
      await u.api.put(`/api/v1/files/${file.id}`, { content: "theirs" });
      await vfs.rename("/c.md", "/m.md");
      if (bulk) {
        const other = await vfs.create("/other.md", 0o644);
        await vfs.write(other, Buffer.from("other"), 0);
        await vfs.release(other);
      }
      expect(await vfs.drain()).toBe(0); // the rename, applied onto "theirs"
      await vfs.write(fd, Buffer.from("ours"), 0); // built on "base", what this handle read
      await vfs.release(fd);
      expect(await vfs.drain()).toBe(0);
      await theirsStaysOursCopied(file.id, { name: "m.md" });
    },
  );

  it.each([
    ["write-behind", true],
    ["write-through", false],
  ])(
    "a rename over a note whose source changed elsewhere unseen stands whole (%s): the target keeps what was moved, the source's edit shows again",
    async (_, writeBehind) => {
      // Soak seed 2801 (`printf apple > a.md`, a remote edit of b.md, `mv -T b.md a.md`): the move
      // put b's bytes on a, then its delete of b met the edit (412) and failed with ESTALE: the
      // program saw its mv fail, yet a.md no longer held its save.
      const vfs = await mountVfs({ writeBehind });
      await writeFile(vfs, "/a.md", "A");
      await writeFile(vfs, "/b.md", "B"); // written here: its body is known without asking
      expect(await vfs.drain()).toBe(0);
      const a = (await remote()).find((f) => f.name === "a.md")!;
      const b = (await remote()).find((f) => f.name === "b.md")!;
      await writeFile(vfs, "/a.md", "ours");
      await u.api.put(`/api/v1/files/${b.id}`, { content: "theirs" });
      await vfs.rename("/b.md", "/a.md");
      expect(await readAll(vfs, "/a.md")).toBe("B"); // what the program moved
      expect(await vfs.drain()).toBe(0);
      expect((await u.api.get(`/api/v1/files/${a.id}`)).body.content).toBe("B");
      expect((await u.api.get(`/api/v1/files/${b.id}`)).body).toMatchObject({
        name: "b.md",
        content: "theirs",
      });
      expect(await readAll(vfs, "/b.md")).toBe("theirs");
    },
  );

  it("a remote change of metadata only is no conflict: our content lands, their tags stay", async () => {
    const { file } = (await u.api.post("/api/v1/files", { name: "m.md", content: "base" })).body;
    const vfs = await mountVfs();
    const fd = await vfs.open("/m.md", fsc.O_RDWR);
    await vfs.write(fd, Buffer.from("ours"), 0);
    await u.api.put(`/api/v1/files/${file.id}`, { tags: ["theirs"] });
    await vfs.release(fd);
    expect(await vfs.drain()).toBe(0);
    expect(await remote()).toHaveLength(1);
    expect((await u.api.get(`/api/v1/files/${file.id}`)).body).toMatchObject({
      content: "ours",
      tags: ["theirs"],
    });
    expect(vfs.conflicts).toHaveLength(0);
  });

  it("journals writes while the service is unreachable and replays them in order", async () => {
    const { file } = (await u.api.post("/api/v1/files", { name: "j.md", content: "v1" })).body;
    const moved = (await u.api.post("/api/v1/files", { name: "k.md", content: "k", tags: ["kept"] })).body
      .file;
    const vfs = await mountVfs();
    expect(await readAll(vfs, "/j.md")).toBe("v1"); // now cached
    const port = new URL(t.url).port;
    await t.server.close(); // the service goes away (store closed; data stays on disk)
    await writeFile(vfs, "/j.md", "v2 offline");
    await writeFile(vfs, "/new.md", "made offline");
    await vfs.rename("/k.md", "/k2.md"); // a rename of a note is journalled too
    expect(await readAll(vfs, "/j.md")).toBe("v2 offline");
    expect(vfs.readdir("/").sort()).toEqual(["j.md", "k2.md", "new.md"]);
    expect(vfs.stats().dirty).toBe(3);
    await vfs.stop(); // the daemon stops with the writes still journalled
    // The service comes back on the same port and data; a new daemon delivers the journal.
    const again = await restartService(port);
    try {
      const vfs2 = await mountVfs();
      expect(vfs2.readdir("/").sort()).toEqual(["j.md", "k2.md", "new.md"]); // restored before delivery
      expect(await vfs2.drain()).toBe(0);
      const files = await remote();
      expect(files.map((f) => f.name).sort()).toEqual(["j.md", "k2.md", "new.md"]);
      expect((await u.api.get(`/api/v1/files/${moved.id}`)).body).toMatchObject({
        name: "k2.md",
        tags: ["kept"],
      });
      expect((await u.api.get(`/api/v1/files/${file.id}`)).body.content).toBe("v2 offline");
      await vfs2.stop();
    } finally {
      await again.close();
    }
  });

  it("a drain (unmount, txtfs sync, fsync) sends what waits in one request, up to the service's 500", async () => {
    const client = new TxtfsClient({ url: t.url, key: u.key, source: "mount", timeoutMs: 2000 });
    const vfs = await mountVfs({ client, writeBehind: true });
    const port = new URL(t.url).port;
    await t.server.close(); // the saves wait in the journal
    for (let i = 0; i < 450; i++) {
      const fd = await vfs.create(`/w${i}.md`, 0o644);
      await vfs.write(fd, Buffer.from(`w ${i}\n`), 0);
      await vfs.release(fd);
    }
    const again = await restartService(port);
    try {
      const syncs = () => client.requestsByKind["POST /api/v1/sync"] ?? 0;
      const before = syncs();
      expect(await vfs.drain()).toBe(0);
      expect(syncs() - before).toBe(1); // 200 at a time (bursts) would be three, one after the other
      const files = await remote();
      expect(files.length).toBe(450);
      expect(
        (await u.api.get(`/api/v1/files/${files.find((f) => f.name === "w449.md")!.id}`)).body.content,
      ).toBe("w 449\n");
      await vfs.stop();
    } finally {
      await again.close();
    }
  });

  it("the cache dir's journal removed from under the daemon: it goes on, delivers everything, and a restart still finds what was pending", async () => {
    const vfs = await mountVfs({ writeBehind: true });
    const save = async (v: Vfs, path: string, text: string) => {
      const fd = await v.create(path, 0o644);
      await v.write(fd, Buffer.from(text), 0);
      await v.release(fd);
    };
    // A burst (a bulk request, whose copy on its way is written into the journal's dir) whose
    // journal goes away while it waits: the delivery must not take the daemon down.
    for (let i = 0; i < 30; i++) await save(vfs, `/a${i}.md`, `a ${i}\n`);
    rmSync(join(cacheDir, "journal"), { recursive: true, force: true });
    for (let i = 0; i < 30; i++) await save(vfs, `/b${i}.md`, `b ${i}\n`);
    expect(await vfs.drain()).toBe(0);
    expect((await remote()).length).toBe(60);

    // Again with the service away: what is pending is written to a new log, which a restart reads.
    const port = new URL(t.url).port;
    await t.server.close();
    await save(vfs, "/c.md", "c before\n");
    rmSync(join(cacheDir, "journal"), { recursive: true, force: true });
    await save(vfs, "/d.md", "d after\n");
    await vfs.stop();
    const again = await restartService(port);
    try {
      const vfs2 = await mountVfs();
      expect(await vfs2.drain()).toBe(0);
      const names = (await remote()).map((f) => f.name);
      expect(names).toContain("c.md");
      expect(names).toContain("d.md");
      expect(await readAll(vfs2, "/c.md")).toBe("c before\n");
      expect(await readAll(vfs2, "/d.md")).toBe("d after\n");
      await vfs2.stop();
    } finally {
      await again.close();
    }
  });

  it("a burst of saves goes up in bulk: 60 new notes, 60 appends and 20 moves in a few requests", async () => {
    const vfs = await mountVfs();
    await vfs.mkdir("/to");
    let before = vfs.stats().requests;
    for (let i = 0; i < 60; i++) {
      const fd = await vfs.create(`/n${i}.md`, 0o644);
      await vfs.write(fd, Buffer.from(`note ${i}\n`), 0);
      await vfs.release(fd);
    }
    expect(await vfs.drain()).toBe(0);
    expect(vfs.stats().requests - before).toBeLessThanOrEqual(3);
    let files = await remote();
    expect(files.map((f) => f.name).sort()).toEqual(Array.from({ length: 60 }, (_, i) => `n${i}.md`).sort());

    before = vfs.stats().requests;
    for (let i = 0; i < 60; i++) {
      const fd = await vfs.open(`/n${i}.md`, fsc.O_WRONLY | fsc.O_APPEND);
      await vfs.write(fd, Buffer.from(`more ${i}\n`), 0);
      await vfs.release(fd);
    }
    for (let i = 0; i < 20; i++) await vfs.rename(`/n${i}.md`, `/to/m${i}.md`);
    expect(await vfs.drain()).toBe(0);
    expect(vfs.stats().requests - before).toBeLessThanOrEqual(4);
    files = await remote();
    expect(files).toHaveLength(60);
    const byName = new Map(files.map((f) => [f.name, f]));
    for (const i of [0, 19, 20, 59]) {
      const f = byName.get(i < 20 ? `m${i}.md` : `n${i}.md`)!;
      expect((await u.api.get(`/api/v1/files/${f.id}`)).body.content).toBe(`note ${i}\nmore ${i}\n`);
    }
    expect(vfs.readdir("/to")).toHaveLength(20);
  });

  it("a long burst goes up while it goes on, never waiting for a pause (there is none)", async () => {
    const client = new TxtfsClient({ url: t.url, key: u.key, source: "mount", timeoutMs: 5000 });
    let saves = 0;
    let firstRoundAt: number | undefined;
    const sync = client.sync.bind(client);
    client.sync = (...args: Parameters<TxtfsClient["sync"]>) => {
      firstRoundAt ??= saves;
      return sync(...args);
    };
    const create = client.createFile.bind(client); // a round of one note
    client.createFile = (...args: Parameters<TxtfsClient["createFile"]>) => {
      firstRoundAt ??= saves;
      return create(...args);
    };
    const vfs = await mountVfs({ client, writeBehind: true });
    for (; saves < 300; saves++) {
      const fd = await vfs.create(`/b${saves}.md`, 0o644);
      await vfs.write(fd, Buffer.from(`burst ${saves}\n`), 0);
      await vfs.release(fd);
      await new Promise(setImmediate); // the next save is the next FUSE call: timers due run between
    }
    // The first round went once a bulk request's worth (200) was waiting, not at the end (a 0 ms
    // timer, put off by every save of the loop, never fired while it went on).
    expect(firstRoundAt).toBeGreaterThanOrEqual(1);
    expect(firstRoundAt).toBeLessThanOrEqual(201);
    expect(await vfs.drain()).toBe(0);
    const files = await remote();
    expect(files).toHaveLength(300);
    for (const f of files.filter((x) => ["b0.md", "b64.md", "b299.md"].includes(x.name)))
      expect((await u.api.get(`/api/v1/files/${f.id}`)).body.content).toBe(`burst ${f.name.slice(1, -3)}\n`);
  });
  it("a bulk delivery whose answer was lost goes again unchanged: no note is created twice", async () => {
    const journal = new Journal(cacheDir);
    await journal.load();
    const items: BulkItem[] = [];
    for (const name of ["p.md", "q.md"]) {
      const body = { name, content: `${name} body\n`, folderId: null };
      const entry = await journal.put({
        fileId: null,
        createKey: randomUUID(),
        baseEtag: null,
        path: `/${name}`,
        ...body,
      });
      items.push({ key: Journal.keyOf(entry), op: "file.create", body });
    }
    const [bulk] = bulksOf(items);
    journal.setInflightBulk(bulk);
    journal.close();
    // The service applied it, but its answer never arrived: the daemon died meanwhile.
    const client = new TxtfsClient({ url: t.url, key: u.key, source: "mount" });
    expect(await pushBulk(client, bulk!)).toHaveLength(2);

    const vfs = await mountVfs(); // finds the journal and the bulk on its way
    expect(await vfs.drain()).toBe(0);
    const files = await remote();
    expect(files.map((f) => f.name).sort()).toEqual(["p.md", "q.md"]);
    expect(vfs.readdir("/").sort()).toEqual(["p.md", "q.md"]);
    expect(await readAll(vfs, "/q.md")).toBe("q.md body\n");
  });

  it("a single save whose answer was lost goes again and finds its bytes there: no conflict copy", async () => {
    const created = await u.api.post("/api/v1/files", { name: "lost.md", content: "v1\n" });
    const note = created.body.file;
    const journal = new Journal(cacheDir);
    await journal.load();
    await journal.put({
      fileId: note.id,
      createKey: randomUUID(),
      name: "lost.md",
      folderId: null,
      content: "v2\n",
      baseEtag: note.etag,
      baseHash: note.contentHash,
      path: "/lost.md",
    });
    journal.close();
    // The service applied it (If-Match v1), but the daemon died before it heard the answer.
    const client = new TxtfsClient({ url: t.url, key: u.key, source: "mount" });
    await client.updateFile(note.id, { content: "v2\n" }, { ifMatch: note.etag });

    const vfs = await mountVfs(); // the journal sends v2 again, based on v1: a 412
    expect(await vfs.drain()).toBe(0);
    const files = await remote();
    expect(files.map((f) => f.name)).toEqual(["lost.md"]);
    expect((await u.api.get(`/api/v1/files/${note.id}`)).body.content).toBe("v2\n");
    expect(vfs.conflicts).toEqual([]);
  });

  it("rm -rf is write-behind: deletes go up in bulk; a note removed before it left costs nothing", async () => {
    const vfs = await mountVfs();
    await vfs.mkdir("/d");
    await vfs.mkdir("/d/e");
    for (let i = 0; i < 10; i++) await writeFile(vfs, `/d/e/n${i}.md`, `note ${i}`);
    let before = vfs.stats().requests;
    for (let i = 0; i < 10; i++) await vfs.unlink(`/d/e/n${i}.md`);
    await vfs.rmdir("/d/e");
    await vfs.rmdir("/d");
    expect(vfs.readdir("/")).toEqual([]); // gone at once
    expect(await vfs.drain()).toBe(0);
    expect(vfs.stats().requests - before).toBe(1); // one bulk request
    expect(await remote()).toEqual([]);
    expect((await u.api.get("/api/me/folders")).body.folders).toEqual([]);

    const fd = await vfs.create("/tmp.md", 0o644);
    await vfs.write(fd, Buffer.from("short-lived"), 0);
    await vfs.release(fd);
    before = vfs.stats().requests;
    await vfs.unlink("/tmp.md");
    expect(await vfs.drain()).toBe(0);
    expect(vfs.stats().requests - before).toBe(0);
    expect(await remote()).toEqual([]);
  });

  describe("a note deleted and created again (tar -x, git checkout) continues", () => {
    async function tarOver(vfs: Vfs, path: string, text: string, pauseMs = 0) {
      await vfs.unlink(path);
      if (pauseMs) await sleep(pauseMs);
      await writeFile(vfs, path, text);
    }

    it("while a delivery of other saves is on its way", async () => {
      const { file } = (await u.api.post("/api/v1/files", { name: "a.md", content: "one", tags: ["t"] }))
        .body;
      const h = heldCreates();
      const vfs = await mountVfs({ client: h.client });
      const fd = await vfs.create("/other.md", 0o644);
      await vfs.write(fd, Buffer.from("other"), 0);
      await vfs.release(fd);
      while (h.held() === 0) await sleep(5); // the round taking other.md's create is on its way
      const unlinked = vfs.unlink("/a.md").then(() => {
        const again = vfs.create("/a.md", 0o644);
        return again.then(async (fd2) => {
          await vfs.write(fd2, Buffer.from("two"), 0);
          await vfs.release(fd2);
        });
      });
      await unlinked;
      h.open();
      expect(await vfs.drain()).toBe(0);
      const files = await remote();
      expect(files.map((f) => f.name).sort()).toEqual(["a.md", "other.md"]);
      expect(files.find((f) => f.name === "a.md")!.id).toBe(file.id);
      expect((await u.api.get(`/api/v1/files/${file.id}`)).body).toMatchObject({
        content: "two",
        tags: ["t"],
      });
    });

    it("when a delivery would start between the delete and the create", async () => {
      const { file } = (await u.api.post("/api/v1/files", { name: "a.md", content: "one", tags: ["t"] }))
        .body;
      const vfs = await mountVfs();
      // Longer than the quiet moment after which a delivery starts (20 ms), within the delete's grace.
      await tarOver(vfs, "/a.md", "two", 60);
      const files = await remote();
      expect(files.map((f) => f.id)).toEqual([file.id]);
      expect((await u.api.get(`/api/v1/files/${file.id}`)).body).toMatchObject({
        content: "two",
        tags: ["t"],
      });
    });

    it("a delete with nothing after it still leaves on its own; `txtfs sync` takes it at once", async () => {
      await u.api.post("/api/v1/files", { name: "a.md", content: "one" });
      await u.api.post("/api/v1/files", { name: "b.md", content: "two" });
      const vfs = await mountVfs();
      await vfs.unlink("/a.md");
      const deadline = Date.now() + 5000;
      while ((await remote()).length > 1 && Date.now() < deadline) await sleep(20);
      expect((await remote()).map((f) => f.name)).toEqual(["b.md"]);
      await vfs.unlink("/b.md");
      expect(await vfs.drain()).toBe(0);
      expect(await remote()).toEqual([]);
    });
  });

  it("deletes made offline are delivered later; one over a note changed remotely meanwhile is not applied", async () => {
    const kept = (await u.api.post("/api/v1/files", { name: "kept.md", content: "v1" })).body.file;
    await u.api.post("/api/v1/files", { name: "gone.md", content: "bye" });
    const vfs = await mountVfs();
    const port = new URL(t.url).port;
    await t.server.close();
    await vfs.unlink("/kept.md");
    await vfs.unlink("/gone.md");
    expect(vfs.readdir("/")).toEqual([]);
    await vfs.stop(); // both deletes still journalled
    const again = await restartService(port);
    try {
      // Someone edits kept.md before the deletes arrive: that edit must not be lost.
      await u.api.put(`/api/v1/files/${kept.id}`, { content: "v2 remote" });
      const vfs2 = await mountVfs();
      expect(vfs2.readdir("/")).toEqual([]); // restored as deleted
      expect(await vfs2.drain()).toBe(0);
      expect((await remote()).map((f) => f.name)).toEqual(["kept.md"]);
      expect(vfs2.readdir("/")).toEqual(["kept.md"]); // shows again
      expect(await readAll(vfs2, "/kept.md")).toBe("v2 remote");
      await vfs2.stop();
    } finally {
      await again.close();
    }
  });

  it("mkdir is write-behind: a new tree with notes inside goes up in one request, in order", async () => {
    const vfs = await mountVfs();
    let before = vfs.stats().requests;
    await vfs.mkdir("/a");
    await vfs.mkdir("/a/b");
    await vfs.mkdir("/a/b/c");
    for (const [path, text] of [
      ["/a/top.md", "top"],
      ["/a/b/c/deep.md", "deep"],
    ]) {
      const fd = await vfs.create(path!, 0o644);
      await vfs.write(fd, Buffer.from(text!), 0);
      await vfs.release(fd);
    }
    expect(vfs.readdir("/a").sort()).toEqual(["b", "top.md"]); // shown at once
    expect((await vfs.getattr("/a/b/c")).mode & 0o170000).toBe(0o040000);
    expect(await vfs.drain()).toBe(0);
    expect(vfs.stats().requests - before).toBe(1);
    const { folders } = (await u.api.get("/api/me/folders")).body as {
      folders: { id: string; name: string; parentFolderId: string | null }[];
    };
    const byName = new Map(folders.map((f) => [f.name, f]));
    expect(byName.get("a")!.parentFolderId).toBeNull();
    expect(byName.get("b")!.parentFolderId).toBe(byName.get("a")!.id);
    expect(byName.get("c")!.parentFolderId).toBe(byName.get("b")!.id);
    const files = (await u.api.get("/api/me/files")).body.files as { name: string; folderId: string }[];
    expect(files.find((f) => f.name === "deep.md")!.folderId).toBe(byName.get("c")!.id);
    expect(files.find((f) => f.name === "top.md")!.folderId).toBe(byName.get("a")!.id);
    expect(await readAll(vfs, "/a/b/c/deep.md")).toBe("deep");

    // A tree made and removed before it left costs nothing; a new folder renamed at once keeps its name.
    before = vfs.stats().requests;
    await vfs.mkdir("/x");
    await vfs.mkdir("/x/y");
    await vfs.rmdir("/x/y");
    await vfs.rmdir("/x");
    expect(await vfs.drain()).toBe(0);
    expect(vfs.stats().requests - before).toBe(0);
    await vfs.mkdir("/r");
    await vfs.rename("/r", "/r2");
    expect(await vfs.drain()).toBe(0);
    const names = ((await u.api.get("/api/me/folders")).body.folders as { name: string }[]).map(
      (f) => f.name,
    );
    expect(names.sort()).toEqual(["a", "b", "c", "r2"]);
  });

  it("a folder made offline, with a note inside, survives a restart of the daemon and is delivered", async () => {
    const vfs = await mountVfs();
    const port = new URL(t.url).port;
    await t.server.close();
    await vfs.mkdir("/off");
    await writeFile(vfs, "/off/n.md", "made offline");
    await vfs.stop();
    const again = await restartService(port);
    try {
      const vfs2 = await mountVfs();
      expect(vfs2.readdir("/off")).toEqual(["n.md"]); // restored before delivery
      expect(await vfs2.drain()).toBe(0);
      const { folders } = (await u.api.get("/api/me/folders")).body as {
        folders: { id: string; name: string }[];
      };
      expect(folders.map((f) => f.name)).toEqual(["off"]);
      const files = (await u.api.get("/api/me/files")).body.files as { name: string; folderId: string }[];
      expect(files).toMatchObject([{ name: "n.md", folderId: folders[0]!.id }]);
      expect(vfs2.readdir("/off")).toEqual(["n.md"]);
      await vfs2.stop();
    } finally {
      await again.close();
    }
  });

  it("an uncached read with the service down fails with EIO, fast", async () => {
    await u.api.post("/api/v1/files", { name: "x.md", content: "never read" });
    const vfs = await mountVfs();
    await t.server.close();
    const started = Date.now();
    await expect(readAll(vfs, "/x.md")).rejects.toMatchObject({ errno: "EIO" });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("sees remote changes through the feed", async () => {
    const vfs = await mountVfs();
    const { file } = (await u.api.post("/api/v1/files", { name: "r.md", content: "x" })).body;
    for (let i = 0; i < 40 && !vfs.readdir("/").includes("r.md"); i++)
      await new Promise((r) => setTimeout(r, 50));
    expect(vfs.readdir("/")).toContain("r.md");
    await u.api.put(`/api/v1/files/${file.id}`, { name: "renamed.md", content: "changed" });
    for (let i = 0; i < 40 && !vfs.readdir("/").includes("renamed.md"); i++)
      await new Promise((r) => setTimeout(r, 50));
    expect(await readAll(vfs, "/renamed.md")).toBe("changed");
    await u.api.delete(`/api/v1/files/${file.id}`);
    for (let i = 0; i < 40 && vfs.readdir("/").length; i++) await new Promise((r) => setTimeout(r, 50));
    expect(vfs.readdir("/")).toEqual([]);
  });

  it("write-behind: a save returns before delivery, reads see it, drain delivers it once", async () => {
    const vfs = await mountVfs();
    const before = vfs.stats().requests;
    const fd = await vfs.create("/wb.md", 0o644);
    await vfs.write(fd, Buffer.from("draft"), 0);
    await vfs.release(fd);
    expect(await readAll(vfs, "/wb.md")).toBe("draft");
    expect(await vfs.drain()).toBe(0);
    expect(vfs.stats().requests - before).toBe(1);
    expect((await remote()).map((f) => f.name)).toEqual(["wb.md"]);
    expect((await u.api.get(`/api/v1/files/${(await remote())[0]!.id}`)).body.content).toBe("draft");
  });

  it("write-behind: saves of one note in quick succession land in order, never as conflicts", async () => {
    const vfs = await mountVfs();
    await writeFile(vfs, "/seq.md", "0\n");
    for (let i = 1; i <= 30; i++) {
      // Alternate appends and truncating rewrites, without waiting for delivery in between.
      const fd = await vfs.open("/seq.md", fsc.O_WRONLY | (i % 3 === 0 ? 0 : fsc.O_APPEND));
      if (i % 3 === 0) await vfs.ftruncate(fd, 0);
      await vfs.write(fd, Buffer.from(`${i}\n`), i % 3 === 0 ? 0 : 1 << 20);
      await vfs.flush(fd);
      await vfs.release(fd);
      if (i % 7 === 0) await sleep(5); // let some deliveries land between saves
    }
    expect(await vfs.drain()).toBe(0);
    const files = await remote();
    expect(files.map((f) => f.name)).toEqual(["seq.md"]);
    expect(vfs.conflicts).toEqual([]);
    expect((await u.api.get(`/api/v1/files/${files[0]!.id}`)).body.content).toBe("30\n");
    expect(await readAll(vfs, "/seq.md")).toBe("30\n");
  });

  it("write-behind: renaming or deleting a note still on its way waits for it", async () => {
    const vfs = await mountVfs();
    for (const name of ["a", "b"]) {
      const fd = await vfs.create(`/${name}.md`, 0o644);
      await vfs.write(fd, Buffer.from(name), 0);
      await vfs.release(fd);
    }
    await vfs.rename("/a.md", "/a2.md");
    await vfs.unlink("/b.md");
    expect(await vfs.drain()).toBe(0);
    const files = await remote();
    expect(files.map((f) => f.name)).toEqual(["a2.md"]);
    expect((await u.api.get(`/api/v1/files/${files[0]!.id}`)).body.content).toBe("a");
  });

  it("write-behind: a rename is shown at once, sent later keeping the note, and never undone by the feed", async () => {
    const { file } = (await u.api.post("/api/v1/files", { name: "r.md", content: "r", tags: ["t"] })).body;
    const vfs = await mountVfs();
    // Not the feed's polls: another client's change below makes it answer and poll again, once or
    // twice depending on the machine's load.
    const sent = () => vfs.stats().requests - vfs.stats().feedPolls;
    const before = sent();
    await vfs.rename("/r.md", "/r2.md");
    expect(vfs.readdir("/")).toEqual(["r2.md"]);
    // Another client changes the note meanwhile: the feed brings its old name back, which must not
    // undo our rename while it is on its way.
    await u.api.put(`/api/v1/files/${file.id}`, { tags: ["t", "theirs"] });
    await sleep(300);
    expect(vfs.readdir("/")).toEqual(["r2.md"]);
    expect(await vfs.drain()).toBe(0);
    expect((await u.api.get(`/api/v1/files/${file.id}`)).body).toMatchObject({
      name: "r2.md",
      tags: ["t", "theirs"],
      content: "r",
    });
    // A rename and an edit of the same note: the edit lands on the renamed note, no conflict.
    await vfs.rename("/r2.md", "/r3.md");
    const fd = await vfs.open("/r3.md", fsc.O_WRONLY | fsc.O_APPEND);
    await vfs.write(fd, Buffer.from("+more"), 1);
    await vfs.release(fd);
    expect(await vfs.drain()).toBe(0);
    expect((await u.api.get(`/api/v1/files/${file.id}`)).body).toMatchObject({
      name: "r3.md",
      content: "r+more",
    });
    expect(vfs.conflicts).toEqual([]);
    expect((await remote()).map((f) => f.name)).toEqual(["r3.md"]);
    expect(sent() - before).toBeLessThanOrEqual(5);
  });

  it("the feed's echo of our own save, come before the save's answer, is no remote change", async () => {
    // The kernel is told nothing changed behind it (no stale window: opens keep the page cache and
    // mmap; fsx once failed an mmap with ENODEV on a direct-I/O open under load).
    const client = new TxtfsClient({ url: t.url, key: u.key, source: "mount", timeoutMs: 5000 });
    let held: Promise<void> | undefined;
    for (const method of ["updateFile", "sync"] as const) {
      const real = (client[method] as (...a: unknown[]) => Promise<unknown>).bind(client);
      (client as unknown as Record<string, unknown>)[method] = async (...args: unknown[]) => {
        const answer = await real(...args);
        await held; // the service has it (and the feed): its answer comes later
        return answer;
      };
    }
    const vfs = await mountVfs({ client });
    await writeFile(vfs, "/echo.md", "one");
    const { file } = (await u.api.post("/api/v1/files", { name: "theirs.md", content: "a" })).body;
    await until(() => vfs.readdir("/").includes("theirs.md"), "the feed");
    const changed: (string | undefined)[] = [];
    vfs.onRemoteChange((path) => changed.push(path));
    let answer!: () => void;
    held = new Promise<void>((r) => (answer = r));
    try {
      const fd = await vfs.open("/echo.md", fsc.O_WRONLY | fsc.O_TRUNC);
      await vfs.write(fd, Buffer.from("two, longer"), 0);
      await vfs.release(fd);
      const rec = (await remote()).find((f) => f.name === "echo.md")!;
      const saved = async () => (await u.api.get(`/api/v1/files/${rec.id}`)).body.content === "two, longer";
      await until(saved, "the save");
      // The feed brings the echo, then another client's change (the control) after it.
      await u.api.put(`/api/v1/files/${file.id}`, { content: "b" });
      await until(() => changed.length > 0, "the feed's next change");
      expect(changed).toEqual(["/theirs.md"]);
    } finally {
      answer();
    }
    expect(await vfs.drain()).toBe(0);
    expect(await readAll(vfs, "/echo.md")).toBe("two, longer");
    expect(vfs.conflicts).toEqual([]);
    expect(changed).toEqual(["/theirs.md"]);
  });

  it("write-through (--write-through): release returns after the service has the save", async () => {
    const vfs = await mountVfs({ writeBehind: false });
    const fd = await vfs.create("/wt.md", 0o644);
    await vfs.write(fd, Buffer.from("now"), 0);
    await vfs.release(fd);
    const files = await remote();
    expect(files.map((f) => f.name)).toEqual(["wt.md"]);
    expect((await u.api.get(`/api/v1/files/${files[0]!.id}`)).body.content).toBe("now");
  });

  it("fsync delivers the save before it returns", async () => {
    const vfs = await mountVfs();
    const fd = await vfs.create("/fs.md", 0o644);
    await vfs.write(fd, Buffer.from("synced"), 0);
    await vfs.fsync(fd);
    expect((await remote()).map((f) => f.name)).toEqual(["fs.md"]); // before release
    await vfs.release(fd);
  });

  it("the content cache stays within its bound", async () => {
    await u.api.post("/api/v1/files/import", {
      files: Array.from({ length: 40 }, (_, i) => ({ path: `n${i}.md`, content: "x".repeat(10_000) })),
    });
    const vfs = await mountVfs({ cacheSize: 64 * 1024 });
    for (let i = 0; i < 40; i++) await readAll(vfs, `/n${i}.md`);
    expect(vfs.stats().cacheBytes).toBeLessThanOrEqual(64 * 1024);
    expect(vfs.stats().cacheEntries).toBeGreaterThan(0);
  });
});

describe("appends without the body (file.append)", () => {
  it("to a note read here: only the appended bytes go, and the version they make is cached (no download)", async () => {
    const vfs = await mountVfs();
    const body = "a line of a long note\n".repeat(2_500); // 55 KB
    await writeFile(vfs, "/long.md", body);
    expect(await readAll(vfs, "/long.md")).toBe(body);
    const before = vfs.metrics().requests;
    for (let i = 0; i < 10; i++) {
      const fd = await vfs.open("/long.md", fsc.O_WRONLY | fsc.O_APPEND);
      await vfs.write(fd, Buffer.from(`appended ${i}\n`), 0);
      await vfs.release(fd);
      if (i % 3 === 0) {
        // A read sends what is on its way first, then reads the version it made: from the cache.
        expect((await readAll(vfs, "/long.md")).endsWith(`appended ${i}\n`)).toBe(true);
      }
    }
    expect(await vfs.drain()).toBe(0);
    const want = body + Array.from({ length: 10 }, (_, i) => `appended ${i}\n`).join("");
    expect(await readAll(vfs, "/long.md")).toBe(want);
    const after = vfs.metrics().requests;
    // The appends went as themselves, not as the 55 KB body; no body came back either.
    expect(after.bytesSent - before.bytesSent).toBeLessThan(5_000);
    expect(after.byKind["GET /api/v1/files/:id"] ?? 0).toBe(before.byKind["GET /api/v1/files/:id"] ?? 0);
    expect(after.bytesReceived - before.bytesReceived).toBeLessThan(20_000);
    const [note] = await remote();
    expect((await u.api.get(`/api/v1/files/${note!.id}`)).body.content).toBe(want);
  });

  it("after a remote edit the mount has not heard of: they land on it, and a read shows that, never the cached body with them", async () => {
    const vfs = await mountVfs();
    await writeFile(vfs, "/log.md", "mine\n");
    expect(await readAll(vfs, "/log.md")).toBe("mine\n");
    const [note] = await remote();
    // Changed elsewhere; the feed has not told this mount yet when the append goes.
    await u.api.put(`/api/v1/files/${note!.id}`, { content: "theirs\n" });
    const fd = await vfs.open("/log.md", fsc.O_WRONLY | fsc.O_APPEND);
    await vfs.write(fd, Buffer.from("appended\n"), 0);
    await vfs.release(fd);
    expect(await vfs.drain()).toBe(0);
    expect((await u.api.get(`/api/v1/files/${note!.id}`)).body.content).toBe("theirs\nappended\n");
    await until(
      async () => (await readAll(vfs, "/log.md")) === "theirs\nappended\n",
      "the note as the service has it",
    );
  });

  it("a truncate while an appender's close is still on its way empties the note: the appends never fill it again", async () => {
    const vfs = await mountVfs();
    await writeFile(vfs, "/n.md", "first line\n");
    // `echo a >> n.md; echo replaced > n.md`: the kernel sends the first close after the second open.
    const a = await vfs.open("/n.md", fsc.O_WRONLY | fsc.O_APPEND);
    await vfs.write(a, Buffer.from("a\n"), 0);
    await vfs.flush(a);
    const b = await vfs.open("/n.md", fsc.O_WRONLY);
    await vfs.truncate("/n.md", 0); // libfuse2: open(O_TRUNC) is open, then truncate by path
    await vfs.write(b, Buffer.from("replaced\n"), 0);
    await vfs.flush(b);
    await vfs.release(b);
    await vfs.release(a);
    expect(await readAll(vfs, "/n.md")).toBe("replaced\n");
    expect(await vfs.drain()).toBe(0);
    const [note] = await remote();
    expect((await u.api.get(`/api/v1/files/${note!.id}`)).body.content).toBe("replaced\n");
  });

  it("a save opened while our appends were on their way builds on them: no conflict, also after a restart", async () => {
    const first = await mountVfs();
    await writeFile(first, "/log.md", "first\n");
    await first.stop();
    const vfs = await mountVfs(); // a new daemon: the body is not here, `>>` goes without it
    const a = await vfs.open("/log.md", fsc.O_WRONLY | fsc.O_APPEND);
    await vfs.write(a, Buffer.from("appended\n"), 0);
    await vfs.release(a);
    // Opened while the append waits (its base: the version before it), written after it went.
    const w = await vfs.open("/log.md", fsc.O_WRONLY);
    await vfs.drain();
    await vfs.ftruncate(w, 0);
    await vfs.write(w, Buffer.from("rewritten\n"), 0);
    await vfs.release(w);
    await vfs.stop(); // the rewrite is journalled with the version the append made as its base
    const again = await mountVfs();
    expect(await again.drain()).toBe(0);
    const files = await remote();
    expect(files.map((f) => f.name)).toEqual(["log.md"]); // no conflict copy
    expect(await readAll(again, "/log.md")).toBe("rewritten\n");
  });
});

describe("a rename on its way is never undone by what comes back meanwhile", () => {
  const remoteNote = async (id: string) => (await u.api.get(`/api/v1/files/${id}`)).body;

  /** A client whose writes wait at a gate: `held()` of them are waiting; `open()` lets them all go. */
  function gatedWrites() {
    const client = new TxtfsClient({ url: t.url, key: u.key, source: "mount", timeoutMs: 5000 });
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    let held = 0;
    for (const m of ["sync", "createFolder", "createFile", "updateFile"] as const) {
      const call = (client[m] as (...a: unknown[]) => Promise<unknown>).bind(client);
      (client as unknown as Record<string, unknown>)[m] = async (...a: unknown[]) => {
        held++;
        await gate;
        return call(...a);
      };
    }
    return { client, open, held: () => held };
  }

  it("into a folder made here that the service has not got yet: the feed's record of its old place", async () => {
    const { file } = (await u.api.post("/api/v1/files", { name: "r.md", content: "r" })).body;
    const gated = gatedWrites();
    const vfs = await mountVfs({ client: gated.client });
    try {
      await vfs.mkdir("/d");
      await vfs.rename("/r.md", "/d/r2.md");
      // Another client tags the note: the feed brings its record, still at the root as r.md.
      const cursor = vfs.stats().cursor;
      await u.api.put(`/api/v1/files/${file.id}`, { tags: ["theirs"] });
      await until(() => vfs.stats().cursor !== cursor, "the feed");
      expect(vfs.readdir("/")).toEqual(["d"]);
      expect(vfs.readdir("/d")).toEqual(["r2.md"]);
    } finally {
      gated.open();
    }
    expect(await vfs.drain()).toBe(0);
    const folders = (await u.api.get("/api/me/folders")).body.folders as { id: string; name: string }[];
    expect(await remoteNote(file.id)).toMatchObject({
      name: "r2.md",
      folderId: folders.find((f) => f.name === "d")!.id,
      content: "r",
      tags: ["theirs"],
    });
  });

  it.each([
    ["a save", "r2"],
    ["a rename", "r"],
  ])(
    "while its journal entry waits for the journal (an fdatasync): the answer to %s before it",
    async (before, content) => {
      const a = (await u.api.post("/api/v1/folders", { name: "a" })).body.folder;
      const b = (await u.api.post("/api/v1/folders", { name: "b" })).body.folder;
      const { file } = (await u.api.post("/api/v1/files", { name: "r.md", content: "r", folderId: a.id }))
        .body;
      const gated = gatedWrites();
      const vfs = await mountVfs({ client: gated.client });
      if (before === "a save") {
        const fd = await vfs.open("/a/r.md", fsc.O_WRONLY | fsc.O_TRUNC);
        await vfs.write(fd, Buffer.from("r2"), 0);
        await vfs.release(fd);
      } else {
        await vfs.rename("/a/r.md", "/r.md");
        await vfs.rename("/r.md", "/a/r.md");
      }
      await until(() => gated.held() > 0, `${before} on its way`);
      // The journal is busy (as during a durable write's fdatasync): the rename is shown at once, its
      // entry waits. The answer to what was on its way comes back meanwhile.
      // The journal's lock, held from outside to open the window.
      const lock = (vfs as any).c.journal.lock as { run(fn: () => Promise<void>): Promise<void> };
      let release!: () => void;
      const busy = lock.run(() => new Promise<void>((r) => (release = r)));
      const renaming = vfs.rename("/a/r.md", "/b/r.md");
      try {
        gated.open();
        await until(async () => (await remoteNote(file.id)).content === content, `${before} on the service`);
        await sleep(50); // its answer applied
        expect(vfs.readdir("/a")).toEqual([]);
        expect(vfs.readdir("/b")).toEqual(["r.md"]);
      } finally {
        release();
      }
      await busy;
      await renaming;
      expect(await vfs.drain()).toBe(0);
      expect(vfs.readdir("/b")).toEqual(["r.md"]);
      expect(await remoteNote(file.id)).toMatchObject({ name: "r.md", folderId: b.id, content });
    },
  );
});

describe("folder after folder (grep -r, cat */*)", () => {
  const folderGets = (vfs: Vfs) => vfs.metrics().requests.byKind["GET /api/me/folders/:id"] ?? 0;
  const noteGets = (vfs: Vfs) => vfs.metrics().requests.byKind["GET /api/v1/files/:id"] ?? 0;

  beforeEach(async () => {
    const files = [];
    for (let f = 0; f < 5; f++)
      for (let n = 0; n < 4; n++) files.push({ path: `f${f}/n${n}.md`, content: `${f}.${n}` });
    await u.api.post("/api/v1/files/import", { files });
  });

  it("a reader walking through them finds each next folder fetched while it read the one before", async () => {
    const vfs = await mountVfs();
    for (let f = 0; f < 5; f++) {
      // Reading f(n) fetches f(n+1) ahead (from the second folder on: a walk is seen); give it time.
      if (f >= 2) await until(() => vfs.stats().cacheEntries === 4 * (f + 1), `f${f} fetched ahead`);
      const misses = vfs.metrics().cache.misses;
      for (let n = 0; n < 4; n++) expect(await readAll(vfs, `/f${f}/n${n}.md`)).toBe(`${f}.${n}`);
      expect(vfs.metrics().cache.misses - misses).toBe(f < 2 ? 1 : 0); // the first note waits for its folder
    }
    expect(folderGets(vfs)).toBe(5); // each folder once, the last one fetched by nobody ahead of it
    expect(noteGets(vfs)).toBe(0);
  });

  it("a reader jumping between folders gets no folder it did not open", async () => {
    const vfs = await mountVfs();
    expect(await readAll(vfs, "/f0/n0.md")).toBe("0.0");
    expect(await readAll(vfs, "/f3/n1.md")).toBe("3.1");
    expect(await readAll(vfs, "/f1/n2.md")).toBe("1.2");
    await sleep(100);
    expect(folderGets(vfs)).toBe(3);
  });
});

describe("a note that takes the path of another with the same size and time", () => {
  // The kernel keeps a note's pages while its mtime and size stay (auto_cache), by path's node: a
  // note taking the path of one whose pages it may hold must not show that one's mtime and size.
  async function twoAlike(readFirst: boolean) {
    const c = (await u.api.post("/api/v1/files", { name: "c.md", content: "start c\n" })).body.file;
    const b = (await u.api.post("/api/v1/files", { name: "b.md", content: "start b\n" })).body.file;
    const vfs = await mountVfs();
    const time = Date.parse("2026-01-01T00:00:00Z");
    for (const p of ["/b.md", "/c.md"]) await vfs.utimens(p, time, time); // touch -d: alike
    const before = await vfs.getattr("/c.md");
    if (readFirst) expect(await readAll(vfs, "/c.md")).toBe("start c\n");
    // The feed: c deleted, then b renamed onto its name.
    vfs.tree.remoteDelete(c.id);
    vfs.tree.upsertFile({ ...b, name: "c.md" });
    expect((await vfs.getxattr("/c.md", "user.txtfs.id"))?.toString()).toBe(b.id);
    const after = await vfs.getattr("/c.md");
    expect(after.size).toBe(before.size);
    return { before: before.mtime.getTime(), after: after.mtime.getTime() };
  }

  it("moves its mtime on when the other one's pages may be in the kernel (it was read)", async () => {
    const { before, after } = await twoAlike(true);
    expect(after).toBe(before + 1);
  });

  it("keeps its own mtime when the other one was only listed (no pages: nothing remembered of it)", async () => {
    const { before, after } = await twoAlike(false);
    expect(after).toBe(before);
  });
});

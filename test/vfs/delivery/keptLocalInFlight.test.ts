// A new note whose create is on its way (its answer not back yet) and which a write meanwhile made
// not UTF-8: it becomes a local-only file at once, and the create still lands on the service. The
// answer then binds that note to the local file (as for a note the service already had), so the
// service never keeps a second note of that name when the file is text again, nor a note the
// file's delete should have taken with it. Found by the vfs model test's seed 38 (after a kill -9
// the journal's replay was the create on its way; 1 run in 4-8 by timing): the service ended with
// two notes named d2/a.md.
import { constants as fsc } from "node:fs";
import { describe, expect, it } from "vitest";
import { TxtfsClient } from "../../../src/client/api.ts";
import type { Vfs } from "../../../src/vfs/vfs.ts";
import { startSlowProxy } from "../../helpers/slowProxy.ts";
import { mountVfs, t, u, until, useVfsServer } from "../fixture.ts";

useVfsServer();

interface Held {
  vfs: Vfs;
  /** How many bulk answers are held now. */
  waiting(): number;
  release(): void;
}

/** A Vfs whose bulk requests reach the service and whose answers wait until released. */
async function vfsWithHeldBulks(): Promise<Held> {
  let releaseAll: () => void = () => {};
  let released = new Promise<void>((r) => (releaseAll = r));
  let waiting = 0;
  let holding = true;
  const proxy = await startSlowProxy(t.url, (method, path) =>
    holding && method === "POST" && path === "/api/v1/sync" ? 1 : 0,
  );
  // The proxy's delay is per answer; held here until released instead of for a fixed time.
  const client = new TxtfsClient({ url: proxy.url, key: u.key, source: "mount", timeoutMs: 20_000 });
  const sync = client.sync.bind(client);
  client.sync = async (...args: Parameters<typeof sync>) => {
    const answer = sync(...args);
    if (!holding) return answer;
    waiting++;
    const [result] = await Promise.all([answer.catch((e) => e), released]);
    waiting--;
    if (result instanceof Error) throw result;
    return result;
  };
  const vfs = await mountVfs({ client });
  return {
    vfs,
    waiting: () => waiting,
    release() {
      holding = false;
      releaseAll();
      released = Promise.resolve();
    },
  };
}

async function write(vfs: Vfs, path: string, text: string | Buffer, at = 0, flags = fsc.O_WRONLY) {
  const exists = await vfs.getattr(path).then(
    () => true,
    () => false,
  );
  const fd = exists ? await vfs.open(path, flags) : await vfs.create(path, 0o644);
  if (exists && flags & fsc.O_TRUNC) await vfs.truncate(path, 0);
  await vfs.write(fd, Buffer.isBuffer(text) ? text : Buffer.from(text), at);
  await vfs.flush(fd);
  await vfs.release(fd);
}

async function notesNamed(name: string) {
  const { files } = (await u.api.get("/api/me/files")).body as { files: { id: string; name: string }[] };
  const out: { id: string; content: string }[] = [];
  for (const f of files.filter((x) => x.name === name))
    out.push({ id: f.id, content: (await u.api.get(`/api/v1/files/${f.id}`)).body.content });
  return out;
}

/** Two new notes (a bulk), the first one's answer held, then a write that splits its `ñ`. */
async function splitWhileCreating(held: Held) {
  const { vfs } = held;
  await vfs.mkdir("/d", 0o755);
  await vfs.drain();
  await write(vfs, "/d/a.md", "añejo\n");
  await write(vfs, "/d/b.md", "other\n");
  const draining = vfs.drain();
  await until(() => held.waiting() > 0, "the bulk request to reach the service");
  // One byte over the first byte of `ñ` (offset 1): its second byte is left alone, not UTF-8.
  await write(vfs, "/d/a.md", "Z", 1);
  const st = await vfs.getattr("/d/a.md");
  expect(st.size).toBe(Buffer.byteLength("añejo\n"));
  // (In an object: an async function returning the promise itself would wait for it.)
  return { draining };
}

describe("a note kept local while its create is on its way", () => {
  it("written as text again: the same note on the service, one of that name, with those bytes", async () => {
    const held = await vfsWithHeldBulks();
    const { draining } = await splitWhileCreating(held);
    held.release();
    await draining;
    await held.vfs.drain();
    const made = await notesNamed("a.md");
    expect(made).toHaveLength(1); // the create landed (its bytes, the last text saved here)
    expect(made[0]!.content).toBe("añejo\n");
    await write(held.vfs, "/d/a.md", "text again\n", 0, fsc.O_WRONLY | fsc.O_TRUNC);
    expect(await held.vfs.drain()).toBe(0);
    const after = await notesNamed("a.md");
    expect(after).toEqual([{ id: made[0]!.id, content: "text again\n" }]);
    expect((await held.vfs.getxattr("/d/a.md", "user.txtfs.id"))?.toString()).toBe(made[0]!.id);
  });

  it("removed before the answer came: no note of that name stays on the service", async () => {
    const held = await vfsWithHeldBulks();
    const { draining } = await splitWhileCreating(held);
    await held.vfs.unlink("/d/a.md");
    held.release();
    await draining;
    expect(await held.vfs.drain()).toBe(0);
    expect(await notesNamed("a.md")).toEqual([]);
    expect(held.vfs.readdir("/d")).toEqual(["b.md"]);
    expect((await notesNamed("b.md")).map((n) => n.content)).toEqual(["other\n"]);
  });
});

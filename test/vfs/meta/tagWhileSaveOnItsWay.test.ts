// A tag set on a note whose create is on its way waits for the create (the service needs the note
// first). Sent into a black-holed link (TCP accepted, nothing ever answers), the setxattr waited for
// the 60 s write deadline (soak seed 2028). It fails with EIO once one read deadline passed with no
// answer at all, the save stays journalled and goes once the link is back; a slow service that
// still answers is waited for.
import { expect, it } from "vitest";
import { TxtfsClient } from "../../../src/client/api.ts";
import { createLogger } from "../../../src/lib/logger.ts";
import { Vfs } from "../../../src/vfs/vfs.ts";
import { startFaultProxy } from "../../helpers/faultProxy.ts";
import { startSlowProxy } from "../../helpers/slowProxy.ts";
import { deviceOn, remote, scratchDir, t, u, until, useVfsServer } from "../fixture.ts";

useVfsServer();

const TAGS = "user.txtfs.tags";
/** deviceOn's client: the read deadline the mount is held to. */
const READ_DEADLINE_MS = 2000;

async function save(vfs: Vfs, path: string, text: string) {
  const fd = await vfs.create(path, 0o644);
  await vfs.write(fd, Buffer.from(text), 0);
  await vfs.release(fd);
}

const tagsOn = async (name: string) => {
  const note = (await remote()).find((f) => f.name === name);
  if (!note) return undefined;
  return (await u.api.get(`/api/v1/files/${note.id}`)).body as { content: string; tags: string[] };
};

it("a tag set while the note's create is black-holed fails with EIO after a read deadline; note and tag arrive once the link is back", async () => {
  const proxy = await startFaultProxy(t.url, { random: () => 0 });
  const here = deviceOn(proxy.url, scratchDir("txtfs-vfs-bh-"));
  await here.start();
  proxy.set({ paused: true }); // connections accepted, nothing answered
  const requests = proxy.counts.requests;
  await save(here, "/n.md", "note\n");
  void here.drain(); // the create goes now (not after the saves' gathering)
  await until(() => proxy.counts.requests > requests, "the create to be on its way");

  const started = Date.now();
  const err = await here.setxattr("/n.md", TAGS, Buffer.from("a")).catch((e: unknown) => e);
  const waited = Date.now() - started;
  expect((err as { errno?: string }).errno).toBe("EIO");
  expect(waited).toBeGreaterThanOrEqual(READ_DEADLINE_MS);
  expect(waited, "well before the 60 s write deadline").toBeLessThan(20_000);
  expect(await remote()).toEqual([]); // nothing reached the service
  expect(here.metrics().saves.journalled).toBe(1); // the save waits in the journal

  proxy.set({ paused: false });
  await until(async () => (await tagsOn("n.md")) !== undefined, "the note to arrive");
  expect(await tagsOn("n.md")).toMatchObject({ content: "note\n", tags: [] }); // the failed tag was not set
  await here.setxattr("/n.md", TAGS, Buffer.from("a"));
  expect(await tagsOn("n.md")).toMatchObject({ content: "note\n", tags: ["a"] });
  expect(await here.drain()).toBe(0);
  await proxy.close();
}, 30_000);

it("a tag set while a slow service (answering other requests) takes longer than a read deadline to make the note waits for it", async () => {
  const slowMs = 3 * READ_DEADLINE_MS;
  const isCreate = (method: string, path: string) =>
    method === "POST" && (path === "/api/v1/files" || path === "/api/v1/sync");
  const proxy = await startSlowProxy(t.url, (method, path) => (isCreate(method, path) ? slowMs : 0));
  // pollWait 25 (the mount's): the change feed's long poll brings no answer meanwhile.
  const here = new Vfs({
    client: new TxtfsClient({ url: proxy.url, key: u.key, source: "mount", timeoutMs: READ_DEADLINE_MS }),
    cacheDir: scratchDir("txtfs-vfs-slow-"),
    cacheSize: 1 << 20,
    uid: 0,
    gid: 0,
    logger: createLogger("vfs-test", "silent"),
    pollWait: 25,
  });
  await here.start();
  try {
    await save(here, "/n.md", "note\n");
    const started = Date.now();
    await here.setxattr("/n.md", TAGS, Buffer.from("b"));
    expect(Date.now() - started, "the create's answer came late (else this proves nothing)").toBeGreaterThan(
      slowMs - 500,
    );
    expect(proxy.held()).toBeGreaterThanOrEqual(1);
    expect(await tagsOn("n.md")).toMatchObject({ content: "note\n", tags: ["b"] });
  } finally {
    await here.stop();
    await proxy.close();
  }
}, 30_000);

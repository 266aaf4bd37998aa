// A note made here and still in the journal at a kill -9, while another device made a note of the
// same name: after the restart both show here (one under a suffixed name), as on every other
// device. Found by the multi-device simulation (test/vfs/sim, seed 1: the restarted device showed
// one of the two `b.md` for good; 1 replay in 6 by timing, here made certain by cutting the first
// device off until its kill). The restart placed its journalled create over the listed note of that
// name, which then had no name in its folder.
import { cpSync } from "node:fs";
import { expect, it } from "vitest";
import { startSlowProxy } from "../../helpers/slowProxy.ts";
import { deviceOn, mountVfs, readAll, scratchDir, t, u, until, useVfsServer, writeFile } from "../fixture.ts";

useVfsServer();

/**
 * This device cut off, a note made here (in its journal) and one of its name made on another
 * device; then a kill -9: the cache dir as it is now, copied. The network through `proxy` is cut
 * while `net.cut`, and only writes while `net.writesCut`.
 */
async function journalledBesideTheirs() {
  const net = { cut: true, writesCut: false };
  const proxy = await startSlowProxy(t.url, (method) =>
    net.cut || (net.writesCut && method !== "GET") ? -1 : 0,
  );
  const dir = scratchDir("txtfs-vfs-a-");
  const here = deviceOn(proxy.url, dir);
  net.cut = false;
  await here.start();
  const other = await mountVfs();
  net.cut = true; // this device is off the network from now on: its save stays in the journal
  const fd = await here.create("/b.md", 0o644);
  await here.write(fd, Buffer.from("made here\n"), 0);
  await here.release(fd);
  await writeFile(other, "/b.md", "made there\n");
  const copy = scratchDir("txtfs-vfs-a2-");
  cpSync(dir, copy, { recursive: true });
  return { net, proxy, other, copy };
}

it("a note journalled at a kill -9 and a note of its name made elsewhere: both show after the restart", async () => {
  const { proxy, other, copy } = await journalledBesideTheirs();
  const again = deviceOn(t.url, copy); // the network back
  await again.start();
  expect(await again.drain()).toBe(0);

  const { files } = (await u.api.get("/api/me/files")).body as { files: { id: string; name: string }[] };
  expect(files.filter((f) => f.name === "b.md")).toHaveLength(2);
  await until(
    () => other.readdir("/").filter((n) => n.startsWith("b")).length === 2,
    "the other device to show both",
  );
  const names = again.readdir("/").filter((n) => n.startsWith("b"));
  expect(names).toHaveLength(2);
  const texts = await Promise.all(names.map((n) => readAll(again, `/${n}`)));
  expect(texts.sort()).toEqual(["made here\n", "made there\n"]);
  await proxy.close();
});

// Simulation seed 103: the journalled note removed (or renamed) after the restart, before its
// create went. The listed note it stood over never showed again on this device.
for (const how of ["removed", "renamed"] as const)
  it(`the same, and ours ${how} before its create went: the note made elsewhere shows again under its name`, async () => {
    const { net, proxy, copy } = await journalledBesideTheirs();
    net.cut = false;
    net.writesCut = true; // it reads the service; its create waits
    const again = deviceOn(proxy.url, copy);
    await again.start();
    // Its first delivery has met the cut (the next is a retry 2 s on): nothing of it is on its way.
    await again.drain();
    const ours = again.readdir("/").find((n) => {
      const node = again.tree.lookup(`/${n}`);
      return node?.kind === "file" && node.id === null;
    })!;
    if (how === "removed") await again.unlink(`/${ours}`);
    else await again.rename(`/${ours}`, "/elsewhere.md");
    expect(await readAll(again, "/b.md")).toBe("made there\n");
    net.writesCut = false;
    await again.drain();
    expect(await readAll(again, "/b.md")).toBe("made there\n");
    const want = how === "removed" ? ["b.md"] : ["b.md", "elsewhere.md"];
    expect(again.readdir("/").sort()).toEqual(want);
    await proxy.close();
  });

// A read of a note whose appends are on their way into a black-holed link (connections accepted,
// nothing answered): it fails with EIO after a read deadline of silence, and is not made a whole
// save built on the version before the appends (they may land any moment: that save would meet
// them as an edit made elsewhere and leave a conflict copy). Once the link is back the appends
// land once, and no copy is made.
import { constants as fsc } from "node:fs";
import { expect, it } from "vitest";
import { startFaultProxy } from "../../helpers/faultProxy.ts";
import { deviceOn, readAll, remote, scratchDir, t, u, until, useVfsServer, writeFile } from "../fixture.ts";

useVfsServer();

it("a read while appends are black-holed fails with EIO; the appends land once the link is back, no conflict copy", async () => {
  const proxy = await startFaultProxy(t.url, { random: () => 0 });
  const here = deviceOn(proxy.url, scratchDir("txtfs-vfs-ap-"));
  await here.start();
  await writeFile(here, "/log.md", "mine\n");
  expect(await readAll(here, "/log.md")).toBe("mine\n"); // cached: appends go without the body

  proxy.set({ paused: true });
  const requests = proxy.counts.requests;
  const fd = await here.open("/log.md", fsc.O_WRONLY | fsc.O_APPEND);
  await here.write(fd, Buffer.from("appended\n"), 0);
  await here.release(fd);
  void here.drain();
  await until(() => proxy.counts.requests > requests, "the appends to be on their way");
  const err = await readAll(here, "/log.md").catch((e: unknown) => e);
  expect((err as { errno?: string }).errno).toBe("EIO");

  proxy.set({ paused: false });
  expect(await here.drain()).toBe(0);
  const notes = await remote();
  expect(notes.map((n) => n.name)).toEqual(["log.md"]);
  expect((await u.api.get(`/api/v1/files/${notes[0]!.id}`)).body.content).toBe("mine\nappended\n");
  expect(await readAll(here, "/log.md")).toBe("mine\nappended\n");
  await proxy.close();
}, 30_000);

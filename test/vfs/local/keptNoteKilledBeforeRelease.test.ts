// A note kept local (a write split a character) and made text again by the next write goes up at
// that write's release. close(2) returns at FLUSH, before the kernel sends RELEASE: a kill -9
// between the two must not leave the text on this device only. The next start sends it.
import { cpSync, constants as fsc } from "node:fs";
import { expect, it } from "vitest";
import {
  cacheDir,
  deviceOn,
  mountVfs,
  readAll,
  remote,
  scratchDir,
  t,
  u,
  useVfsServer,
  writeFile,
} from "../fixture.ts";

useVfsServer();

it("a kept note written back to text and killed between its flush and its release is sent at the next start", async () => {
  const vfs = await mountVfs();
  await writeFile(vfs, "/b.md", "aañejo");
  const split = await vfs.open("/b.md", fsc.O_RDWR);
  await vfs.write(split, Buffer.from("x"), 2); // cuts "ñ" in two: not UTF-8, kept local
  await vfs.release(split);
  expect(vfs.tree.lookup("/b.md")?.kind).toBe("local");

  const mended = await vfs.open("/b.md", fsc.O_RDWR);
  await vfs.write(mended, Buffer.from("y"), 3); // "aaxyejo": text again
  await vfs.flush(mended); // what close(2) waited for; the release never comes
  const killed = scratchDir("txtfs-killed-");
  cpSync(cacheDir, killed, { recursive: true }); // the cache dir as a kill -9 leaves it

  const next = deviceOn(t.url, killed);
  await next.start();
  expect(await readAll(next, "/b.md")).toBe("aaxyejo");
  await next.drain();
  const notes = await remote();
  expect(notes.map((n) => n.name)).toEqual(["b.md"]); // the same note, not a second one
  expect((await u.api.get(`/api/v1/files/${notes[0]!.id}`)).body.content).toBe("aaxyejo");
});

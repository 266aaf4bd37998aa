// Appends delivered as file.append in-process: only the new bytes go.
import { constants as fsc } from "node:fs";
import { describe, expect, it } from "vitest";
import { mountVfs, readAll, remote, u, until, useVfsServer, writeFile } from "../fixture.ts";

useVfsServer();

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

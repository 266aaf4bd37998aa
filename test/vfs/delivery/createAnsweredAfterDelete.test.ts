// A create whose answer was lost, sent again (its Idempotency-Key) after another device deleted the
// note it made: the replayed answer is the note as it was made, and the feed's tombstone came while
// this mount did not know the id yet. The note must not stay shown here, bound to an id the service
// deleted (the simulation's seed 1, 1 run in 8 on a loaded machine: `a.md … is not a note on the
// service`, and the real a.md shown as `a (h47yqh).md`).
import { describe, expect, it } from "vitest";
import { NetworkError, TxtfsClient } from "../../../src/client/api.ts";
import { mountVfs, remote, t, u, until, useVfsServer } from "../fixture.ts";

useVfsServer();

async function write(vfs: Awaited<ReturnType<typeof mountVfs>>, path: string, text: string) {
  const fd = await vfs.create(path, 0o644);
  await vfs.write(fd, Buffer.from(text), 0);
  await vfs.flush(fd);
  await vfs.release(fd);
}

describe("a create answered again after the note was deleted elsewhere", () => {
  for (const how of ["in bulk", "on its own"] as const) {
    it(`${how}: the delete stands here too`, async () => {
      const client = new TxtfsClient({ url: t.url, key: u.key, source: "mount", timeoutMs: 5000 });
      // The create reaches the service and its answer is lost; sent again, it waits at a gate.
      let open!: () => void;
      const gate = new Promise<void>((r) => (open = r));
      let calls = 0;
      const lostOnce =
        <A extends unknown[], R>(send: (...args: A) => Promise<R>) =>
        async (...args: A): Promise<R> => {
          calls++;
          if (calls === 1) {
            await send(...args);
            throw new NetworkError("answer lost");
          }
          await gate;
          return send(...args);
        };
      if (how === "in bulk") client.sync = lostOnce(client.sync.bind(client));
      else client.createFile = lostOnce(client.createFile.bind(client));
      // The feed waits while the creates land and the delete follows: its next page has only the
      // tombstone of the note (the service gives each item's newest record).
      let openFeed!: () => void;
      const feedGate = new Promise<void>((r) => (openFeed = r));
      let feedHeld = false;
      const changes = client.changes.bind(client);
      client.changes = async (...args: Parameters<typeof changes>) => {
        const page = await changes(...args);
        if (!feedHeld) return page;
        // Its answer lost (or never asked yet): asked again from the same cursor, after the delete.
        await feedGate;
        return changes(...args);
      };
      const vfs = await mountVfs({ client, writeBehind: true });
      // A cursor past 0 (from 0 the feed leaves tombstones out: there is nothing to delete yet).
      await vfs.mkdir("/d", 0o755);
      await vfs.drain();
      await until(() => vfs.stats().cursor > 0, "the feed to pass the folder");
      feedHeld = true;
      await write(vfs, "/a.md", "made here\n");
      const names = how === "in bulk" ? ["a.md", "b.md"] : ["a.md"];
      if (how === "in bulk") await write(vfs, "/b.md", "also made here\n");
      void vfs.drain();
      await until(
        async () => (await remote()).length === names.length && calls >= 2,
        "the creates to land, their answer lost",
      );
      const a = (await remote()).find((n) => n.name === "a.md")!;
      const gone = await u.api.delete(`/api/v1/files/${a.id}`); // another device
      expect(gone.status).toBe(200);
      const seq = (gone.body as { seq: number }).seq;
      openFeed();
      await until(() => vfs.stats().cursor >= seq, "this mount's feed to pass the delete");
      open();
      expect(await vfs.drain()).toBe(0);
      expect([...vfs.readdir("/")].sort()).toEqual([...names.slice(1), "d"]);
      expect((await remote()).map((n) => n.name)).toEqual(names.slice(1));
    });
  }
});

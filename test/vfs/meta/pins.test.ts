// The pinned notes' refresh (src/vfs/meta/pins.ts) runs every 3 s over the mount's notes: with
// nothing pinned it must not walk them (100,000 notes cost 0.1-0.2 s of CPU each time), and once
// something is pinned it must find what under it is stale. (That pinned bodies are kept and read
// offline through a real mount: test/mount/pins.test.ts.)
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { TxtfsClient } from "../../../src/client/api.ts";
import { createLogger } from "../../../src/lib/logger.ts";
import { Pins } from "../../../src/vfs/meta/pins.ts";
import type { DirNode, FileNode } from "../../../src/vfs/tree.ts";
import { startTestServer, type TestServer, type TestUser } from "../../helpers/server.ts";

let t: TestServer;
let u: TestUser;
let cacheDir: string;
beforeEach(async () => {
  t = await startTestServer();
  u = await t.user();
  cacheDir = mkdtempSync(join(tmpdir(), "txtfs-pins-"));
});
afterEach(async () => {
  await t.close();
  rmSync(cacheDir, { recursive: true, force: true });
});

/** The notes as the refresh walks them, counting how many it looked at. */
function walked(notes: FileNode[]) {
  const seen = { count: 0 };
  const iterable: Iterable<FileNode> = {
    *[Symbol.iterator]() {
      for (const n of notes) {
        seen.count++;
        yield n;
      }
    },
  };
  return { iterable, seen };
}

describe("the pinned notes' refresh", () => {
  it("walks no note while nothing is pinned, and fetches a pinned note's body once something is", async () => {
    const { file } = (await u.api.post("/api/v1/files", { name: "p.md", content: "kept body\n" })).body;
    const client = new TxtfsClient({ url: t.url, key: u.key, source: "mount" });
    const pins = new Pins({ client, cacheDir, logger: createLogger("pins-test", "silent") });
    await pins.init();
    const root = { kind: "dir", id: null, parent: null, name: "" } as unknown as DirNode;
    const note = { kind: "file", id: file.id, meta: file, parent: root, name: "p.md" } as unknown as FileNode;
    const other = {
      kind: "file",
      id: "f_other",
      meta: null,
      parent: root,
      name: "o.md",
    } as unknown as FileNode;

    const idle = walked([note, other]);
    await pins.refresh(idle.iterable);
    expect(idle.seen.count).toBe(0);
    await pins.set(other, "available", []); // a state, but nothing pinned
    await pins.refresh(idle.iterable);
    expect(idle.seen.count).toBe(0);

    await pins.set(note, "pinned", []);
    const busy = walked([note, other]);
    await pins.refresh(busy.iterable);
    expect(busy.seen.count).toBe(2);
    expect((await pins.read(file.id, file.etag))?.toString()).toBe("kept body\n");
    await pins.stop();
  });
});

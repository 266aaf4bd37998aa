// `/dav/` on `txtfs serve` (SQLite) keeps what a WebDAV client relies on across a restart: a note
// DELETEd before it is continued by the same key's PUT after (id, context, tags, history).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServeProcess, spawnServeWithKey } from "../helpers/cli.ts";
import { davRequest } from "../helpers/dav.ts";
import { contentAt, noteAt } from "../helpers/mount.ts";
import { Api } from "../helpers/server.ts";

let data: string;
let server: ServeProcess;
let key: string;
beforeAll(async () => {
  data = mkdtempSync(join(tmpdir(), "txtfs-dav-restart-"));
  const first = await spawnServeWithKey(data);
  server = first;
  key = first.key;
});
afterAll(async () => {
  await server?.stop();
  rmSync(data, { recursive: true, force: true });
});

const restart = async () => {
  await server.stop();
  server = await spawnServeWithKey(data);
};
const dav = (method: string, path: string, opts?: Parameters<typeof davRequest>[4]) =>
  davRequest(`${server.url}/dav/`, key, method, path, opts);
const api = () => new Api(`${server.url}`, key);
const versions = async (id: string) =>
  (await api().get(`/api/v1/files/${id}/versions`)).body.versions.length as number;

describe("/dav/ on txtfs serve across a restart", () => {
  it("a DELETE before the restart and a PUT after, by the same key: the note goes on", {
    timeout: 60_000,
  }, async () => {
    expect(key).toMatch(/^txt_/);
    expect((await dav("PUT", "/saved.md", { body: "one\n" })).status).toBe(201);
    const before = await noteAt(api(), "saved.md");
    expect((await api().put(`/api/v1/files/${before.id}`, { context: "kept", tags: ["x"] })).status).toBe(
      200,
    );
    const kept = await versions(before.id);
    expect((await dav("DELETE", "/saved.md")).status).toBe(204);
    expect(await contentAt(api(), "saved.md")).toBeUndefined();
    await restart();
    expect((await dav("PUT", "/saved.md", { body: "two\n" })).status).toBe(201);
    const after = await noteAt(api(), "saved.md");
    expect([after.id, after.content, after.context, after.tags]).toEqual([before.id, "two\n", "kept", ["x"]]);
    expect(await versions(after.id)).toBe(kept + 1);
    // A tombstone serves once: deleted again over the API (which keeps none), the PUT makes a new note.
    expect((await api().delete(`/api/v1/files/${before.id}`)).status).toBe(200);
    expect((await dav("PUT", "/saved.md", { body: "three\n" })).status).toBe(201);
    expect((await noteAt(api(), "saved.md")).id).not.toBe(before.id);
  });
});

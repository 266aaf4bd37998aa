// `/dav/` on `txtfs serve` (SQLite) keeps what a WebDAV client relies on across a restart: a note
// DELETEd before it is continued by the same key's PUT after (id, context, tags, history); dead
// properties a PROPPATCH set are answered after, where MOVE and COPY took them, and gone with DELETE.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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

  it("dead properties set before the restart are answered after; MOVE, COPY and DELETE took them along", {
    timeout: 60_000,
  }, async () => {
    const update = (inner: string) =>
      `<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:" xmlns:z="http://example.com/z">${inner}</D:propertyupdate>`;
    const colour = (path: string) =>
      dav("PROPFIND", path, {
        headers: { depth: "0" },
        body: '<?xml version="1.0"?><D:propfind xmlns:D="DAV:" xmlns:z="http://example.com/z"><D:prop><z:colour/></D:prop></D:propfind>',
      });
    expect((await dav("MKCOL", "/box")).status).toBe(201);
    for (const p of ["/box/a.md", "/box/b.md", "/box/gone.md"])
      expect((await dav("PUT", p, { body: "x\n" })).status).toBe(201);
    for (const [p, c] of [
      ["/box", "grey"],
      ["/box/a.md", "blue"],
      ["/box/b.md", "red"],
      ["/box/gone.md", "green"],
    ])
      expect(
        (
          await dav("PROPPATCH", p!, {
            body: update(`<D:set><D:prop><z:colour>${c}</z:colour></D:prop></D:set>`),
          })
        ).status,
      ).toBe(207);
    // Refused whole (a protected property with it): 403 and 424, and the colour stays blue.
    const refused = await dav("PROPPATCH", "/box/a.md", {
      body: update("<D:set><D:prop><z:colour>black</z:colour><D:getetag>x</D:getetag></D:prop></D:set>"),
    });
    expect(refused.text).toContain("403 Forbidden");
    expect(refused.text).toContain("424 Failed Dependency");
    expect(
      (
        await dav("PROPPATCH", "/nowhere.md", {
          body: update("<D:set><D:prop><z:colour>x</z:colour></D:prop></D:set>"),
        })
      ).status,
    ).toBe(404);
    expect((await dav("PROPPATCH", "/box/a.md", { body: "<not-xml" })).status).toBe(400);
    expect(
      (await dav("MOVE", "/box/b.md", { headers: { destination: `${server.url}/dav/box/moved.md` } })).status,
    ).toBe(201);
    expect((await dav("COPY", "/box", { headers: { destination: `${server.url}/dav/copy` } })).status).toBe(
      201,
    );
    expect((await dav("DELETE", "/box/gone.md")).status).toBe(204);
    await restart();
    const answered = async (path: string) =>
      /<z:colour[^>]*>(\w+)<\/z:colour>/.exec((await colour(path)).text)?.[1];
    expect(await answered("/box/a.md")).toBe("blue");
    expect(await answered("/box")).toBe("grey");
    expect(await answered("/box/moved.md")).toBe("red");
    expect(await answered("/copy/a.md")).toBe("blue");
    expect(await answered("/copy")).toBe("grey");
    expect((await colour("/box/b.md")).status).toBe(404);
    // A new resource at a deleted one's path has none of its properties.
    expect((await dav("PUT", "/box/gone.md", { body: "new\n" })).status).toBe(201);
    expect(await answered("/box/gone.md")).toBeUndefined();
    expect((await colour("/box/gone.md")).text).toContain("404 Not Found");
    // A note deleted through the API leaves its path's properties behind: a new note there has none.
    expect(await answered("/copy/a.md")).toBe("blue");
    const copied = await noteAt(api(), "copy/a.md");
    expect((await api().delete(`/api/v1/files/${copied.id}`)).status).toBe(200);
    expect((await dav("PUT", "/copy/a.md", { body: "again\n" })).status).toBe(201);
    expect(await answered("/copy/a.md")).toBeUndefined();
    expect((await dav("PUT", "/copy/a.md", { body: "blue again\n" })).status).toBe(204);
    expect(
      (
        await dav("PROPPATCH", "/copy/a.md", {
          body: update("<D:set><D:prop><z:colour>blue</z:colour></D:prop></D:set>"),
        })
      ).status,
    ).toBe(207);
    // Depth 1 answers each child's own.
    const listed = await dav("PROPFIND", "/copy", {
      headers: { depth: "1" },
      body: '<?xml version="1.0"?><D:propfind xmlns:D="DAV:" xmlns:z="http://example.com/z"><D:prop><z:colour/></D:prop></D:propfind>',
    });
    expect(listed.text.match(/<z:colour[^>]*>\w+<\/z:colour>/g)?.length).toBe(4);
  });

  it("dead properties kept in DATA/dav/USER/properties.json before the store had them are imported once, at the start after the upgrade", {
    timeout: 60_000,
  }, async () => {
    const me = (await api().get("/api/me")).body;
    const userId = (me.user?.id ?? me.id) as string;
    expect(userId).toBeTruthy();
    for (const p of ["/old/a.md", "/old/b.md"]) {
      if (p === "/old/a.md") expect((await dav("MKCOL", "/old")).status).toBe(201);
      expect((await dav("PUT", p, { body: "x\n" })).status).toBe(201);
    }
    // Set since the upgrade (in the store): newer than the file's, so it stays.
    const z = 'xmlns:z="http://example.com/z"';
    expect(
      (
        await dav("PROPPATCH", "/old/b.md", {
          body: `<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:" ${z}><D:set><D:prop><z:colour>new</z:colour></D:prop></D:set></D:propertyupdate>`,
        })
      ).status,
    ).toBe(207);
    await server.stop();
    const dir = join(data, "dav", userId);
    mkdirSync(dir, { recursive: true });
    const file = join(dir, "properties.json");
    const colour = "{http://example.com/z}colour";
    writeFileSync(
      file,
      JSON.stringify({
        "/old": { [colour]: `<z:colour ${z}>teal</z:colour>` },
        "/old/a.md": { [colour]: `<z:colour ${z}>amber</z:colour>` },
        "/old/b.md": { [colour]: `<z:colour ${z}>old</z:colour>` },
      }),
    );
    // An account's file that is not what /dav/ wrote: left as it is, the start goes on.
    const bad = join(data, "dav", "someone-else");
    mkdirSync(bad, { recursive: true });
    writeFileSync(join(bad, "properties.json"), "{not json");
    server = await spawnServeWithKey(data);
    const answered = async (path: string) =>
      /<z:colour[^>]*>(\w+)<\/z:colour>/.exec(
        (
          await dav("PROPFIND", path, {
            headers: { depth: "0" },
            body: `<?xml version="1.0"?><D:propfind xmlns:D="DAV:" ${z}><D:prop><z:colour/></D:prop></D:propfind>`,
          })
        ).text,
      )?.[1];
    expect([await answered("/old"), await answered("/old/a.md"), await answered("/old/b.md")]).toEqual([
      "teal",
      "amber",
      "new",
    ]);
    expect(existsSync(file)).toBe(false);
    expect(existsSync(`${file}.imported`)).toBe(true);
    expect(readFileSync(join(bad, "properties.json"), "utf8")).toBe("{not json");
    // Imported once: a property removed since stays removed across the next start.
    expect(
      (
        await dav("PROPPATCH", "/old/a.md", {
          body: `<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:" ${z}><D:remove><D:prop><z:colour/></D:prop></D:remove></D:propertyupdate>`,
        })
      ).status,
    ).toBe(207);
    await restart();
    expect(await answered("/old/a.md")).toBeUndefined();
    expect(await answered("/old")).toBe("teal");
  });
});

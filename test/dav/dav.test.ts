// `txtfs dav --serve` driven over HTTP like a WebDAV client, every result checked through the
// service's API: auth, bytes, conditional requests, txtfs properties, identity kept through the
// save patterns clients use, locks and dead properties across a restart, CORS, bad input.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runTxtfs } from "../helpers/cli.ts";
import { basicAuth, type RunningDav, startDav } from "../helpers/dav.ts";
import {
  contentAt,
  findByPath,
  type MountDirs,
  makeMountDirs,
  noteAt,
  removeMountDirs,
  txtfsEnv,
} from "../helpers/mount.ts";

const LOCK_BODY =
  '<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype><D:owner>test</D:owner></D:lockinfo>';
const propset = (inner: string) =>
  `<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:" xmlns:t="urn:txtfs:" xmlns:z="http://example.com/z"><D:set><D:prop>${inner}</D:prop></D:set></D:propertyupdate>`;
const propget = (inner: string) =>
  `<?xml version="1.0"?><D:propfind xmlns:D="DAV:" xmlns:t="urn:txtfs:" xmlns:z="http://example.com/z"><D:prop>${inner}</D:prop></D:propfind>`;

describe("txtfs dav --serve", () => {
  let dirs: MountDirs;
  let dav: RunningDav;
  beforeAll(async () => {
    dirs = makeMountDirs("txtfs-dav-");
    dav = await startDav(dirs);
  });
  afterAll(async () => {
    await dav?.stop();
    await removeMountDirs(dirs);
  });

  it("serves nothing without the key: 401 with a Basic challenge; Basic (any user) and Bearer get in", async () => {
    const none = await dav.dav("PROPFIND", "/", { anonymous: true, headers: { depth: "0" } });
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toMatch(/^Basic realm="txtfs"/);
    const wrong = await dav.dav("GET", "/", { headers: { authorization: basicAuth("txt_wrong") } });
    expect(wrong.status).toBe(401);
    const basic = await dav.dav("PROPFIND", "/", {
      headers: { depth: "0", authorization: basicAuth(dav.key, "anyone") },
    });
    expect(basic.status).toBe(207);
    const bearer = await dav.dav("PROPFIND", "/", {
      headers: { depth: "0", authorization: `Bearer ${dav.key}` },
    });
    expect(bearer.status).toBe(207);
    const options = await dav.dav("OPTIONS", "/");
    expect(options.headers.get("dav")).toBe("1, 2");
    expect(options.headers.get("ms-author-via")).toBe("DAV");
  });

  it("a PUT of a file that is not a note is an attachment on the service, byte for byte, when the PUT answers", async () => {
    const bytes = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0xff]), randomBytes(40_000)]);
    expect((await dav.dav("MKCOL", "/img")).status).toBe(201);
    expect((await dav.dav("PUT", "/img/pic.png", { body: bytes })).status).toBe(201);
    // Answered once on the service (a PUT of an attachment is fsynced): no wait needed.
    const listed = (await dav.api.get("/api/v1/attachments")).body.attachments as {
      id: string;
      name: string;
    }[];
    const pic = listed.find((a) => a.name === "pic.png");
    expect(pic).toBeDefined();
    const raw = await fetch(`${dav.serviceUrl}/api/v1/attachments/${pic!.id}/raw`, {
      headers: { authorization: `Bearer ${dav.key}` },
    });
    expect(Buffer.from(await raw.arrayBuffer()).equals(bytes)).toBe(true);
    const got = await fetch(`${dav.url}img/pic.png`, { headers: { authorization: `Bearer ${dav.key}` } });
    expect(Buffer.from(await got.arrayBuffer()).equals(bytes)).toBe(true);
  });

  it("a PUT note is on the service byte for byte; GET answers ETag, 304 and ranges", async () => {
    const text = "# Héllo\n\nfrom WebDAV\n";
    const put = await dav.dav("PUT", "/hello.md", { body: text });
    expect(put.status).toBe(201);
    await expect.poll(() => contentAt(dav.api, "hello.md"), { timeout: 15_000 }).toBe(text);
    const get = await dav.dav("GET", "/hello.md");
    expect(get.text).toBe(text);
    const etag = get.headers.get("etag")!;
    expect(etag).toMatch(/^"/);
    expect((await dav.dav("GET", "/hello.md", { headers: { "if-none-match": etag } })).status).toBe(304);
    const range = await dav.dav("GET", "/hello.md", { headers: { range: "bytes=0-6" } });
    expect(range.status).toBe(206);
    expect(range.text).toBe("# Héll");
    expect(range.headers.get("content-range")).toBe(`bytes 0-6/${Buffer.byteLength(text)}`);
    // A stale If-Match is refused and changes nothing.
    const stale = await dav.dav("PUT", "/hello.md", { body: "lost?", headers: { "if-match": '"nope"' } });
    expect(stale.status).toBe(412);
    const exclusive = await dav.dav("PUT", "/hello.md", { body: "lost?", headers: { "if-none-match": "*" } });
    expect(exclusive.status).toBe(412);
    expect((await dav.dav("GET", "/hello.md")).text).toBe(text);
    expect(await contentAt(dav.api, "hello.md")).toBe(text);
  });

  it("context and tags are properties in urn:txtfs: (PROPPATCH sets them on the note)", async () => {
    expect((await dav.dav("PUT", "/tagged.md", { body: "tagged\n" })).status).toBe(201);
    const set = await dav.dav("PROPPATCH", "/tagged.md", {
      body: propset("<t:tags>alpha,beta</t:tags><t:context>why it matters</t:context>"),
    });
    expect(set.status).toBe(207);
    expect(set.text).toContain("200 OK");
    await expect
      .poll(async () => (await noteAt(dav.api, "tagged.md")).tags, { timeout: 15_000 })
      .toEqual(["alpha", "beta"]);
    expect((await noteAt(dav.api, "tagged.md")).context).toBe("why it matters");
    const got = await dav.dav("PROPFIND", "/tagged.md", {
      headers: { depth: "0" },
      body: propget("<t:tags/><t:context/><t:id/>"),
    });
    expect(got.text).toContain("alpha,beta");
    expect(got.text).toContain("why it matters");
    expect(got.text).toContain((await noteAt(dav.api, "tagged.md")).id);
    // The id is the service's: refused (403) with everything else in that PROPPATCH (424), nothing set.
    const refused = await dav.dav("PROPPATCH", "/tagged.md", {
      body: propset("<t:id>f_x</t:id><t:tags>gamma</t:tags>"),
    });
    expect(refused.text).toContain("403 Forbidden");
    expect(refused.text).toContain("424 Failed Dependency");
    expect((await noteAt(dav.api, "tagged.md")).tags).toEqual(["alpha", "beta"]);
  });

  it("keeps the note's identity through PUT temp + MOVE over, LOCK/PUT/UNLOCK and DELETE + PUT", async () => {
    expect((await dav.dav("PUT", "/kept.md", { body: "one\n" })).status).toBe(201);
    await expect.poll(() => contentAt(dav.api, "kept.md"), { timeout: 15_000 }).toBe("one\n");
    const id = (await noteAt(dav.api, "kept.md")).id;

    expect((await dav.dav("PUT", "/.kept.md.tmp", { body: "two\n" })).status).toBe(201);
    const move = await dav.dav("MOVE", "/.kept.md.tmp", {
      headers: { destination: `${dav.url}kept.md`, overwrite: "T" },
    });
    expect(move.status).toBe(204);
    await expect.poll(() => contentAt(dav.api, "kept.md"), { timeout: 15_000 }).toBe("two\n");
    expect((await noteAt(dav.api, "kept.md")).id).toBe(id);

    const lock = await dav.dav("LOCK", "/kept.md", { body: LOCK_BODY, headers: { timeout: "Second-60" } });
    expect(lock.status).toBe(200);
    const token = lock.headers.get("lock-token")!;
    expect((await dav.dav("PUT", "/kept.md", { body: "not yours\n" })).status).toBe(423);
    expect(
      (await dav.dav("PUT", "/kept.md", { body: "three\n", headers: { if: `(${token})` } })).status,
    ).toBe(204);
    expect((await dav.dav("UNLOCK", "/kept.md", { headers: { "lock-token": token } })).status).toBe(204);
    await expect.poll(() => contentAt(dav.api, "kept.md"), { timeout: 15_000 }).toBe("three\n");
    expect((await noteAt(dav.api, "kept.md")).id).toBe(id);

    expect((await dav.dav("DELETE", "/kept.md")).status).toBe(204);
    expect((await dav.dav("PUT", "/kept.md", { body: "four\n" })).status).toBe(201);
    await expect.poll(() => contentAt(dav.api, "kept.md"), { timeout: 15_000 }).toBe("four\n");
    expect((await noteAt(dav.api, "kept.md")).id).toBe(id);
  });

  it("shows .txtfs/ where the protocol allows: readable by its path, not listed in /", async () => {
    const readme = await dav.dav("GET", "/.txtfs/README");
    expect(readme.status).toBe(200);
    expect(readme.text).toContain("txtfs control directory");
    const inside = await dav.dav("PROPFIND", "/.txtfs/", { headers: { depth: "1" } });
    expect(inside.status).toBe(207);
    expect(inside.text).toContain("<D:href>/.txtfs/versions/</D:href>");
    const root = await dav.dav("PROPFIND", "/", { headers: { depth: "1" } });
    expect(root.text).not.toContain(".txtfs");
    expect((await dav.dav("PUT", "/.txtfs/README", { body: "x" })).status).toBe(403);
  });

  it("takes a client's X-OC-Mtime as the file's time", async () => {
    const put = await dav.dav("PUT", "/dated.md", {
      body: "dated\n",
      headers: { "x-oc-mtime": "1700000000" },
    });
    expect(put.status).toBe(201);
    expect(put.headers.get("x-oc-mtime")).toBe("accepted");
    const got = await dav.dav("PROPFIND", "/dated.md", {
      headers: { depth: "0" },
      body: propget("<D:getlastmodified/>"),
    });
    expect(got.text).toContain("<D:getlastmodified>Tue, 14 Nov 2023 22:13:20 GMT</D:getlastmodified>");
  });

  it("answers a CORS preflight from Obsidian's origins, with Authorization allowed", async () => {
    for (const origin of ["app://obsidian.md", "capacitor://localhost", "http://localhost"]) {
      const pre = await dav.dav("OPTIONS", "/", {
        anonymous: true,
        headers: {
          origin,
          "access-control-request-method": "PROPFIND",
          "access-control-request-headers": "authorization,depth",
        },
      });
      expect(pre.status).toBe(204);
      expect(pre.headers.get("access-control-allow-origin")).toBe(origin);
      expect(pre.headers.get("access-control-allow-headers")).toMatch(/Authorization/);
      expect(pre.headers.get("access-control-allow-methods")).toMatch(/PROPFIND/);
    }
    const other = await dav.dav("OPTIONS", "/", {
      anonymous: true,
      headers: { origin: "https://evil.example", "access-control-request-method": "PUT" },
    });
    expect(other.headers.get("access-control-allow-origin")).toBeNull();
    expect(other.status).toBe(401);
  });

  it("refuses bad requests with the right status and changes nothing", async () => {
    expect((await dav.dav("PUT", "/bad.md", { body: "keep\n" })).status).toBe(201);
    expect((await dav.dav("MOVE", "/bad.md")).status).toBe(400); // no Destination
    expect(
      (await dav.dav("MOVE", "/bad.md", { headers: { destination: "http://elsewhere.example/x.md" } }))
        .status,
    ).toBe(502);
    expect((await dav.dav("PUT", "/no/such/dir/x.md", { body: "x" })).status).toBe(409);
    expect((await dav.dav("PROPPATCH", "/bad.md", { body: "<not xml" })).status).toBe(400);
    expect(
      (
        await dav.dav("PROPFIND", "/bad.md", {
          body: "<D:propfind xmlns:D='DAV:'><D:prop><x:y/></D:prop></D:propfind>",
        })
      ).status,
    ).toBe(400);
    expect((await dav.dav("PUT", "/bad.md", { body: "x", headers: { if: "(garbage" } })).status).toBe(400);
    expect((await dav.dav("PATCH", "/bad.md", { body: "x" })).status).toBe(405);
    expect((await dav.dav("GET", "/bad.md")).text).toBe("keep\n");
    await expect.poll(() => contentAt(dav.api, "bad.md"), { timeout: 15_000 }).toBe("keep\n");
  });

  it("a PUT too large for a note is 413 and leaves nothing: no empty note, the old bytes kept", async () => {
    const big = "a".repeat(6_000_000);
    expect((await dav.dav("PUT", "/huge.md", { body: big })).status).toBe(413);
    expect((await dav.dav("GET", "/huge.md")).status).toBe(404);
    expect((await dav.dav("PUT", "/grown.md", { body: "small\n" })).status).toBe(201);
    expect((await dav.dav("PUT", "/grown.md", { body: big })).status).toBe(413);
    expect((await dav.dav("GET", "/grown.md")).text).toBe("small\n");
    await expect.poll(() => contentAt(dav.api, "grown.md"), { timeout: 15_000 }).toBe("small\n");
    expect(await findByPath(dav.api, "huge.md")).toBeUndefined();
  });

  it("lets each holder of a shared lock write; an exclusive lock conflicts with them (423)", async () => {
    expect((await dav.dav("PUT", "/shared.md", { body: "v0\n" })).status).toBe(201);
    const shared = LOCK_BODY.replace("<D:exclusive/>", "<D:shared/>");
    const a = (await dav.dav("LOCK", "/shared.md", { body: shared })).headers.get("lock-token")!;
    const b = (await dav.dav("LOCK", "/shared.md", { body: shared })).headers.get("lock-token")!;
    expect(a).not.toBe(b);
    expect((await dav.dav("LOCK", "/shared.md", { body: LOCK_BODY })).status).toBe(423);
    expect((await dav.dav("PUT", "/shared.md", { body: "nobody\n" })).status).toBe(423);
    expect((await dav.dav("PUT", "/shared.md", { body: "by a\n", headers: { if: `(${a})` } })).status).toBe(
      204,
    );
    expect((await dav.dav("PUT", "/shared.md", { body: "by b\n", headers: { if: `(${b})` } })).status).toBe(
      204,
    );
    await expect.poll(() => contentAt(dav.api, "shared.md"), { timeout: 15_000 }).toBe("by b\n");
  });

  it("keeps locks and dead properties across a restart", async () => {
    expect((await dav.dav("PUT", "/locked.md", { body: "locked\n" })).status).toBe(201);
    const lock = await dav.dav("LOCK", "/locked.md", { body: LOCK_BODY, headers: { timeout: "Second-600" } });
    const token = lock.headers.get("lock-token")!;
    expect(token).toMatch(/^<opaquelocktoken:/);
    const set = await dav.dav("PROPPATCH", "/locked.md", {
      body: propset("<z:colour>blue</z:colour>"),
      headers: { if: `(${token})` },
    });
    expect(set.status).toBe(207);
    await dav.stop();
    dav = await startDav(dirs);
    expect((await dav.dav("PUT", "/locked.md", { body: "not yours\n" })).status).toBe(423);
    const got = await dav.dav("PROPFIND", "/locked.md", {
      headers: { depth: "0" },
      body: propget("<z:colour/><D:lockdiscovery/>"),
    });
    expect(got.text).toMatch(/<z:colour[^>]*>blue<\/z:colour>/);
    expect(got.text).toContain(token.slice(1, -1));
    expect(
      (await dav.dav("PUT", "/locked.md", { body: "mine\n", headers: { if: `(${token})` } })).status,
    ).toBe(204);
    await expect.poll(() => contentAt(dav.api, "locked.md"), { timeout: 15_000 }).toBe("mine\n");
  });
});

describe("txtfs dav's command line", () => {
  it("refuses an address beyond loopback without TLS or --insecure-listen: one line, exit 2", async () => {
    const dirs = makeMountDirs("txtfs-dav-cli-");
    try {
      const r = await runTxtfs(
        ["dav", "--serve", "--data", dirs.data, "--addr", "0.0.0.0:0"],
        txtfsEnv(dirs),
      );
      expect(r.code).toBe(2);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stderr).toMatch(/not loopback.*--tls-cert.*--insecure-listen/);
      const addr = await runTxtfs(["dav", "--serve", "--addr", "nonsense"], txtfsEnv(dirs));
      expect(addr.code).toBe(2);
      expect(addr.stderr).toMatch(/--addr nonsense: expected HOST:PORT/);
    } finally {
      await removeMountDirs(dirs);
    }
  });
});

// Input the service must refuse or keep exactly (issue 14), on both stores: every refusal answers
// the spec's error body and leaves the account exactly as it was.
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accountFingerprint } from "../helpers/fingerprint.ts";
import {
  expectError,
  mkdir,
  mkfile,
  startTestServer,
  type TestServer,
  type TestUser,
} from "../helpers/server.ts";

let t: TestServer;
let alice: TestUser;
let bob: TestUser;
let note: { id: string; etag: string };
let folder: { id: string };
let commentId: string;
let shareId: string;

beforeAll(async () => {
  t = await startTestServer();
  alice = await t.user();
  bob = await t.user();
  folder = await mkdir(alice, { name: "dir" });
  note = await mkfile(alice, { name: "n.md", content: "hello", folderId: folder.id });
  commentId = (await alice.api.post(`/api/v1/files/${note.id}/comments`, { body: "c" })).body.comment.id;
  shareId = (await alice.api.post("/api/v1/shares", { fileId: note.id, email: bob.email, role: "reader" }))
    .body.share.id;
});
afterAll(() => t.close());

/** Runs `request`, asserts the error and that alice's account did not change. */
async function refused(status: number, code: string, request: () => Promise<any>) {
  const before = await accountFingerprint(alice.api);
  const res = await request();
  const error = expectError(res, status, code);
  expect(await accountFingerprint(alice.api)).toBe(before);
  return error;
}

/** A raw JSON body (so lone surrogates and bytes reach the server exactly as written). */
function send(method: string, path: string, body: string | Uint8Array, type = "application/json") {
  return alice.api.request(method, path, { body: body as string, headers: { "content-type": type } });
}

describe("the account fingerprint", () => {
  it("notices a change of content, of a comment and of a share", async () => {
    const u = await t.user();
    const other = await t.user();
    const f = await mkfile(u, { name: "fp.md", content: "1" });
    const c = (await u.api.post(`/api/v1/files/${f.id}/comments`, { body: "c" })).body.comment.id;
    let last = await accountFingerprint(u.api);
    const steps = [
      () => u.api.put(`/api/v1/files/${f.id}`, { content: "2" }),
      () => u.api.request("PATCH", `/api/v1/files/${f.id}/comments/${c}`, { json: { body: "d" } }),
      () => u.api.post("/api/v1/shares", { fileId: f.id, email: other.email, role: "reader" }),
    ];
    for (const step of steps) {
      expect((await step()).status).toBeLessThan(300);
      const now = await accountFingerprint(u.api);
      expect(now).not.toBe(last);
      last = now;
    }
  });
});

describe("NUL characters: kept exactly in a note's content, on both stores", () => {
  const text = "a\u0000b\u0001c\u0001\u00010\u0000\u0000";
  it("create, raw and JSON reads, update, versions, import, batch and upload", async () => {
    const file = await mkfile(alice, { name: "holes.md", content: text });
    expect((await alice.api.get(`/api/v1/files/${file.id}/raw`)).text).toBe(text);
    expect((await alice.api.get(`/api/v1/files/${file.id}`)).body.content).toBe(text);
    await alice.api.put(`/api/v1/files/${file.id}`, { content: `${text}!` });
    expect((await alice.api.get(`/api/v1/files/${file.id}/raw`)).text).toBe(`${text}!`);
    expect((await alice.api.get(`/api/v1/files/${file.id}/versions/1`)).body.version.content).toBe(text);
    const imported = await alice.api.post("/api/v1/files/import", {
      files: [{ path: "imp/h.md", content: text }],
    });
    expect((await alice.api.get(`/api/v1/files/${imported.body.files[0].id}/raw`)).text).toBe(text);
    const batch = await alice.api.post("/api/v1/batch", {
      operations: [{ op: "file.create", body: { name: "b.md", content: text } }],
    });
    expect((await alice.api.get(`/api/v1/files/${batch.body.results[0].itemId}/raw`)).text).toBe(text);
    const up = await send("POST", "/api/v1/files/upload?name=u.txt", Buffer.from(text), "text/plain");
    expect((await alice.api.get(`/api/v1/files/${up.body.file.id}/raw`)).text).toBe(text);
    for (const id of [file.id, imported.body.files[0].id, batch.body.results[0].itemId, up.body.file.id])
      expect((await alice.api.delete(`/api/v1/files/${id}`)).status).toBe(200);
    await alice.api.delete(`/api/v1/folders/${imported.body.folders[0].id}`);
  });
});

describe("NUL characters elsewhere: 400 naming the field, on both stores", () => {
  const nul = "a\u0000b";
  const cases: [string, () => Promise<any>, string][] = [
    ["context", () => alice.api.put(`/api/v1/files/${note.id}`, { context: nul }), "context"],
    ["name", () => alice.api.post("/api/v1/folders", { name: nul }), "name"],
    ["tags", () => alice.api.put(`/api/v1/files/${note.id}`, { tags: ["ok", nul] }), "tags[1]"],
    ["comment body", () => alice.api.post(`/api/v1/files/${note.id}/comments`, { body: nul }), "body"],
    [
      "import path",
      () => alice.api.post("/api/v1/files/import", { files: [{ path: nul }] }),
      "files[0].path",
    ],
    ["id in the path", () => alice.api.get("/api/v1/files/f_%00"), "id"],
    ["id in the query", () => alice.api.get("/api/v1/files?folderId=%00"), "folderId"],
    [
      "a batch operation's name",
      () => alice.api.post("/api/v1/batch", { operations: [{ op: "file.create", body: { name: nul } }] }),
      "operations[0].body.name",
    ],
  ];
  for (const [what, request, field] of cases) {
    it(what, async () => {
      const e = await refused(400, "validation_failed", request);
      expect(e.details[0]).toMatchObject({ field, code: "nul_character" });
    });
  }
});

describe("numbers outside the stores' integer range: 400, not a store error", () => {
  it("versionNumber 1e308", async () => {
    const e = await refused(400, "validation_failed", () =>
      send("POST", `/api/v1/files/${note.id}/versions`, '{"label":"x","versionNumber":1e308}'),
    );
    expect(e.message).toContain("versionNumber");
  });
  it("?before=99999999999999999999", async () => {
    const e = await refused(400, "validation_failed", () =>
      alice.api.get(`/api/v1/files/${note.id}/versions?before=99999999999999999999`),
    );
    expect(e.message).toContain("before");
  });
  it("a selection offset of 2^53", async () => {
    await refused(400, "validation_failed", () =>
      send("POST", `/api/v1/files/${note.id}/comments`, '{"body":"x","selection_start":9007199254740992}'),
    );
  });
});

describe("text that is not valid Unicode: refused, never replaced", () => {
  it("a lone surrogate in a name", async () => {
    const e = await refused(400, "validation_failed", () =>
      send("POST", "/api/v1/files", '{"name":"sur\\ud800rogate.md"}'),
    );
    expect(e.details[0]).toMatchObject({ field: "name", code: "lone_surrogate" });
  });
  it("a lone surrogate in a tag, and in an object key", async () => {
    const e = await refused(400, "validation_failed", () =>
      send("PUT", `/api/v1/files/${note.id}`, '{"tags":["a","\\udc00"]}'),
    );
    expect(e.details[0].field).toBe("tags[1]");
    await refused(400, "validation_failed", () => send("PUT", `/api/v1/files/${note.id}`, '{"\\ud800":1}'));
  });
  it("a surrogate pair (an emoji) is kept exactly", async () => {
    const res = await send(
      "POST",
      "/api/v1/files",
      '{"name":"\\ud83c\\udf0d.md","content":"\\ud83c\\udf0d"}',
    );
    expect(res.status).toBe(201);
    expect(res.body.file.name).toBe("🌍.md");
    expect((await alice.api.get(`/api/v1/files/${res.body.file.id}/raw`)).text).toBe("🌍");
    await alice.api.delete(`/api/v1/files/${res.body.file.id}`);
  });
  it("invalid UTF-8 bytes in a JSON body and in an upload", async () => {
    const bad = Buffer.concat([
      Buffer.from('{"name":"x.md","content":"a'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('"}'),
    ]);
    await refused(400, "invalid_encoding", () => send("POST", "/api/v1/files", bad));
    await refused(400, "invalid_encoding", () =>
      send("POST", "/api/v1/files/upload?name=u.txt", Buffer.from([0x61, 0xc3]), "text/plain"),
    );
  });
});

describe("framework errors answer the spec's error body", () => {
  it("a 10,000-character id: 414 uri_too_long", async () => {
    const res = await refused(414, "uri_too_long", () =>
      alice.api.get(`/api/v1/files/${"a".repeat(10_000)}`),
    );
    expect(res.requestId).toMatch(/\S/);
  });
  it("an undecodable path: 400 invalid_url", async () => {
    await refused(400, "invalid_url", () => alice.api.get("/api/v1/files/%ff%fe"));
  });
  it("a control character in a header value: 400 invalid_request with a requestId", async () => {
    const raw = await new Promise<string>((resolve, reject) => {
      const url = new URL(t.url);
      const socket = connect(Number(url.port), url.hostname, () => {
        socket.write(
          `GET /api/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${alice.key}\r\nX-A: a\u0001b\r\n\r\n`,
        );
      });
      let out = "";
      socket.on("data", (d) => {
        out += d;
      });
      socket.on("close", () => resolve(out));
      socket.on("error", reject);
    });
    const [head, body] = raw.split("\r\n\r\n");
    expect(head).toMatch(/^HTTP\/1\.1 400/);
    const id = /x-request-id: (\S+)/i.exec(head!)?.[1];
    const parsed = JSON.parse(body!);
    expect(parsed.error).toMatchObject({ code: "invalid_request", requestId: id });
    expect(parsed.error.message).toMatch(/\S/);
    expect(parsed.error.resolution).toMatch(/\S/);
  });
  it("a malformed cookie of another app on /keys is ignored (no 500)", async () => {
    const res = await t
      .client()
      .request("GET", "/keys", { headers: { cookie: "other=%E0%A4%A; session=%zz" } });
    expect(res.status).toBeLessThan(500);
  });
});

describe("If-Match is honoured where the record has an ETag, refused where it has none", () => {
  const stale = '"1-deadbeef"';
  it("plan PUT, folder PUT, comment PATCH and share PATCH refuse it", async () => {
    const cases = [
      () =>
        alice.api.put(
          `/api/v1/files/${note.id}/plan`,
          { enabled: true, scope: "manual", trust: "approved" },
          {
            "if-match": stale,
          },
        ),
      () => alice.api.put(`/api/v1/folders/${folder.id}`, { name: "renamed" }, { "if-match": stale }),
      () =>
        alice.api.request("PATCH", `/api/v1/files/${note.id}/comments/${commentId}`, {
          json: { body: "edited" },
          headers: { "if-match": stale },
        }),
      () =>
        alice.api.request("PATCH", `/api/v1/shares/${shareId}`, {
          json: { role: "writer" },
          headers: { "if-match": stale },
        }),
    ];
    for (const request of cases) await refused(400, "if_match_not_supported", request);
  });
  it("file writes still honour it: a stale tag is 412", async () => {
    await refused(412, "precondition_failed", () =>
      alice.api.put(`/api/v1/files/${note.id}`, { content: "x" }, { "if-match": stale }),
    );
  });
});

describe("listing, raw and import", () => {
  it("GET /api/v1/files?folderId=<unknown> is 404; another user's folder too", async () => {
    await refused(404, "not_found", () => alice.api.get("/api/v1/files?folderId=d_unknown"));
    expectError(await bob.api.get(`/api/v1/files?folderId=${folder.id}`), 404, "not_found");
    expect(
      (await alice.api.get(`/api/v1/files?folderId=${folder.id}`)).body.files.map((f: any) => f.id),
    ).toEqual([note.id]);
  });
  it("raw answers text/plain; text/markdown only when asked for it", async () => {
    for (const path of [`/api/me/files/${note.id}/raw`, `/api/v1/files/${note.id}/raw`]) {
      expect((await alice.api.get(path)).headers.get("content-type")).toBe("text/plain; charset=utf-8");
      const md = await alice.api.get(path, { accept: "text/markdown, text/plain;q=0.5" });
      expect(md.headers.get("content-type")).toBe("text/markdown; charset=utf-8");
      expect(md.text).toBe("hello");
      expect((await alice.api.get(path, { accept: "*/*" })).headers.get("content-type")).toMatch(
        /^text\/plain/,
      );
    }
  });
  it("import refuses absolute paths, empty segments and a trailing /", async () => {
    for (const path of ["/etc/x.md", "a//b.md", "trail/", "/"]) {
      const e = await refused(400, "validation_failed", () =>
        alice.api.post("/api/v1/files/import", { files: [{ path: "fine.md", content: "x" }, { path }] }),
      );
      expect(e.message).toContain("files[1].path");
    }
  });
});

describe("sync conflict copies", () => {
  async function deviceOf(u: TestUser) {
    return (await u.api.post("/api/v1/devices", { name: "laptop", platform: "linux" })).body.device
      .id as string;
  }

  it("a file deleted remotely: the copy is made when the change names the file, else the answer says none was", async () => {
    const u = await t.user();
    const deviceId = await deviceOf(u);
    const gone = await mkfile(u, { name: "gone.md", content: "v1" });
    await u.api.delete(`/api/v1/files/${gone.id}`);
    const res = await u.api.post("/api/v1/sync", {
      deviceId,
      cursor: "latest",
      push: [
        {
          id: "named",
          op: "file.update",
          target: gone.id,
          baseEtag: gone.etag,
          body: { name: "gone.md", content: "mine" },
          onConflict: "copy",
        },
        {
          id: "bare",
          op: "file.update",
          target: gone.id,
          baseEtag: gone.etag,
          body: { content: "mine too" },
          onConflict: "copy",
        },
      ],
    });
    expect(res.status).toBe(200);
    const [named, bare] = res.body.pushResults;
    expect(named.conflict.reason).toBe("deleted_remotely");
    expect(named.conflict.copy.name).toMatch(/^gone \(conflicted copy laptop .+\)\.md$/);
    expect(named.error.resolution).toContain(named.conflict.copy.name);
    expect((await u.api.get(`/api/v1/files/${named.conflict.copy.id}/raw`)).text).toBe("mine");
    expect(bare.conflict.copy).toBeUndefined();
    expect(bare.error.resolution).toMatch(/No conflicted copy could be made/);
    const names = (await u.api.get("/api/me/files")).body.files.map((f: any) => f.name);
    expect(names).toEqual([named.conflict.copy.name]);
  });

  it("16 conflict copies made in the same second get 16 distinct names", async () => {
    const u = await t.user();
    const deviceId = await deviceOf(u);
    const file = await mkfile(u, { name: "hot.md", content: "v1" });
    await u.api.put(`/api/v1/files/${file.id}`, { content: "remote" });
    const push = Array.from({ length: 16 }, (_, i) => ({
      id: `c${i}`,
      op: "file.update",
      target: file.id,
      baseEtag: file.etag,
      body: { content: `local ${i}` },
      onConflict: "copy",
    }));
    const res = await u.api.post("/api/v1/sync", { deviceId, cursor: "latest", push });
    const copies = res.body.pushResults.map((r: any) => r.conflict.copy.name);
    expect(new Set(copies).size).toBe(16);
    const listed = (await u.api.get("/api/me/files")).body.files.map((f: any) => f.name);
    expect(listed.filter((n: string) => n.startsWith("hot (conflicted copy"))).toHaveLength(16);
  });
});

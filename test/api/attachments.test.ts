// Attachments (issue 48, an extension of the spec): every file that is not a note, bytes exact, on
// a real server over both stores. Each refused request is checked to have changed nothing.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { attach, bin, blobTable, fullFingerprint, sha } from "../helpers/attachments.ts";
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

beforeAll(async () => {
  t = await startTestServer();
  alice = await t.user();
  bob = await t.user();
});
afterAll(() => t.close());

const octet = { "content-type": "application/octet-stream" };

describe("create, read, replace, rename, move, delete", () => {
  it("stores any bytes exactly, typed by the name, with ETag and 304", async () => {
    const bytes = Buffer.concat([Buffer.from([0, 255, 254, 0, 10, 13]), randomBytes(4096)]);
    const res = await bin(t, alice, "POST", "/api/v1/attachments?name=photo.PNG", bytes, octet);
    expect(res.status).toBe(201);
    const a = res.body.attachment;
    expect(a).toMatchObject({
      name: "photo.PNG",
      contentType: "image/png",
      size: bytes.length,
      folderId: null,
    });
    expect(a.contentHash).toBe(sha(bytes));
    expect(res.headers.get("location")).toBe(`/api/v1/attachments/${a.id}`);
    expect(res.headers.get("etag")).toBe(a.etag);

    const raw = await bin(t, alice, "GET", `/api/v1/attachments/${a.id}/raw`);
    expect(raw.status).toBe(200);
    expect(raw.bytes.equals(bytes)).toBe(true);
    expect(raw.headers.get("content-type")).toBe("image/png");
    expect(raw.headers.get("etag")).toBe(a.etag);
    expect(raw.headers.get("accept-ranges")).toBe("bytes");
    expect(raw.headers.get("x-content-type-options")).toBe("nosniff");
    const notModified = await bin(t, alice, "GET", `/api/v1/attachments/${a.id}/raw`, undefined, {
      "if-none-match": a.etag,
    });
    expect(notModified.status).toBe(304);
    expect(notModified.bytes.length).toBe(0);
    const record = await bin(t, alice, "GET", `/api/me/attachments/${a.id}`, undefined, {
      "if-none-match": a.etag,
    });
    expect(record.status).toBe(304);
    const meRaw = await bin(t, alice, "GET", `/api/me/attachments/${a.id}/raw`);
    expect(meRaw.bytes.equals(bytes)).toBe(true);
    // HEAD: the size without the bytes (a player or a download manager asks first).
    const head = await bin(t, alice, "HEAD", `/api/v1/attachments/${a.id}/raw`);
    expect(head.status).toBe(200);
    expect(head.headers.get("content-length")).toBe(String(bytes.length));
    expect(head.bytes.length).toBe(0);
  });

  it("the /api/me family creates with 200; a JSON or text Content-Type is bytes too; an empty body is an empty file", async () => {
    const json = await bin(t, alice, "POST", "/api/me/attachments?name=data.json", "{not json", {
      "content-type": "application/json",
    });
    expect(json.status).toBe(200);
    expect(json.body.attachment.contentType).toBe("application/json");
    expect((await bin(t, alice, "GET", `/api/v1/attachments/${json.body.attachment.id}/raw`)).text).toBe(
      "{not json",
    );
    const empty = await bin(t, alice, "POST", "/api/v1/attachments?name=empty.bin");
    expect(empty.status).toBe(201);
    expect(empty.body.attachment).toMatchObject({ size: 0, contentType: "application/octet-stream" });
    expect(
      (await bin(t, alice, "GET", `/api/v1/attachments/${empty.body.attachment.id}/raw`)).bytes.length,
    ).toBe(0);
  });

  it("replace with If-Match: a stale tag is 412 with the current one and changes nothing", async () => {
    const a = await attach(t, alice, "report.csv", Buffer.from("a,b\n1,2\n"));
    const v2 = Buffer.from("a,b\n3,4\n");
    const ok = await bin(t, alice, "PUT", `/api/v1/attachments/${a.id}/raw`, v2, {
      ...octet,
      "if-match": a.etag,
    });
    expect(ok.status).toBe(200);
    const b = ok.body.attachment;
    expect(b).toMatchObject({ revision: 2, versionNumber: 2, size: v2.length, contentType: "text/csv" });
    expect(b.etag).not.toBe(a.etag);
    const before = await fullFingerprint(t, alice);
    const stale = await bin(t, alice, "PUT", `/api/v1/attachments/${a.id}/raw`, Buffer.from("lost"), {
      ...octet,
      "if-match": a.etag,
    });
    expect(expectError(stale as never, 412, "precondition_failed").details.currentEtag).toBe(b.etag);
    expect(await fullFingerprint(t, alice)).toBe(before);
    // The same bytes again make no new revision.
    const same = await bin(t, alice, "PUT", `/api/v1/attachments/${a.id}/raw`, v2, octet);
    expect(same.body.attachment.etag).toBe(b.etag);
    expect(await fullFingerprint(t, alice)).toBe(before);
  });

  it("rename and move keep the bytes; a taken name is 409 and changes nothing", async () => {
    const dir = await mkdir(alice, { name: "Assets" });
    const bytes = randomBytes(1000);
    const a = await attach(t, alice, "img.jpg", bytes);
    const moved = await alice.api.put(`/api/v1/attachments/${a.id}`, {
      name: "cover.webp",
      folderId: dir.id,
    });
    expect(moved.status).toBe(200);
    expect(moved.body.attachment).toMatchObject({
      name: "cover.webp",
      folderId: dir.id,
      contentType: "image/webp",
      versionNumber: 1,
    });
    expect((await bin(t, alice, "GET", `/api/v1/attachments/${a.id}/raw`)).bytes.equals(bytes)).toBe(true);

    await attach(t, alice, "taken.png", Buffer.from([1]), dir.id);
    await mkfile(alice, { name: "note.png", content: "a note named like a picture", folderId: dir.id });
    const before = await fullFingerprint(t, alice);
    expectError(await alice.api.put(`/api/v1/attachments/${a.id}`, { name: "taken.png" }), 409, "conflict");
    expectError(await alice.api.put(`/api/v1/attachments/${a.id}`, { name: "note.png" }), 409, "conflict");
    const dup = await bin(
      t,
      alice,
      "POST",
      `/api/v1/attachments?name=taken.png&folderId=${dir.id}`,
      Buffer.from([2]),
      octet,
    );
    expectError(dup as never, 409, "conflict");
    expectError(await alice.api.put(`/api/v1/attachments/${a.id}`, { folderId: "d_nope" }), 404, "not_found");
    expectError(
      await alice.api.put(`/api/v1/attachments/${a.id}`, { name: "a/b.png" }),
      400,
      "validation_failed",
    );
    expect(await fullFingerprint(t, alice)).toBe(before);
    // onExisting=replace gives the taken name new bytes (200, same id).
    const rep = await bin(
      t,
      alice,
      "POST",
      `/api/v1/attachments?name=taken.png&folderId=${dir.id}&onExisting=replace`,
      Buffer.from([3]),
      octet,
    );
    expect(rep.status).toBe(200);
    expect(rep.body.attachment.versionNumber).toBe(2);
  });

  it("delete: owner only, If-Match honoured, then 404; the bytes go with the last reference", async () => {
    const bytes = randomBytes(2048);
    const a = await attach(t, alice, "gone.bin", bytes);
    const table = await blobTable(t);
    const before = await fullFingerprint(t, alice);
    expectError(
      await alice.api.delete(`/api/v1/attachments/${a.id}`, { "if-match": '"9-nope"' }),
      412,
      "precondition_failed",
    );
    expectError(await bob.api.delete(`/api/v1/attachments/${a.id}`), 404, "not_found");
    expect(await fullFingerprint(t, alice)).toBe(before);
    const del = await alice.api.delete(`/api/v1/attachments/${a.id}`, { "if-match": a.etag });
    expect(del.status).toBe(200);
    expect(del.body).toMatchObject({ id: a.id, deleted: true });
    expectError(await alice.api.get(`/api/v1/attachments/${a.id}`), 404, "not_found");
    const after = await blobTable(t);
    expect(after.rows).toBe(table.rows - 1);
    expect(after.bytes).toBe(table.bytes - 2048);
  });
});

describe("names: the notes' rules, and .md/.txt only for bytes that are not UTF-8", () => {
  it("refuses bad names and UTF-8 notes (400), keeps a non-UTF-8 .md byte-exact; the note endpoint still refuses it", async () => {
    const before = await fullFingerprint(t, alice);
    for (const name of ["a/b.png", "..", `${"x".repeat(256)}.png`, "ok\u0000.png"]) {
      const res = await bin(
        t,
        alice,
        "POST",
        `/api/v1/attachments?name=${encodeURIComponent(name)}`,
        Buffer.from([1]),
        octet,
      );
      expect(res.status, name).toBe(400);
      expect(res.body.error.code).toBe("validation_failed");
    }
    const utf8 = await bin(
      t,
      alice,
      "POST",
      "/api/v1/attachments?name=readme.md",
      Buffer.from("# hello ✓"),
      octet,
    );
    expect(expectError(utf8 as never, 400, "validation_failed").details[0].code).toBe("note_name");
    const noName = await bin(t, alice, "POST", "/api/v1/attachments", Buffer.from([1]), octet);
    expect(noName.status).toBe(400);
    expect(await fullFingerprint(t, alice)).toBe(before);

    const latin1 = Buffer.from("caf\xe9 cr\xe8me\n", "latin1");
    const md = await bin(t, alice, "POST", "/api/v1/attachments?name=old.md", latin1, {
      "content-type": "text/markdown",
    });
    expect(md.status).toBe(201);
    expect(md.body.attachment.contentType).toBe("text/markdown");
    expect(
      (await bin(t, alice, "GET", `/api/v1/attachments/${md.body.attachment.id}/raw`)).bytes.equals(latin1),
    ).toBe(true);
    const asNote = await bin(t, alice, "POST", "/api/v1/files/upload?name=old2.md", latin1, {
      "content-type": "text/markdown",
    });
    expectError(asNote as never, 400, "invalid_encoding");
    // A rename onto a note's name is held to the same rule, by the bytes it holds.
    const text = await attach(t, alice, "plain.bin", Buffer.from("just text"));
    const toMd = await alice.api.put(`/api/v1/attachments/${text.id}`, { name: "plain.md" });
    expect(expectError(toMd, 400, "validation_failed").details[0].code).toBe("note_name");
    const legacy = await attach(t, alice, "legacy.bin", latin1);
    expect(
      (await alice.api.put(`/api/v1/attachments/${legacy.id}`, { name: "legacy.txt" })).body.attachment,
    ).toMatchObject({
      name: "legacy.txt",
      contentType: "text/plain",
    });
    // Notes' listings stay notes only.
    const files = await alice.api.get("/api/v1/files?limit=1000");
    expect(files.body.files.some((f: { name: string }) => f.name === "old.md")).toBe(false);
  });
});

describe("Range reads", () => {
  it("206 for a range, a suffix, an open end, the first of several; 416 past the end; If-Range", async () => {
    const bytes = randomBytes(1000);
    const a = await attach(t, alice, "movie.mp4", bytes);
    const raw = `/api/v1/attachments/${a.id}/raw`;
    const get = (range: string, extra: Record<string, string> = {}) =>
      bin(t, alice, "GET", raw, undefined, { range, ...extra });
    for (const [range, start, end] of [
      ["bytes=0-9", 0, 9],
      ["bytes=990-", 990, 999],
      ["bytes=-5", 995, 999],
      ["bytes=500-5000", 500, 999],
      ["bytes=10-19, 30-39", 10, 19],
    ] as const) {
      const res = await get(range);
      expect(res.status, range).toBe(206);
      expect(res.headers.get("content-range"), range).toBe(`bytes ${start}-${end}/1000`);
      expect(res.bytes.equals(bytes.subarray(start, end + 1)), range).toBe(true);
    }
    const before = await fullFingerprint(t, alice);
    const past = await get("bytes=1000-1001");
    expectError(past as never, 416, "range_not_satisfiable");
    expect(past.headers.get("content-range")).toBe("bytes */1000");
    expect(await fullFingerprint(t, alice)).toBe(before);
    // Not a bytes range, or an If-Range for another version: the whole content.
    for (const [range, extra] of [
      ["items=0-1", {}],
      ["bytes=9-1", {}],
      ["bytes=0-9", { "if-range": '"7-other"' }],
    ] as const) {
      const res = await get(range, extra);
      expect(res.status, range).toBe(200);
      expect(res.bytes.equals(bytes)).toBe(true);
    }
    expect((await get("bytes=0-9", { "if-range": a.etag })).status).toBe(206);
  });
});

describe("stored once per content", () => {
  it("two attachments with the same 1 MiB add the blob once; a rename adds nothing", async () => {
    const mib = randomBytes(1024 * 1024);
    const start = await blobTable(t);
    const one = await attach(t, alice, "same-1.bin", mib);
    const afterOne = await blobTable(t);
    expect(afterOne.rows).toBe(start.rows + 1);
    expect(afterOne.bytes).toBe(start.bytes + mib.length);
    const two = await attach(t, alice, "same-2.bin", mib);
    const afterTwo = await blobTable(t);
    expect(afterTwo.rows).toBe(afterOne.rows);
    expect(afterTwo.bytes).toBe(afterOne.bytes);
    expect(afterTwo.refs).toBe(afterOne.refs + 1);
    expect((await alice.api.put(`/api/v1/attachments/${two.id}`, { name: "renamed.bin" })).status).toBe(200);
    expect(await blobTable(t)).toEqual(afterTwo);
    // Deleting one keeps the bytes for the other; deleting both frees them.
    await alice.api.delete(`/api/v1/attachments/${one.id}`);
    expect((await blobTable(t)).bytes).toBe(afterTwo.bytes);
    expect((await bin(t, alice, "GET", `/api/v1/attachments/${two.id}/raw`)).bytes.equals(mib)).toBe(true);
    await alice.api.delete(`/api/v1/attachments/${two.id}`);
    expect(await blobTable(t)).toEqual(start);
  });
});

describe("versions", () => {
  it("every content change is a version; each one's bytes are readable; 404 for none", async () => {
    const a = await attach(t, alice, "history.dat", Buffer.from("one"));
    await bin(t, alice, "PUT", `/api/v1/attachments/${a.id}/raw`, Buffer.from("two"), octet);
    await alice.api.put(`/api/v1/attachments/${a.id}`, { name: "history2.dat" }); // no new version
    await bin(t, alice, "PUT", `/api/v1/attachments/${a.id}/raw`, Buffer.from("three"), octet);
    const list = await alice.api.get(`/api/v1/attachments/${a.id}/versions`);
    expect(list.status).toBe(200);
    expect(list.body.currentVersion).toBe(3);
    expect(list.body.versions.map((v: { versionNumber: number }) => v.versionNumber)).toEqual([3, 2, 1]);
    expect(list.body.versions[0].current).toBe(true);
    expect(list.body.versions[2]).toMatchObject({
      byteSize: 3,
      contentHash: sha(Buffer.from("one")),
      source: "api",
    });
    const v1 = await bin(t, alice, "GET", `/api/v1/attachments/${a.id}/versions/1/raw`);
    expect(v1.text).toBe("one");
    expectError(
      (await bin(t, alice, "GET", `/api/v1/attachments/${a.id}/versions/9/raw`)) as never,
      404,
      "version_not_found",
    );
  });

  it("keeps the newest 100 (the notes' rule) and frees the bytes of the pruned ones", async () => {
    const a = await attach(t, alice, "often.bin", Buffer.from("v1"));
    const start = await blobTable(t);
    for (let round = 0; round < 2; round++) {
      const operations = Array.from({ length: 51 }, (_, i) => ({
        op: "attachment.update",
        target: a.id,
        body: { contentBase64: Buffer.from(`v${round * 51 + i + 2}`).toString("base64") },
      }));
      const res = await alice.api.post("/api/v1/batch", { operations });
      expect(res.status, res.text).toBe(200);
    }
    const list = await alice.api.get(`/api/v1/attachments/${a.id}/versions`);
    expect(list.body.currentVersion).toBe(103);
    expect(list.body.versions).toHaveLength(100);
    expect(list.body.versions.at(-1).versionNumber).toBe(4);
    expect((await bin(t, alice, "GET", `/api/v1/attachments/${a.id}/versions/3/raw`)).status).toBe(404);
    expect((await bin(t, alice, "GET", `/api/v1/attachments/${a.id}/versions/4/raw`)).text).toBe("v4");
    // 102 new contents, 3 pruned (v1..v3): 99 more blobs than before the rounds.
    expect((await blobTable(t)).rows).toBe(start.rows + 99);
  });
});

describe("limits: 413 per file, 507 per account", () => {
  it("refuses a body over the limit and an account over its quota, changing nothing", async () => {
    const small = await startTestServer({ attachments: { maxBytes: 1000, quotaBytes: 2500 } });
    try {
      const carol = await small.user();
      const ok = await attach(small, carol, "fits.bin", randomBytes(1000));
      await attach(small, carol, "fits2.bin", randomBytes(1000));
      const before = await fullFingerprint(small, carol);
      const table = await blobTable(small);
      const big = await bin(
        small,
        carol,
        "POST",
        "/api/v1/attachments?name=big.bin",
        randomBytes(1001),
        octet,
      );
      expect(expectError(big as never, 413, "payload_too_large").message).toMatch(/1000 bytes/);
      const bigPut = await bin(
        small,
        carol,
        "PUT",
        `/api/v1/attachments/${ok.id}/raw`,
        randomBytes(5000),
        octet,
      );
      expectError(bigPut as never, 413, "payload_too_large");
      const over = await bin(
        small,
        carol,
        "POST",
        "/api/v1/attachments?name=over.bin",
        randomBytes(600),
        octet,
      );
      expect(expectError(over as never, 507, "insufficient_storage").details).toMatchObject({
        quotaBytes: 2500,
        usedBytes: 2000,
      });
      const batch = await carol.api.post("/api/v1/batch", {
        operations: [
          {
            op: "attachment.create",
            body: { name: "b64.bin", contentBase64: randomBytes(1001).toString("base64") },
          },
        ],
      });
      expectError(batch, 413, "payload_too_large");
      expect(await fullFingerprint(small, carol)).toBe(before);
      expect(await blobTable(small)).toEqual(table);
      // Replacing within the quota is fine (the old size no longer counts).
      const replaced = await bin(
        small,
        carol,
        "PUT",
        `/api/v1/attachments/${ok.id}/raw`,
        randomBytes(500),
        octet,
      );
      expect(replaced.status).toBe(200);
      expect((await attach(small, carol, "now-fits.bin", randomBytes(500))).size).toBe(500);
      // What a client needs to refuse a file at once: the limits and what is used, in /api/me.
      expect((await carol.api.get("/api/me")).body.attachmentLimits).toEqual({
        maxBytes: 1000,
        quotaBytes: 2500,
        usedBytes: 2000,
      });
    } finally {
      await small.close();
    }
  });
});

describe("Idempotency-Key", () => {
  it("a retry replays the first answer; the same key with other bytes is 422", async () => {
    const key = { ...octet, "idempotency-key": `att-${Math.random()}` };
    const bytes = randomBytes(300);
    const first = await bin(t, alice, "POST", "/api/v1/attachments?name=once.bin", bytes, key);
    expect(first.status).toBe(201);
    const before = await fullFingerprint(t, alice);
    const again = await bin(t, alice, "POST", "/api/v1/attachments?name=once.bin", bytes, key);
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
    const other = await bin(t, alice, "POST", "/api/v1/attachments?name=once.bin", randomBytes(300), key);
    expectError(other as never, 422, "idempotency_key_reused");
    expect(await fullFingerprint(t, alice)).toBe(before);
  });
});

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
    } finally {
      await small.close();
    }
  });
});

describe("auth, scopes and roles", () => {
  it("401 without a key, 403 insufficient_scope for a read-only key; nothing changes", async () => {
    const ro = await t.user(undefined, ["files:read", "folders:read", "shares:read", "collaboration:read"]);
    const a = await attach(t, alice, "private.png", Buffer.from([9]));
    const before = await fullFingerprint(t, ro);
    expectError(
      (await bin(t, undefined, "GET", `/api/v1/attachments/${a.id}/raw`)) as never,
      401,
      "unauthenticated",
    );
    expectError(
      (await bin(t, undefined, "POST", "/api/v1/attachments?name=x.png", Buffer.from([1]), octet)) as never,
      401,
      "unauthenticated",
    );
    expectError(
      (await bin(t, ro, "POST", "/api/v1/attachments?name=x.png", Buffer.from([1]), octet)) as never,
      403,
      "insufficient_scope",
    );
    expect(await fullFingerprint(t, ro)).toBe(before);
    // Another account's attachment is not found (existence is not revealed).
    expectError((await bin(t, bob, "GET", `/api/v1/attachments/${a.id}/raw`)) as never, 404, "not_found");
    expectError(await bob.api.put(`/api/v1/attachments/${a.id}`, { name: "mine.png" }), 404, "not_found");
  });

  it("folder shares apply as to notes: a reader reads, a writer writes, only the owner deletes", async () => {
    const owner = await t.user();
    const reader = await t.user();
    const writer = await t.user();
    const team = await mkdir(owner, { name: "Team" });
    const sub = await mkdir(owner, { name: "Sub", parentFolderId: team.id });
    const pic = await attach(t, owner, "diagram.svg", Buffer.from("<svg/>"), sub.id);
    for (const [user, role] of [
      [reader, "reader"],
      [writer, "writer"],
    ] as const) {
      const res = await owner.api.post(`/api/v1/folders/${team.id}/share`, { email: user.email, role });
      expect(res.status).toBe(201);
    }
    // The reader sees it (listing, record, bytes) with its role.
    const listed = await reader.api.get("/api/v1/attachments");
    expect(listed.body.attachments.map((a: { id: string }) => a.id)).toContain(pic.id);
    const rec = await reader.api.get(`/api/v1/attachments/${pic.id}`);
    expect(rec.body).toMatchObject({ access: "shared", role: "reader" });
    expect((await bin(t, reader, "GET", `/api/v1/attachments/${pic.id}/raw`)).text).toBe("<svg/>");
    const before = await fullFingerprint(t, owner);
    expectError(
      (await bin(t, reader, "PUT", `/api/v1/attachments/${pic.id}/raw`, Buffer.from("x"), octet)) as never,
      403,
      "read_only_access",
    );
    expectError(
      await reader.api.put(`/api/v1/attachments/${pic.id}`, { name: "y.svg" }),
      403,
      "read_only_access",
    );
    expectError(
      (await bin(
        t,
        reader,
        "POST",
        `/api/v1/attachments?name=r.png&folderId=${sub.id}`,
        Buffer.from([1]),
        octet,
      )) as never,
      403,
      "read_only_access",
    );
    expectError(await writer.api.delete(`/api/v1/attachments/${pic.id}`), 403, "owner_only");
    expect(await fullFingerprint(t, owner)).toBe(before);
    // The writer writes and creates inside the owner's tree; the owner owns what it creates.
    expect(
      (await bin(t, writer, "PUT", `/api/v1/attachments/${pic.id}/raw`, Buffer.from("<svg></svg>"), octet))
        .status,
    ).toBe(200);
    const made = await attach(t, writer, "by-writer.png", Buffer.from([7]), sub.id);
    expect(made).toMatchObject({ ownerId: owner.id, role: "writer" });
    expect((await owner.api.delete(`/api/v1/attachments/${made.id}`)).status).toBe(200);
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

describe("the change feed", () => {
  it("strict clients never see attachments; include=attachments carries creates, changes and tombstones", async () => {
    const dave = await t.user();
    await mkfile(dave, { name: "plain.md", content: "x" });
    const head = (await dave.api.get("/api/v1/changes?cursor=latest")).body.cursor;
    const a = await attach(t, dave, "pic.gif", Buffer.from("GIF89a"));
    await bin(t, dave, "PUT", `/api/v1/attachments/${a.id}/raw`, Buffer.from("GIF89b"), octet);
    const gone = await attach(t, dave, "tmp.zip", Buffer.from("PK"));
    await dave.api.delete(`/api/v1/attachments/${gone.id}`);

    const strict = await dave.api.get(`/api/v1/changes?cursor=${head}`);
    expect(strict.body.changes).toEqual([]);
    expect(strict.body.hasMore).toBe(false);
    const all = (await dave.api.get("/api/v1/changes?cursor=0")).body;
    expect(all.changes.every((c: { kind: string }) => c.kind !== "attachment")).toBe(true);
    // The strict reader is at the head: nothing it was not told is in front of it.
    expect(strict.body.cursor).toBe(all.cursor);

    const asked = (await dave.api.get(`/api/v1/changes?cursor=${head}&include=attachments`)).body.changes;
    const mine = asked.filter((c: { kind: string }) => c.kind === "attachment");
    expect(mine.map((c: { id: string; deleted: boolean }) => [c.id, c.deleted])).toEqual([
      [a.id, false],
      [gone.id, true],
    ]);
    expect(mine[0].attachment).toMatchObject({ name: "pic.gif", revision: 2, size: 6 });
    expect(mine[0].etag).toBe(mine[0].attachment.etag);
    const fromZero = (await dave.api.get("/api/v1/changes?cursor=0&include=attachments")).body.changes;
    expect(
      fromZero.filter((c: { kind: string }) => c.kind === "attachment").map((c: { id: string }) => c.id),
    ).toEqual([a.id]);
  });
});

describe("batch and sync", () => {
  it("batch writes attachments (base64) in one transaction; one bad operation and nothing is applied", async () => {
    const erin = await t.user();
    const before = await fullFingerprint(t, erin);
    const bad = await erin.api.post("/api/v1/batch", {
      operations: [
        { id: "d", op: "folder.create", body: { name: "Img" } },
        { op: "attachment.create", body: { name: "ok.png", folderId: { ref: "d" }, contentBase64: "AAEC" } },
        { op: "attachment.create", body: { name: "bad.png", contentBase64: "not base64!" } },
      ],
    });
    expect(expectError(bad, 400, "validation_failed").details[0]).toMatchObject({ index: 2 });
    expect(await fullFingerprint(t, erin)).toBe(before);
    const good = await erin.api.post("/api/v1/batch", {
      operations: [
        { id: "d", op: "folder.create", body: { name: "Img" } },
        {
          id: "a",
          op: "attachment.create",
          body: { name: "ok.png", folderId: { ref: "d" }, contentBase64: "AAEC/w==" },
        },
        {
          op: "attachment.update",
          target: { ref: "a" },
          body: { name: "renamed.png", contentBase64: "BQY=" },
        },
      ],
    });
    expect(good.status, good.text).toBe(200);
    const id = good.body.results[1].itemId;
    expect(good.body.results[2]).toMatchObject({
      status: 200,
      itemId: id,
      body: { attachment: { name: "renamed.png", size: 2 } },
    });
    expect((await bin(t, erin, "GET", `/api/v1/attachments/${id}/raw`)).bytes).toEqual(Buffer.from([5, 6]));
  });

  it("sync pushes attachments and pulls them with include; a stale baseEtag is a conflict, not applied", async () => {
    const fred = await t.user();
    const a = await attach(t, fred, "s.bin", Buffer.from("base"));
    const pushed = await fred.api.post("/api/v1/sync", {
      cursor: "latest",
      push: [
        {
          id: "u",
          op: "attachment.update",
          target: a.id,
          baseEtag: a.etag,
          body: { contentBase64: Buffer.from("mine").toString("base64") },
        },
        { id: "c", op: "attachment.create", body: { name: "new.bin", contentBase64: "" } },
      ],
    });
    expect(pushed.status, pushed.text).toBe(200);
    expect(pushed.body.pushResults.map((r: { status: number }) => r.status)).toEqual([200, 201]);
    const before = await fullFingerprint(t, fred);
    const stale = await fred.api.post("/api/v1/sync", {
      cursor: 0,
      include: "attachments",
      push: [
        { id: "s", op: "attachment.update", target: a.id, baseEtag: a.etag, body: { contentBase64: "eA==" } },
      ],
    });
    expect(stale.body.pushResults[0]).toMatchObject({
      status: 409,
      conflict: { reason: "changed_remotely" },
    });
    expect(await fullFingerprint(t, fred)).toBe(before);
    const kinds = stale.body.changes.map((c: { kind: string; id: string }) => `${c.kind}:${c.id}`);
    expect(kinds).toContain(`attachment:${a.id}`);
    const strict = await fred.api.post("/api/v1/sync", { cursor: 0 });
    expect(strict.body.changes.some((c: { kind: string }) => c.kind === "attachment")).toBe(false);
  });
});

describe("folders and listings", () => {
  it("deleting a folder moves its attachments up one level, like notes (a taken name gets (1))", async () => {
    const gina = await t.user();
    const top = await mkdir(gina, { name: "Top" });
    const inner = await mkdir(gina, { name: "Inner", parentFolderId: top.id });
    const x = await attach(t, gina, "x.png", Buffer.from("inner"), inner.id);
    const clash = await attach(t, gina, "x.png", Buffer.from("top"), top.id);
    const note = await mkfile(gina, { name: "n.md", content: "n", folderId: inner.id });
    const del = await gina.api.delete(`/api/v1/folders/${inner.id}`);
    expect(del.status, del.text).toBe(200);
    expect(del.body.movedFileIds).toEqual([note.id]);
    expect(del.body.movedAttachmentIds).toEqual([x.id]);
    const moved = (await gina.api.get(`/api/v1/attachments/${x.id}`)).body;
    expect(moved).toMatchObject({ folderId: top.id, name: "x (1).png" });
    expect((await bin(t, gina, "GET", `/api/v1/attachments/${x.id}/raw`)).text).toBe("inner");
    expect((await gina.api.get(`/api/v1/attachments/${clash.id}`)).body.name).toBe("x.png");
    const inTop = await gina.api.get(`/api/v1/attachments?folderId=${top.id}`);
    expect(inTop.body.attachments.map((a: { id: string }) => a.id).sort()).toEqual([x.id, clash.id].sort());
  });

  it("GET /api/me gains rootAttachments; rootFiles and the notes' listings stay notes only; pages page", async () => {
    const hal = await t.user();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await attach(t, hal, `p${i}.png`, Buffer.from([i]))).id);
    await mkfile(hal, { name: "only-note.md", content: "" });
    const me = await hal.api.get("/api/me");
    expect(me.body.rootFiles.map((f: { name: string }) => f.name)).toEqual(["only-note.md"]);
    expect(me.body.rootAttachments.map((a: { id: string }) => a.id)).toEqual(ids);
    expect((await hal.api.get("/api/v1/files")).body.files).toHaveLength(1);
    const p1 = await hal.api.get("/api/v1/attachments?limit=2&folderId=root");
    expect(p1.body.hasMore).toBe(true);
    const p2 = await hal.api.get(`/api/v1/attachments?limit=10&cursor=${p1.body.nextCursor}`);
    expect([...p1.body.attachments, ...p2.body.attachments].map((a: { id: string }) => a.id)).toEqual(ids);
    expectError(await hal.api.get("/api/v1/attachments?cursor=zzz"), 400, "invalid_cursor");
    expectError(await hal.api.get("/api/v1/attachments?folderId=d_none"), 404, "not_found");
  });
});

describe("one name, one item", () => {
  it("a note may not take an attachment's name in its folder (create, rename, move, import); nothing changes", async () => {
    const ivy = await t.user();
    const dir = await mkdir(ivy, { name: "Mixed" });
    await attach(t, ivy, "chart.png", Buffer.from([1, 2]), dir.id);
    const note = await mkfile(ivy, { name: "draft.md", content: "x" });
    const before = await fullFingerprint(t, ivy);
    expectError(
      await ivy.api.post("/api/v1/files", { name: "chart.png", folderId: dir.id }),
      409,
      "conflict",
    );
    expectError(
      await ivy.api.put(`/api/v1/files/${note.id}`, { name: "chart.png", folderId: dir.id }),
      409,
      "conflict",
    );
    const imported = await ivy.api.post("/api/v1/files/import", {
      files: [{ path: "Mixed/chart.png", content: "text" }],
    });
    expectError(imported, 409, "conflict");
    expect(await fullFingerprint(t, ivy)).toBe(before);
    // The same name elsewhere is fine.
    expect((await ivy.api.post("/api/v1/files", { name: "chart.png" })).status).toBe(201);
  });
});

describe("a share in the feed", () => {
  it("sharing a folder tells the grantee of its attachments; moving one out and revoking take them back", async () => {
    const owner = await t.user();
    const friend = await t.user();
    const shared = await mkdir(owner, { name: "Shared" });
    const mine = await mkdir(owner, { name: "Mine" });
    const pic = await attach(t, owner, "p.png", Buffer.from([1]), shared.id);
    const doc = await attach(t, owner, "d.pdf", Buffer.from("%PDF"), shared.id);
    const head = (await friend.api.get("/api/v1/changes?cursor=latest")).body.cursor;
    const share = await owner.api.post(`/api/v1/folders/${shared.id}/share`, {
      email: friend.email,
      role: "reader",
    });
    expect(share.status).toBe(201);
    const told = async (from: number) =>
      (await friend.api.get(`/api/v1/changes?cursor=${from}&include=attachments`)).body.changes.filter(
        (c: { kind: string }) => c.kind === "attachment",
      );
    const afterShare = await told(head);
    expect(afterShare.map((c: { id: string }) => c.id).sort()).toEqual([pic.id, doc.id].sort());
    expect(afterShare[0].attachment.role).toBe("reader");
    const mark = (await friend.api.get("/api/v1/changes?cursor=latest")).body.cursor;
    // Moving one out of the shared folder: a tombstone for the friend, who can no longer see it.
    expect((await owner.api.put(`/api/v1/attachments/${doc.id}`, { folderId: mine.id })).status).toBe(200);
    const moved = await told(mark);
    expect(moved).toMatchObject([{ id: doc.id, deleted: true, reason: "access_revoked" }]);
    expectError(await friend.api.get(`/api/v1/attachments/${doc.id}`), 404, "not_found");
    const mark2 = (await friend.api.get("/api/v1/changes?cursor=latest")).body.cursor;
    expect((await owner.api.delete(`/api/v1/shares/${share.body.share.id}`)).status).toBe(200);
    expect(await told(mark2)).toMatchObject([{ id: pic.id, deleted: true, reason: "access_revoked" }]);
    expectError(
      (await bin(t, friend, "GET", `/api/v1/attachments/${pic.id}/raw`)) as never,
      404,
      "not_found",
    );
  });
});

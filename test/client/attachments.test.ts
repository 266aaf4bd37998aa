// The mount's client (src/client) against a real server: attachments go and come as bytes, exactly
// (every byte value, not UTF-8 at all), with ETags, If-Match, Range and the service's limits as
// ApiErrors that say which (413, 507) — what the mount's write path maps to EFBIG and EDQUOT.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiError, TxtfsClient } from "../../src/client/api.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let t: TestServer;
let client: TxtfsClient;

/** Every byte value, twice, then random bytes: no text encoding survives this unchanged. */
const binary = Buffer.concat([Buffer.from([...Array(256).keys(), ...Array(256).keys()]), randomBytes(4096)]);

beforeAll(async () => {
  t = await startTestServer({ attachments: { maxBytes: 64 * 1024, quotaBytes: 96 * 1024 } });
  const u = await t.user();
  client = new TxtfsClient({ url: t.url, key: u.key, source: "mount", timeoutMs: 5000 });
});
afterAll(async () => {
  await client.close();
  await t.close();
});

describe("attachments through the mount's client", () => {
  it("stores, reads, lists, replaces, renames and deletes bytes exactly", async () => {
    const folder = await client.createFolder({ name: "pics", parentFolderId: null });
    const made = await client.attachments.create("image.png", folder.id, binary, { idempotencyKey: "k-1" });
    expect(made).toMatchObject({
      name: "image.png",
      folderId: folder.id,
      size: binary.length,
      contentType: "image/png",
    });
    // The same key again: the same attachment, not a second one.
    expect(
      (await client.attachments.create("image.png", folder.id, binary, { idempotencyKey: "k-1" })).id,
    ).toBe(made.id);

    const read = await client.attachments.read(made.id);
    expect(read?.bytes.equals(binary)).toBe(true);
    expect(read?.etag).toBe(made.etag);
    expect(await client.attachments.read(made.id, { etag: made.etag })).toBeNull(); // 304
    const part = await client.attachments.read(made.id, { range: { start: 250, end: 261 } });
    expect(part?.bytes.equals(binary.subarray(250, 262))).toBe(true);
    expect(part?.size).toBe(binary.length);

    expect((await client.attachments.all()).map((a) => a.id)).toEqual([made.id]);

    const next = Buffer.from([0xff, 0xfe, 0x00, 0x80]);
    const replaced = await client.attachments.replace(made.id, next, { ifMatch: made.etag });
    expect((await client.attachments.read(made.id))?.bytes.equals(next)).toBe(true);
    // A stale If-Match is refused and changes nothing.
    await expect(client.attachments.replace(made.id, binary, { ifMatch: made.etag })).rejects.toMatchObject({
      status: 412,
    });
    expect((await client.attachments.read(made.id))?.bytes.equals(next)).toBe(true);

    const moved = await client.attachments.update(made.id, { name: "moved.png", folderId: null });
    expect(moved).toMatchObject({ name: "moved.png", folderId: null, contentHash: replaced.contentHash });
    await client.attachments.delete(made.id, moved.etag);
    await expect(client.attachments.get(made.id)).rejects.toMatchObject({ status: 404 });
  });

  it("says which limit refused a file: 413 past the per-file size, 507 past the account's quota, nothing kept", async () => {
    const big = randomBytes(64 * 1024 + 1);
    const tooBig = await client.attachments.create("big.bin", null, big).catch((e: unknown) => e);
    expect(tooBig).toBeInstanceOf(ApiError);
    expect((tooBig as ApiError).status).toBe(413);
    const first = await client.attachments.create("a.bin", null, randomBytes(60 * 1024));
    const over = await client.attachments
      .create("b.bin", null, randomBytes(60 * 1024))
      .catch((e: unknown) => e);
    expect((over as ApiError).status).toBe(507);
    expect((await client.attachments.all()).map((a) => a.name)).toEqual(["a.bin"]);
    await client.attachments.delete(first.id);
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bin } from "../helpers/attachments.ts";
import { expectError, mkdir, mkfile, startTestServer, type TestServer } from "../helpers/server.ts";

const octet = { "content-type": "application/octet-stream" };

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

describe("devices", () => {
  it("registers, lists, reads and removes devices; others cannot see them", async () => {
    const u = await t.user();
    const res = await u.api.post("/api/v1/devices", {
      name: "laptop",
      platform: "linux",
      clientName: "txtfs",
    });
    expect(res.status).toBe(201);
    const device = res.body.device;
    expect(device).toMatchObject({ name: "laptop", platform: "linux", clientName: "txtfs", cursor: 0 });
    expect(device.id).toMatch(/^dv_/);
    expect(res.headers.get("location")).toBe(`/api/v1/devices/${device.id}`);
    expect((await u.api.get("/api/v1/devices")).body.devices.map((d: any) => d.id)).toEqual([device.id]);
    expect((await u.api.get(`/api/v1/devices/${device.id}`)).body.device).toEqual(device);
    const other = await t.user();
    expectError(await other.api.get(`/api/v1/devices/${device.id}`), 404, "not_found");
    expectError(await other.api.delete(`/api/v1/devices/${device.id}`), 404, "not_found");
    expect((await other.api.get("/api/v1/devices")).body.devices).toEqual([]);
    // bad input: nothing registered
    expectError(
      await u.api.post("/api/v1/devices", { name: "x", platform: "amiga" }),
      400,
      "validation_failed",
    );
    expectError(
      await u.api.post("/api/v1/devices", { name: "  ", platform: "cli" }),
      400,
      "validation_failed",
    );
    expectError(await u.api.post("/api/v1/devices", { platform: "cli" }), 400, "validation_failed");
    expect((await u.api.get("/api/v1/devices")).body.devices).toHaveLength(1);
    expect((await u.api.delete(`/api/v1/devices/${device.id}`)).body).toEqual({
      id: device.id,
      deleted: true,
    });
    expect((await u.api.get("/api/v1/devices")).body.devices).toEqual([]);
    expectError(await u.api.get(`/api/v1/devices/${device.id}/state`), 404, "not_found");
  });

  it("sets per-file availability, folders inherit, reads it back per device", async () => {
    const u = await t.user();
    const a = (await u.api.post("/api/v1/devices", { name: "a", platform: "linux" })).body.device;
    const b = (await u.api.post("/api/v1/devices", { name: "b", platform: "macos" })).body.device;
    const dir = await mkdir(u, { name: "dir" });
    // Nothing set yet: every note has the default, so none is listed.
    expect((await u.api.get(`/api/v1/devices/${a.id}/state`)).body).toEqual({
      deviceId: a.id,
      default: "online-only",
      items: [],
      files: [],
    });
    const sub = await mkdir(u, { name: "sub", parentFolderId: dir.id });
    const f1 = await mkfile(u, { name: "1.md", folderId: sub.id });
    const f2 = await mkfile(u, { name: "2.md", folderId: sub.id });
    const f3 = await mkfile(u, { name: "3.md" });
    const put = await u.api.put(`/api/v1/devices/${a.id}/state`, {
      items: [
        { folderId: dir.id, state: "pinned" },
        { fileId: f2.id, state: "online-only" },
        { fileId: f3.id, state: "available" },
      ],
    });
    expect(put.status).toBe(200);
    expect(put.body.items).toHaveLength(3);
    expect(put.body.items[0]).toMatchObject({ folderId: dir.id, state: "pinned" });
    // the single-item form
    expect(
      (await u.api.put(`/api/v1/devices/${b.id}/state`, { fileId: f1.id, state: "available" })).status,
    ).toBe(200);
    const sa = (await u.api.get(`/api/v1/devices/${a.id}/state`)).body;
    expect(sa.default).toBe("online-only");
    expect(sa.items).toHaveLength(3);
    expect(sa.files).toEqual(
      expect.arrayContaining([
        { fileId: f1.id, state: "pinned", source: "folder", inheritedFrom: dir.id },
        { fileId: f3.id, state: "available", source: "file" },
      ]),
    );
    expect(sa.files).toHaveLength(2); // f2 is explicitly online-only, the default: not listed
    const sb = (await u.api.get(`/api/v1/devices/${b.id}/state`)).body;
    expect(sb.files).toEqual([{ fileId: f1.id, state: "available", source: "file" }]);

    // bad values and invisible items: 400/404, nothing changed
    const bad = [
      [{ items: [{ fileId: f1.id, state: "always" }] }, 400, "validation_failed"],
      [{ items: [{ fileId: f1.id, state: "available" }, { fileId: f2.id }] }, 400, "validation_failed"],
      [{ items: [{ fileId: f1.id, folderId: dir.id, state: "pinned" }] }, 400, "validation_failed"],
      [
        {
          items: [
            { fileId: f1.id, state: "available" },
            { fileId: "f_missing", state: "pinned" },
          ],
        },
        404,
        "not_found",
      ],
      [{ items: [] }, 400, "validation_failed"],
    ] as const;
    for (const [body, status, code] of bad) {
      expectError(await u.api.put(`/api/v1/devices/${a.id}/state`, body), status, code);
    }
    const many = { items: Array.from({ length: 501 }, () => ({ fileId: f1.id, state: "pinned" })) };
    expectError(await u.api.put(`/api/v1/devices/${a.id}/state`, many), 413, "payload_too_large");
    const stranger = await t.user();
    const theirs = await mkfile(stranger, { name: "s.md" });
    expectError(
      await u.api.put(`/api/v1/devices/${a.id}/state`, { fileId: theirs.id, state: "pinned" }),
      404,
      "not_found",
    );
    expect((await u.api.get(`/api/v1/devices/${a.id}/state`)).body).toEqual(sa);
    // a deleted file drops out of the state
    await u.api.delete(`/api/v1/files/${f3.id}`);
    const after = (await u.api.get(`/api/v1/devices/${a.id}/state`)).body;
    expect(after.items.map((i: any) => i.fileId ?? i.folderId)).not.toContain(f3.id);
  });

  it("an attachment's own state (additive): set, read back, checked like a note's; another's is 404", async () => {
    const u = await t.user();
    const a = (await u.api.post("/api/v1/devices", { name: "a", platform: "linux" })).body.device;
    const png = (await bin(t, u, "POST", "/api/v1/attachments?name=p.png", Buffer.from("png"), octet)).body
      .attachment;
    const put = await u.api.put(`/api/v1/devices/${a.id}/state`, { attachmentId: png.id, state: "pinned" });
    expect(put.status).toBe(200);
    expect(put.body.items).toEqual([
      { attachmentId: png.id, state: "pinned", updatedAt: expect.any(String) },
    ]);
    const got = (await u.api.get(`/api/v1/devices/${a.id}/state`)).body;
    expect(got.items).toEqual([{ attachmentId: png.id, state: "pinned", updatedAt: expect.any(String) }]);
    expect(got.files).toEqual([]); // notes only

    const f = await mkfile(u, { name: "n.md" });
    expectError(
      await u.api.put(`/api/v1/devices/${a.id}/state`, {
        attachmentId: png.id,
        fileId: f.id,
        state: "pinned",
      }),
      400,
      "validation_failed",
    );
    const stranger = await t.user();
    const theirs = (await bin(t, stranger, "POST", "/api/v1/attachments?name=s.png", Buffer.from("s"), octet))
      .body.attachment;
    expectError(
      await u.api.put(`/api/v1/devices/${a.id}/state`, { attachmentId: theirs.id, state: "pinned" }),
      404,
      "not_found",
    );
    expect((await u.api.get(`/api/v1/devices/${a.id}/state`)).body).toEqual(got);
    // removed: it drops out of the state
    await u.api.delete(`/api/v1/attachments/${png.id}`);
    expect((await u.api.get(`/api/v1/devices/${a.id}/state`)).body.items).toEqual([]);
  });
});

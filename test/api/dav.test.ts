// `/dav/` on `txtfs serve`: WebDAV over the service's domain, each request as its caller. litmus
// passes whole; notes for .md/.txt, attachments for the rest; a second user's notes are never
// reachable; a read-only key changes nothing.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKey } from "../../src/server/domain/accounts.ts";
import { bin, fullFingerprint } from "../helpers/attachments.ts";
import { davRequest, runLitmus } from "../helpers/dav.ts";
import { contentAt, noteAt } from "../helpers/mount.ts";
import { startTestServer, type TestServer, type TestUser } from "../helpers/server.ts";

const hasLitmus = (() => {
  try {
    execFileSync("sh", ["-c", "command -v litmus"]);
    return true;
  } catch {
    return false;
  }
})();

let t: TestServer;
let alice: TestUser;
let bob: TestUser;
const dav = (user: TestUser, method: string, path: string, opts?: Parameters<typeof davRequest>[4]) =>
  davRequest(`${t.url}/dav/`, user.key, method, path, opts);

beforeAll(async () => {
  t = await startTestServer();
  alice = await t.user();
  bob = await t.user();
});
afterAll(async () => {
  await t?.close();
});

describe.skipIf(!hasLitmus)("litmus against /dav/ on txtfs serve", () => {
  it("passes all 104 tests of basic, copymove, props, locks and http", { timeout: 240_000 }, async () => {
    const user = await t.user();
    const cwd = mkdtempSync(join(tmpdir(), "txtfs-litmus-"));
    try {
      const score = await runLitmus(`${t.url}/dav/`, user.key, cwd);
      const summary = Object.entries(score.suites).map(([s, r]) => `${s} ${r.passed}/${r.run}`);
      expect(score.failures, score.output).toEqual([]);
      expect(score.warnings, score.output).toEqual([]);
      expect(summary).toEqual(["basic 16/16", "copymove 13/13", "props 30/30", "locks 41/41", "http 4/4"]);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });
});

describe("/dav/ on txtfs serve", () => {
  it("asks for a key: 401 with a Basic challenge without one, or with a wrong one", async () => {
    const none = await davRequest(`${t.url}/dav/`, "", "PROPFIND", "/", { anonymous: true });
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toMatch(/^Basic realm="txtfs"/);
    const wrong = await davRequest(`${t.url}/dav/`, "txt_notakey", "PROPFIND", "/");
    expect(wrong.status).toBe(401);
    const bearer = await davRequest(`${t.url}/dav/`, "", "PROPFIND", "/", {
      headers: { authorization: `Bearer ${alice.key}`, depth: "0" },
    });
    expect(bearer.status).toBe(207);
  });

  it("a .md PUT is a note, any other name an attachment; a note that is not UTF-8 is refused", async () => {
    expect((await dav(alice, "MKCOL", "/work")).status).toBe(201);
    expect((await dav(alice, "PUT", "/work/plan.md", { body: "# Plan\n" })).status).toBe(201);
    expect(await contentAt(alice.api, "work/plan.md")).toBe("# Plan\n");
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 255]);
    expect((await dav(alice, "PUT", "/work/pic.png", { body: png })).status).toBe(201);
    const list = await bin(t, alice, "GET", "/api/v1/attachments?limit=100");
    const pic = list.body.attachments.find((a: any) => a.name === "pic.png");
    expect(pic).toBeDefined();
    expect((await bin(t, alice, "GET", `/api/v1/attachments/${pic.id}/raw`)).bytes.equals(png)).toBe(true);
    const quota = await dav(alice, "PROPFIND", "/", {
      headers: { depth: "0" },
      body: '<D:propfind xmlns:D="DAV:"><D:prop><D:quota-used-bytes/><D:quota-available-bytes/></D:prop></D:propfind>',
    });
    expect(quota.text).toContain(`<D:quota-used-bytes>${png.length}</D:quota-used-bytes>`);
    expect(quota.text).toMatch(/<D:quota-available-bytes>\d+<\/D:quota-available-bytes>/);
    const before = await fullFingerprint(t, alice);
    const bad = await dav(alice, "PUT", "/work/broken.md", { body: Buffer.from([0x66, 0xff, 0xfe]) });
    expect(bad.status).toBe(415);
    expect(await fullFingerprint(t, alice)).toBe(before);
  });

  it("PUT to a temp name and MOVE over keeps the note's id; tags are a urn:txtfs: property", async () => {
    expect((await dav(alice, "PUT", "/kept.md", { body: "one\n" })).status).toBe(201);
    const id = (await noteAt(alice.api, "kept.md")).id;
    expect((await dav(alice, "PUT", "/.kept.md.tmp.md", { body: "two\n" })).status).toBe(201);
    const move = await dav(alice, "MOVE", "/.kept.md.tmp.md", {
      headers: { destination: `${t.url}/dav/kept.md` },
    });
    expect(move.status).toBe(204);
    const note = await noteAt(alice.api, "kept.md");
    expect(note.id).toBe(id);
    expect(note.content).toBe("two\n");
    const set = await dav(alice, "PROPPATCH", "/kept.md", {
      body: '<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:" xmlns:t="urn:txtfs:"><D:set><D:prop><t:tags>a,b</t:tags></D:prop></D:set></D:propertyupdate>',
    });
    expect(set.status).toBe(207);
    expect((await noteAt(alice.api, "kept.md")).tags).toEqual(["a", "b"]);
  });

  it("DELETE then PUT of a note's name by the same caller continues the note: id, context, tags and history kept", async () => {
    const user = await t.user();
    expect((await dav(user, "PUT", "/saved.md", { body: "one\n" })).status).toBe(201);
    expect((await dav(user, "PUT", "/saved.md", { body: "two\n" })).status).toBe(204);
    const before = await noteAt(user.api, "saved.md");
    expect((await user.api.put(`/api/v1/files/${before.id}`, { context: "kept", tags: ["x"] })).status).toBe(
      200,
    );
    const versions = async (id: string) =>
      (await user.api.get(`/api/v1/files/${id}/versions`)).body.versions.length as number;
    const kept = await versions(before.id);
    expect((await dav(user, "DELETE", "/saved.md")).status).toBe(204);
    expect(await contentAt(user.api, "saved.md")).toBeUndefined();
    expect((await dav(user, "PUT", "/saved.md", { body: "three\n" })).status).toBe(201);
    const after = await noteAt(user.api, "saved.md");
    expect([after.id, after.content, after.context, after.tags]).toEqual([
      before.id,
      "three\n",
      "kept",
      ["x"],
    ]);
    expect(await versions(after.id)).toBe(kept + 1);
  });

  it("never continues a note deleted by another key, or by the API, or after a PUT elsewhere took the name", async () => {
    const user = await t.user();
    const other = await t.server.store.transaction((tx) =>
      createKey(tx, user.id, { label: "other device", scopes: ["files:read", "files:write"] }),
    );
    const device = { ...user, key: other.secret };
    expect((await dav(user, "PUT", "/gone.md", { body: "one\n" })).status).toBe(201);
    const first = (await noteAt(user.api, "gone.md")).id;
    // Deleted on purpose by another device (another key): this caller's PUT makes a new note.
    expect((await dav(device, "DELETE", "/gone.md")).status).toBe(204);
    expect((await dav(user, "PUT", "/gone.md", { body: "new\n" })).status).toBe(201);
    const second = (await noteAt(user.api, "gone.md")).id;
    expect(second).not.toBe(first);
    // Deleted through the API: no tombstone either.
    expect((await user.api.delete(`/api/v1/files/${second}`)).status).toBe(200);
    expect((await dav(user, "PUT", "/gone.md", { body: "newer\n" })).status).toBe(201);
    const third = (await noteAt(user.api, "gone.md")).id;
    expect([third === first, third === second]).toEqual([false, false]);
  });

  it("never reaches a second user's notes", async () => {
    expect((await dav(alice, "PUT", "/secret.md", { body: "alice only\n" })).status).toBe(201);
    const aliceBefore = await fullFingerprint(t, alice);
    const listing = await dav(bob, "PROPFIND", "/", { headers: { depth: "1" } });
    expect(listing.status).toBe(207);
    expect(listing.text).not.toContain("secret.md");
    expect(listing.text).not.toContain("work");
    expect((await dav(bob, "GET", "/secret.md")).status).toBe(404);
    expect((await dav(bob, "DELETE", "/secret.md")).status).toBe(404);
    expect(
      (await dav(bob, "MOVE", "/secret.md", { headers: { destination: `${t.url}/dav/mine.md` } })).status,
    ).toBe(404);
    // Bob's PUT to the same path makes Bob's own note.
    expect((await dav(bob, "PUT", "/secret.md", { body: "bob's\n" })).status).toBe(201);
    expect(await contentAt(bob.api, "secret.md")).toBe("bob's\n");
    expect(await contentAt(alice.api, "secret.md")).toBe("alice only\n");
    expect(await fullFingerprint(t, alice)).toBe(aliceBefore);
  });

  it("reaches what others share under Shared with me/OWNER/: a reader is refused changes (403), a writer saves", async () => {
    const owner = await t.user();
    const reader = await t.user();
    const writer = await t.user();
    const folder = (await owner.api.post("/api/v1/folders", { name: "team", parentFolderId: null })).body
      .folder;
    expect(
      (await owner.api.post("/api/v1/files", { name: "plan.md", folderId: folder.id, content: "the plan\n" }))
        .status,
    ).toBe(201);
    for (const [who, role] of [
      [reader, "reader"],
      [writer, "writer"],
    ] as const)
      expect(
        (await owner.api.post("/api/v1/shares", { folderId: folder.id, email: who.email, role })).status,
      ).toBe(201);
    const shared = `/Shared%20with%20me/${encodeURIComponent(owner.email)}/team`;
    const root = await dav(reader, "PROPFIND", "/", { headers: { depth: "1" } });
    expect(root.text).toContain("<D:href>/dav/Shared%20with%20me/</D:href>");
    expect((await dav(reader, "GET", `${shared}/plan.md`)).text).toBe("the plan\n");
    const before = await fullFingerprint(t, owner);
    expect((await dav(reader, "PUT", `${shared}/plan.md`, { body: "mine now\n" })).status).toBe(403);
    expect((await dav(reader, "PUT", `${shared}/new.md`, { body: "new\n" })).status).toBe(403);
    expect((await dav(reader, "DELETE", `${shared}/plan.md`)).status).toBe(403);
    expect((await dav(reader, "MKCOL", "/Shared%20with%20me/mine")).status).toBe(403);
    expect((await dav(reader, "DELETE", "/Shared%20with%20me/")).status).toBe(403);
    expect(await fullFingerprint(t, owner)).toBe(before);
    // A writer saves; deleting stays the owner's, and a refused DELETE of a tree removes nothing.
    expect((await dav(writer, "PUT", `${shared}/plan.md`, { body: "the plan, revised\n" })).status).toBe(204);
    expect((await dav(writer, "DELETE", "/Shared%20with%20me/")).status).toBe(403);
    expect((await dav(writer, "DELETE", shared)).status).toBe(403);
    expect(await contentAt(owner.api, "team/plan.md")).toBe("the plan, revised\n");
  });

  it("a read-only key reads but changes nothing (403)", async () => {
    const owner = await t.user();
    // A second key of the same account, minted with the read scope only.
    const readOnly = await t.server.store.transaction((tx) =>
      createKey(tx, owner.id, { label: "read only", scopes: ["files:read"] }),
    );
    const reader = { ...owner, key: readOnly.secret };
    expect((await dav(owner, "PUT", "/read.md", { body: "readable\n" })).status).toBe(201);
    const before = await fullFingerprint(t, owner);
    expect((await dav(reader, "GET", "/read.md")).text).toBe("readable\n");
    expect((await dav(reader, "PUT", "/read.md", { body: "changed\n" })).status).toBe(403);
    expect((await dav(reader, "PUT", "/new.md", { body: "new\n" })).status).toBe(403);
    expect((await dav(reader, "DELETE", "/read.md")).status).toBe(403);
    expect((await dav(reader, "MKCOL", "/dir")).status).toBe(403);
    expect(await fullFingerprint(t, owner)).toBe(before);
  });
});

describe("/dav/ and the rate limit", () => {
  it("spends the caller's API points: past the limit, 429 with Retry-After, and nothing is written", async () => {
    const limited = await startTestServer({ rateLimit: { limit: 12, anonymousLimit: 3 } });
    try {
      const user = await limited.user();
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) {
        const r = await davRequest(`${limited.url}/dav/`, user.key, "PUT", `/n${i}.md`, { body: `${i}\n` });
        statuses.push(r.status);
      }
      expect(statuses).toEqual([201, 201, 429, 429]); // writes cost 5 points of 12
      const refused = await davRequest(`${limited.url}/dav/`, user.key, "PUT", "/late.md", {
        body: "late\n",
      });
      expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
      const index = await limited.client(user.key).get("/api/me/files");
      expect(index.body.files.map((f: { name: string }) => f.name).sort()).toEqual(["n0.md", "n1.md"]);
      // Without a key, the address's smaller allowance.
      const anon: number[] = [];
      for (let i = 0; i < 4; i++)
        anon.push((await davRequest(`${limited.url}/dav/`, "", "GET", "/", { anonymous: true })).status);
      expect(anon).toEqual([401, 401, 401, 429]);
    } finally {
      await limited.close();
    }
  });
});

// GET /api/me/files writes its records from JSON the database makes (SQLite's json_object; the
// same fields written in JavaScript on PostgreSQL), not from the records every other answer is
// made of (records.ts, toTxtFile). They must stay the same objects: each record of the flat
// listing equals the one GET /api/v1/files pages show, whatever its strings hold and whoever asks.
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdir, mkfile, startTestServer, type TestServer, type TestUser } from "../helpers/server.ts";

let t: TestServer;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  t = await startTestServer();
  alice = await t.user();
  bob = await t.user();
});
afterAll(() => t.close());

/** Every file `user` sees, as GET /api/v1/files pages show them, by id. */
async function pagedRecords(user: TestUser): Promise<Map<string, unknown>> {
  const out = new Map<string, unknown>();
  for (let cursor: string | null = null; ; ) {
    const res: { status: number; text: string; body: any } = await user.api.get(
      `/api/v1/files?limit=100${cursor ? `&cursor=${cursor}` : ""}`,
    );
    expect(res.status, res.text).toBe(200);
    for (const f of res.body.files) out.set(f.id, f);
    if (!res.body.hasMore) return out;
    cursor = res.body.nextCursor;
  }
}

async function expectSameRecords(user: TestUser): Promise<number> {
  const flat = await user.api.get("/api/me/files");
  expect(flat.status, flat.text).toBe(200);
  const paged = await pagedRecords(user);
  expect(flat.body.files.map((f: { id: string }) => f.id)).toEqual([...paged.keys()]);
  for (const f of flat.body.files) expect(f).toStrictEqual(paged.get(f.id));
  return flat.body.files.length;
}

// Strings as users type them and as they should never break JSON: quotes, backslashes, control
// characters (U+0001 is PostgreSQL's escape: nulText.ts; U+0000 is refused in metadata), line and
// paragraph separators, astral characters. Tags refuse commas and control characters.
const chars = (pieces: string[]) =>
  fc
    .array(fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom(...pieces)), { maxLength: 6 })
    .map((a) => a.join(""));
const printable = ['"', "\\", "\u2028", "\u{1F600}", "é", "</script>", "{}", "[]"];
const context = chars([...printable, "\u0001", "\n", "\t", "\r\n"]).map((s) => s.replaceAll("\u0000", ""));
const tag = chars(printable)
  .map((s) =>
    [...s]
      .filter((c) => c >= " " && c !== "\u007f" && c !== ",")
      .join("")
      .trim(),
  )
  .filter((s) => s.length > 0 && s.length <= 40);

describe("the flat listing's records", () => {
  it("are the records of GET /api/v1/files, for the owner and for whom they are shared with", async () => {
    const dir = await mkdir(alice, { name: "shared-dir" });
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            context,
            tags: fc.array(tag, { maxLength: 3 }),
            inDir: fc.boolean(),
          }),
          { minLength: 1, maxLength: 4 },
        ),
        async (files) => {
          for (const [i, f] of files.entries()) {
            const res = await alice.api.post("/api/v1/files", {
              name: `n-${Date.now()}-${i}.md`,
              content: "body",
              context: f.context,
              tags: [...new Set(f.tags)],
              ...(f.inDir ? { folderId: dir.id } : {}),
            });
            expect(res.status, res.text).toBe(201);
          }
          await expectSameRecords(alice);
        },
      ),
      { numRuns: 15 },
    );
    // Bob sees the folder as a writer and one more note as a reader.
    const single = await mkfile(alice, { name: "single.md", content: "x", context: 'say "hi"\n' });
    for (const body of [
      { folderId: dir.id, email: bob.email, role: "writer" },
      { fileId: single.id, email: bob.email, role: "reader" },
    ]) {
      const res = await alice.api.post("/api/v1/shares", body);
      expect(res.status, res.text).toBe(201);
    }
    await mkfile(bob, { name: "bobs.md", content: "mine" });
    // A note bob makes in alice's folder is alice's, and cannot move into his: a folder's notes are
    // its owner's, which the folders' counts rely on (FolderRepo.fileCountsOwned).
    await mkfile(bob, { name: "by-bob.md", content: "in alice's folder", folderId: dir.id });
    const own = await mkdir(bob, { name: "bobs-dir" });
    const moved = (await alice.api.get("/api/me/files")).body.files.find(
      (f: { folderId: string | null }) => f.folderId === dir.id,
    );
    const mv = await bob.api.put(`/api/v1/files/${moved.id}`, { folderId: own.id });
    expect(mv.status, mv.text).toBe(403);
    for (const who of [alice, bob]) {
      const { files, folders } = (await who.api.get("/api/me/files")).body;
      for (const f of folders as { id: string; fileCount: number }[]) {
        const inIt = (files as { folderId: string | null }[]).filter((x) => x.folderId === f.id).length;
        expect(f.fileCount, `${f.id} as ${who.email} sees it`).toBe(inIt);
      }
    }
    const seen = await expectSameRecords(bob);
    const flat = (await bob.api.get("/api/me/files")).body.files as {
      access: string;
      role: string;
      id: string;
    }[];
    expect(flat.find((f) => f.id === single.id)).toMatchObject({ access: "shared", role: "reader" });
    expect(new Set(flat.map((f) => `${f.access}/${f.role}`))).toEqual(
      new Set(["owner/owner", "shared/reader", "shared/writer"]),
    );
    expect(seen).toBeGreaterThan(2);
  });
});

describe("the caller's scopes", () => {
  it("are in the flat listing and in GET /api/me: a mount learns up front what its key may do", async () => {
    const limited = await t.user(undefined, ["files:read", "folders:read"]);
    for (const path of ["/api/me/files", "/api/me"]) {
      expect((await limited.api.get(path)).body.scopes, path).toEqual(["files:read", "folders:read"]);
      expect((await alice.api.get(path)).body.scopes, path).toContain("files:write");
    }
  });
});

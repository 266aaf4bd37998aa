// Random attachment operations against a model (place -> bytes), on a real server over both stores:
// after every operation the service holds exactly the model's files and bytes, refused operations
// change nothing, and the blob table holds each content of every kept version once, counted right.
import fc from "fast-check";
import { afterAll, beforeAll, expect, it } from "vitest";
import { bin, blobTable, sha } from "../helpers/attachments.ts";
import { mkdir, startTestServer, type TestServer, type TestUser } from "../helpers/server.ts";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

const NAMES = ["a.png", "b.bin", "c.pdf", "clip.mp4"];
// Few contents, so copies of the same bytes (dedupe) happen often.
const POOL = [
  Buffer.alloc(0),
  Buffer.from([0, 1, 2, 255]),
  Buffer.alloc(3000, 7),
  Buffer.from("PK\x03\x04zip"),
];
const bytesArb = fc.oneof(
  fc.constantFrom(...POOL),
  fc.uint8Array({ maxLength: 1500 }).map((u) => Buffer.from(u)),
);

type Op =
  | { kind: "create"; name: string; folder: number; bytes: Buffer }
  | { kind: "replace"; pick: number; bytes: Buffer }
  | { kind: "rename"; pick: number; name: string; folder: number }
  | { kind: "delete"; pick: number }
  | { kind: "range"; pick: number; start: number; length: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    kind: fc.constant("create" as const),
    name: fc.constantFrom(...NAMES),
    folder: fc.nat(2),
    bytes: bytesArb,
  }),
  fc.record({ kind: fc.constant("replace" as const), pick: fc.nat(), bytes: bytesArb }),
  fc.record({
    kind: fc.constant("rename" as const),
    pick: fc.nat(),
    name: fc.constantFrom(...NAMES),
    folder: fc.nat(2),
  }),
  fc.record({ kind: fc.constant("delete" as const), pick: fc.nat() }),
  fc.record({
    kind: fc.constant("range" as const),
    pick: fc.nat(),
    start: fc.nat(4000),
    length: fc.integer({ min: 1, max: 500 }),
  }),
);

interface Held {
  id: string;
  folder: number;
  name: string;
  bytes: Buffer;
}

const octet = { "content-type": "application/octet-stream" };

it("random creates, replaces, renames, moves, deletes and range reads match a model", async () => {
  let users = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 20 }), async (ops) => {
      const user: TestUser = await t.user(`prop${++users}-${Math.random()}@example.com`);
      const folderIds = [null, (await mkdir(user, { name: "A" })).id, (await mkdir(user, { name: "B" })).id];
      const model: Held[] = [];
      const at = (folder: number, name: string) => model.find((h) => h.folder === folder && h.name === name);
      for (const op of ops) {
        const held = model.length ? model[("pick" in op ? op.pick : 0) % model.length] : undefined;
        if (op.kind === "create") {
          const q = `name=${op.name}${folderIds[op.folder] ? `&folderId=${folderIds[op.folder]}` : ""}`;
          const res = await bin(t, user, "POST", `/api/v1/attachments?${q}`, op.bytes, octet);
          if (at(op.folder, op.name)) expect(res.status).toBe(409);
          else {
            expect(res.status, res.text).toBe(201);
            model.push({ id: res.body.attachment.id, folder: op.folder, name: op.name, bytes: op.bytes });
          }
        } else if (!held) {
          continue;
        } else if (op.kind === "replace") {
          const res = await bin(t, user, "PUT", `/api/v1/attachments/${held.id}/raw`, op.bytes, octet);
          expect(res.status, res.text).toBe(200);
          held.bytes = op.bytes;
        } else if (op.kind === "rename") {
          const res = await user.api.put(`/api/v1/attachments/${held.id}`, {
            name: op.name,
            folderId: folderIds[op.folder],
          });
          const other = at(op.folder, op.name);
          if (other && other !== held) expect(res.status).toBe(409);
          else {
            expect(res.status, res.text).toBe(200);
            held.folder = op.folder;
            held.name = op.name;
          }
        } else if (op.kind === "delete") {
          expect((await user.api.delete(`/api/v1/attachments/${held.id}`)).status).toBe(200);
          model.splice(model.indexOf(held), 1);
        } else {
          const end = op.start + op.length - 1;
          const res = await bin(t, user, "GET", `/api/v1/attachments/${held.id}/raw`, undefined, {
            range: `bytes=${op.start}-${end}`,
          });
          if (op.start >= held.bytes.length) expect(res.status).toBe(416);
          else {
            expect(res.status).toBe(206);
            expect(res.bytes.equals(held.bytes.subarray(op.start, end + 1))).toBe(true);
          }
        }
        // The service holds exactly the model: places, sizes, hashes, and the bytes themselves.
        const listed = (await user.api.get("/api/v1/attachments?limit=1000")).body.attachments;
        const seen = listed
          .map((a: { name: string; folderId: string | null; size: number; contentHash: string }) =>
            [folderIds.indexOf(a.folderId), a.name, a.size, a.contentHash].join("|"),
          )
          .sort();
        const want = model.map((h) => [h.folder, h.name, h.bytes.length, sha(h.bytes)].join("|")).sort();
        expect(seen).toEqual(want);
      }
      for (const h of model) {
        expect((await bin(t, user, "GET", `/api/v1/attachments/${h.id}/raw`)).bytes.equals(h.bytes)).toBe(
          true,
        );
      }
      for (const h of [...model]) await user.api.delete(`/api/v1/attachments/${h.id}`);
      // Everything deleted: no bytes and no references of this run are left (runs leave none behind).
      expect(await blobTable(t)).toEqual({ rows: 0, bytes: 0, refs: 0 });
    }),
    { numRuns: Number(process.env.TXTFS_PROPERTY_RUNS ?? 25), endOnFailure: true },
  );
});

it("the blob table counts one reference per kept version and holds each content once", async () => {
  const user = await t.user();
  const contents = [POOL[1]!, POOL[2]!, POOL[1]!, POOL[3]!];
  const ids: string[] = [];
  for (const [i, c] of contents.entries()) {
    ids.push((await bin(t, user, "POST", `/api/v1/attachments?name=f${i}.bin`, c, octet)).body.attachment.id);
  }
  await bin(t, user, "PUT", `/api/v1/attachments/${ids[0]}/raw`, POOL[2]!, octet);
  // Versions: f0 {POOL1, POOL2}, f1 {POOL2}, f2 {POOL1}, f3 {POOL3}: 5 references to 3 contents.
  const table = await blobTable(t);
  expect(table.refs).toBe(5);
  expect(table.rows).toBe(3);
  expect(table.bytes).toBe(POOL[1]!.length + POOL[2]!.length + POOL[3]!.length);
  for (const id of ids) await user.api.delete(`/api/v1/attachments/${id}`);
  expect(await blobTable(t)).toEqual({ rows: 0, bytes: 0, refs: 0 });
});

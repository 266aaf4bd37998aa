// The positive side of the bad-input suite, driven by the served OpenAPI document itself (not the
// routes' validation schemas): every request the document calls valid is accepted. Per request:
//   - the example of every operation (its body and required parameters) is never a 400 or a 5xx;
//   - bodies and queries fast-check generates from the document's schemas — patterns, lengths,
//     counts, per-operation batch bodies included — are never refused as invalid (no 400) and never
//     a 5xx; anything else they answer is documented for the operation (the contract checker);
//   - links between operations: what a generated create returns is read back, written with its
//     ETag and deleted, through the document's own paths.
// Both stores. TXTFS_FUZZ_RUNS sets the number of generated requests (default 400 per store).
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdir, mkfile, startTestServer, type TestServer, type TestUser } from "../helpers/server.ts";
import { testPgUrl } from "../helpers/storeUnderTest.ts";

const RUNS = Math.max(100, Math.floor(Number(process.env.TXTFS_FUZZ_RUNS ?? 1500) / 4));
const store = testPgUrl() ? "postgres" : "sqlite";

type Json = Record<string, any>;

let t: TestServer;
let alice: TestUser;
let bob: TestUser;
let doc: Json;
const ids: Record<string, string[]> = {};

beforeAll(async () => {
  t = await startTestServer();
  alice = await t.user();
  bob = await t.user();
  doc = t.server.openapi();
  const folder = await mkdir(alice, { name: "dir" });
  const file = await mkfile(alice, {
    name: "note.md",
    content: "Hello 🌍 world, hello again",
    folderId: folder.id,
  });
  const other = await mkfile(alice, { name: "other.md", content: "other" });
  const comment = (await alice.api.post(`/api/v1/files/${file.id}/comments`, { body: "c" })).body.comment;
  const suggestion = (
    await alice.api.post(`/api/v1/files/${file.id}/suggestions`, {
      selection_start: 0,
      selection_end: 5,
      suggested_text: "Hi",
    })
  ).body.suggestion;
  const share = (
    await alice.api.post("/api/v1/shares", { fileId: other.id, email: bob.email, role: "reader" })
  ).body.share;
  const device = (await alice.api.post("/api/v1/devices", { name: "laptop", platform: "linux" })).body.device;
  Object.assign(ids, {
    file: [file.id, other.id],
    folder: [folder.id],
    comment: [comment.id],
    suggestion: [suggestion.id],
    share: [share.id],
    device: [device.id],
    version: ["1"],
  });
});
afterAll(() => t.close());

const resolve = (s: Json | undefined): Json | undefined =>
  s?.$ref ? resolve(doc.components.schemas[String(s.$ref).split("/").pop()!]) : s;

/** A fixture id for a path parameter, from its name and the path around it. */
function paramValue(path: string, name: string): string {
  if (name === "version") return ids.version![0]!;
  if (name === "itemId") return path.includes("/suggestions/") ? ids.suggestion![0]! : ids.comment![0]!;
  for (const [segment, kind] of [
    ["/folders/", "folder"],
    ["/shares/", "share"],
    ["/devices/", "device"],
    ["/files/", "file"],
  ] as const)
    if (path.includes(segment)) return ids[kind]![0]!;
  return "example";
}

const isType = (s: Json, type: string) => s.type === type || (Array.isArray(s.type) && s.type.includes(type));
const utf8 = (s: string) => Buffer.byteLength(s, "utf8");

/** Values the document calls valid for a schema. */
function valid(schema: Json | undefined, depth = 0): fc.Arbitrary<unknown> {
  const s = resolve(schema);
  if (!s || depth > 6) return fc.constant(null);
  if (s.const !== undefined) return fc.constant(s.const);
  // Offsets into the current content (x-range): the start, an empty selection; a suggestion must
  // change something (x-differs): not empty then.
  if (s["x-range"] || (s.anyOf ?? []).some((o: Json) => o["x-range"])) return fc.constant(0);
  if (s["x-differs"]) return fc.string({ minLength: 1, maxLength: 12 });
  // Cursors are opaque, server-issued (the document says so): the beginning, or none.
  if (s["x-opaque"])
    return (s.anyOf ?? [s]).some((o: Json) => isType(o, "integer")) ? fc.constant(0) : fc.constant(undefined);
  if (s.enum) return fc.constantFrom(...s.enum);
  if (s.oneOf && s.properties) {
    // A batch/sync operation: one of its per-op variants over the common fields.
    return fc.constantFrom(...(s.oneOf as Json[])).chain((variant) =>
      valid(
        {
          type: "object",
          properties: { ...s.properties, ...variant.properties },
          required: [...new Set([...(s.required ?? []), ...(variant.required ?? [])])],
          // Which optional fields a variant forbids (ifMatch on a create): left out.
          "x-omit": variant.not?.required ?? [],
        },
        depth + 1,
      ),
    );
  }
  // `{ref}` names an earlier operation's id (x-ref): generated requests use plain ids.
  const options = (s.anyOf ?? s.oneOf)?.filter((o: Json) => !resolve(o)?.["x-ref"]);
  if (options) return fc.oneof(...options.map((o: Json) => valid(o, depth + 1)));
  if (isType(s, "string") && s.format === "uri") {
    // A destination the document allows everywhere: loopback (x-allowed-hosts).
    return fc.webPath().map((p) => `http://127.0.0.1:9${p.startsWith("/") ? p : `/${p}`}`);
  }
  if (isType(s, "string") && s.format === "email") return fc.emailAddress();
  if (isType(s, "string") && s.format === "date-time")
    return (
      fc
        // (x-within: in the future, at most 366 days ahead)
        .date({
          min: new Date(Date.now() + 86_400_000),
          max: new Date(Date.now() + 300 * 86_400_000),
          noInvalidDate: true,
        })
        .map((d) => d.toISOString())
    );
  // Bytes in JSON: base64 of random bytes (random text would almost never be base64).
  if (isType(s, "string") && s.contentEncoding === "base64")
    return fc.uint8Array({ maxLength: 48 }).map((b) => Buffer.from(b).toString("base64"));
  if (isType(s, "string")) {
    const re = s.pattern ? new RegExp(s.pattern, "u") : undefined;
    const max = Math.min(s.maxLength ?? 24, 24);
    return fc
      .string({ minLength: s.minLength ?? 0, maxLength: Math.max(max, s.minLength ?? 0), unit: "grapheme" })
      .filter(
        (x) =>
          (!re || re.test(x)) && (s["x-max-utf8-bytes"] === undefined || utf8(x) <= s["x-max-utf8-bytes"]),
      );
  }
  if (isType(s, "integer"))
    return fc.integer({ min: s.minimum ?? 0, max: Math.min(s.maximum ?? 1000, (s.minimum ?? 0) + 1000) });
  if (isType(s, "number")) return fc.double({ min: s.minimum ?? -1e6, max: s.maximum ?? 1e6, noNaN: true });
  if (isType(s, "boolean")) return fc.boolean();
  if (isType(s, "null")) return fc.constant(null);
  if (isType(s, "array"))
    return fc.array(valid(s.items, depth + 1), {
      minLength: s.minItems ?? 0,
      maxLength: Math.min(s.maxItems ?? 3, 3),
    });
  if (isType(s, "object")) {
    const omit = new Set<string>(s["x-omit"] ?? []);
    const props = Object.entries<Json>(s.properties ?? {}).filter(([k]) => !omit.has(k));
    const required = (s.required ?? []).filter((k: string) => !omit.has(k));
    return fc
      .record(Object.fromEntries(props.map(([k, v]) => [k, idsFor(k, v) ?? valid(v, depth + 1)])), {
        requiredKeys: required,
      })
      .filter(
        (o) =>
          Object.keys(o).length >= (s.minProperties ?? 0) &&
          Object.entries<string[]>(s.dependentRequired ?? {}).every(
            ([k, needs]) => !(k in o) || needs.every((n) => n in o),
          ),
      );
  }
  return fc.constant(null);
}

/** Ids that exist, for the fields that hold them (a made-up id is a 404: valid, but tests little). */
function idsFor(field: string, schema: Json): fc.Arbitrary<unknown> | undefined {
  const nullable = (schema.anyOf ?? []).some((o: Json) => isType(o, "null"));
  if (field === "fileId") return fc.constantFrom(...ids.file!);
  // Not the file in the path (x-not-self): paths name the first fixture file.
  if (field === "targetFileId") return fc.constant(ids.file![1]!);
  if (field === "folderId" || field === "parentFolderId")
    return fc.constantFrom(...ids.folder!, ...(nullable ? [null] : []));
  if (field === "deviceId") return fc.constantFrom(...ids.device!);
  return undefined;
}

interface Operation {
  method: string;
  path: string;
  op: Json;
}

function operations(): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries<Json>(doc.paths))
    for (const [method, op] of Object.entries<Json>(item))
      if (["get", "post", "put", "patch", "delete"].includes(method))
        out.push({ method: method.toUpperCase(), path, op });
  // The API (both families); the key page and sign-in need a browser session, the brain a provider.
  return out.filter(
    (o) =>
      o.path.startsWith("/api/") &&
      o.op["x-surface"] !== "session" &&
      !(o.op.tags ?? []).includes("brain") &&
      // A long poll waits for a change by design; its `wait` is generated as 0 below.
      o.op.operationId !== undefined,
  );
}

async function send(o: Operation, body: unknown, query: Record<string, unknown>, text?: string) {
  // Deleting a file or folder takes a fresh one: the fixtures stay for the requests after it.
  const fresh =
    o.method === "DELETE" && /\/(files|folders)\/\{id\}$/.test(o.path)
      ? o.path.includes("/files/")
        ? (await mkfile(alice, { name: `gone-${Math.random()}.md` })).id
        : (await mkdir(alice, { name: `gone-${Math.random()}` })).id
      : undefined;
  const path = o.path.replace(/\{(\w+)\}/g, (_, name: string) =>
    encodeURIComponent(fresh ?? paramValue(o.path, name)),
  );
  const qs = Object.entries(query)
    .filter(([, v]) => v !== undefined)
    .map(
      ([k, v]) =>
        `${encodeURIComponent(k)}=${encodeURIComponent(typeof v === "string" ? v : JSON.stringify(v))}`,
    )
    .join("&");
  const url = `${path}${qs ? `?${qs}` : ""}`;
  if (text !== undefined)
    return alice.api.request(o.method, url, { body: text, headers: { "content-type": "text/plain" } });
  return alice.api.request(o.method, url, body === undefined ? {} : { json: body });
}

const queryOf = (o: Operation, pick: (p: Json) => unknown) =>
  Object.fromEntries(
    (o.op.parameters ?? []).filter((p: Json) => p.in === "query").map((p: Json) => [p.name, pick(p)]),
  );

const jsonBody = (o: Operation) => o.op.requestBody?.content?.["application/json"];

describe(`the document's valid requests are accepted (${store})`, () => {
  it("every operation's example is neither refused as invalid nor a 5xx", async () => {
    const ops = operations();
    expect(ops.length).toBeGreaterThan(100);
    const refused: string[] = [];
    for (const o of ops) {
      const body = jsonBody(o);
      const text = o.op.requestBody?.content?.["text/plain"];
      if (o.op.requestBody?.required && !body && !text) continue; // media (transcription): not JSON
      const query = queryOf(o, (p) => (p.required ? p.example : p.name === "wait" ? 0 : undefined));
      const res = await send(o, body?.example, query, text?.example);
      if (res.status === 400 || res.status >= 500)
        refused.push(`${o.method} ${o.path} -> ${res.status} ${res.text.slice(0, 200)}`);
    }
    expect(refused, refused.join("\n")).toEqual([]);
  }, 120_000);

  it(`${RUNS} generated valid requests: none refused as invalid, none a 5xx`, async () => {
    const ops = operations().filter(
      (o) =>
        // (a text upload or a media body is not generated from a JSON schema)
        (!o.op.requestBody || jsonBody(o)) &&
        (jsonBody(o) || (o.op.parameters ?? []).some((p: Json) => p.in === "query")),
    );
    const statuses = new Map<number, number>();
    let previous = "";
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ops).chain((o) =>
          fc.record({
            o: fc.constant(o),
            body: jsonBody(o) ? valid(jsonBody(o).schema) : fc.constant(undefined),
            query: fc.record(
              queryOf(o, (p) =>
                // One of each mutually exclusive group at most; no long-poll waits.
                p.name === "wait"
                  ? fc.constant(0)
                  : (o.op["x-mutually-exclusive-query"] ?? []).slice(1).includes(p.name)
                    ? fc.constant(undefined)
                    : valid(p.schema),
              ) as Record<string, fc.Arbitrary<unknown>>,
              {
                requiredKeys: (o.op.parameters ?? [])
                  .filter((p: Json) => p.in === "query" && p.required)
                  .map((p: Json) => p.name),
              },
            ),
          }),
        ),
        async ({ o, body, query }) => {
          const what = `${o.method} ${o.path} ${JSON.stringify(query)} ${JSON.stringify(body)?.slice(0, 400)}`;
          const res = await send(o, body, query).catch((err: Error) => {
            throw new Error(
              `${what}: ${err.message} (${(err.cause as Error | undefined)?.message}); the request before: ${previous}`,
            );
          });
          previous = `${what} -> ${res.status}`;
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          expect(res.status, `${what} -> ${res.text.slice(0, 400)}`).not.toBe(400);
          expect(res.status, `${what} -> ${res.text.slice(0, 400)}`).toBeLessThan(500);
        },
      ),
      { numRuns: RUNS, endOnFailure: true },
    );
    console.log(
      `document-driven suite [${store}]: ${RUNS} valid requests over ${ops.length} operations; by status ${JSON.stringify(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))}`,
    );
  }, 600_000);

  it("links: a generated create is read, written with its ETag and deleted through the document's paths", async () => {
    const create = doc.paths["/api/v1/files"].post;
    const links = { read: doc.paths["/api/v1/files/{id}"].get, write: doc.paths["/api/v1/files/{id}"].put };
    expect(links.read && links.write).toBeTruthy();
    await fc.assert(
      fc.asyncProperty(
        valid(create.requestBody.content["application/json"].schema),
        valid(links.write.requestBody.content["application/json"].schema),
        async (input, patch) => {
          const made = await alice.api.post("/api/v1/files", input);
          // A name already taken in that folder (409), a folderId that names no folder (404): documented.
          if (made.status === 409 || made.status === 404) return;
          expect(made.status, `${JSON.stringify(input)} -> ${made.text}`).toBe(201);
          const id = made.body.file.id as string;
          const read = await alice.api.get(`/api/v1/files/${id}`);
          expect(read.status).toBe(200);
          expect(read.body.content).toBe((input as Json).content ?? "");
          const etag = read.headers.get("etag")!;
          const wrote = await alice.api.put(`/api/v1/files/${id}`, patch, { "if-match": etag });
          // A folderId that names no folder is a 404, a name taken a 409: both documented, neither a 400.
          expect([200, 404, 409], `${JSON.stringify(patch)} -> ${wrote.text}`).toContain(wrote.status);
          const gone = await alice.api.delete(`/api/v1/files/${id}`);
          expect(gone.status, gone.text).toBe(200);
          expect((await alice.api.get(`/api/v1/files/${id}`)).status).toBe(404);
        },
      ),
      { numRuns: Math.min(RUNS, 60) },
    );
  }, 300_000);
});

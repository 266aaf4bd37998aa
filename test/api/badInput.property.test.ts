// The bad-input suite, property-based: for every route the service registers, fast-check derives
// requests from the route's own schemas (path, query, body; batch and sync operations from their
// per-operation schemas), then breaks each one — a NUL, a lone surrogate, invalid UTF-8, a number
// past the stores' range, a wrong type, an unknown or missing field, an over-long string, a path
// traversal, a foreign or garbage id, a bad header. It runs against both stores (the `sqlite` and
// `postgres` projects). Properties, per request:
//   - never a 5xx;
//   - every error is the spec's body {error: {code, message, resolution, requestId}}, requestId
//     equal to X-Request-ID;
//   - a refused request changes nothing: the account's fingerprint is the same before and after.
// TXTFS_FUZZ_RUNS sets the number of generated requests (default 1500 per store).
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RouteEntry } from "../../src/server/app.ts";
import { OP_BODIES } from "../../src/server/routes/batchSchemas.ts";
import { accountFingerprint } from "../helpers/fingerprint.ts";
import {
  mkdir,
  mkfile,
  type Res,
  startTestServer,
  type TestServer,
  type TestUser,
} from "../helpers/server.ts";
import { testPgUrl } from "../helpers/storeUnderTest.ts";

const RUNS = Number(process.env.TXTFS_FUZZ_RUNS ?? 1500);
const store = testPgUrl() ? "postgres" : "sqlite";

type Schema = {
  type?: string | string[];
  const?: unknown;
  anyOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
};

// ---- values that must be refused (or kept exactly) wherever they appear ----

const NASTY_STRINGS = [
  "a\u0000b",
  "\u0000",
  "sur\ud800rogate.md",
  "\udc00",
  "x\ud83c",
  "",
  " ",
  "x".repeat(5000),
  "é".repeat(200),
  "../../etc/passwd",
  "/etc/x.md",
  "a//b.md",
  "trail/",
  ".",
  "..",
  "a/b",
  "\u202enote.md",
  "\u0007bell\u001b[31m",
  "<script>alert(1)</script>",
  "'; DROP TABLE files; --",
  "%00",
  "💥🌍",
  "f_nope",
  "d_nope",
];
const NASTY_NUMBERS = [1e308, -1e308, 2 ** 53, -(2 ** 53), 1e20, -1, 0, 1.5, -0.5, 2 ** 31, 2 ** 32];

const nastyString = fc.oneof(
  fc.constantFrom(...NASTY_STRINGS),
  // any code points, lone surrogates and control characters included
  fc.string({ unit: "binary", maxLength: 40 }),
);
const nastyValue: fc.Arbitrary<unknown> = fc.oneof(
  nastyString,
  fc.constantFrom(...NASTY_NUMBERS),
  fc.constantFrom(null, true, false, [], {}, [null], [[]], { a: { b: { c: [1] } } }),
  fc.array(nastyString, { minLength: 17, maxLength: 20 }), // more tags than allowed
);

// ---- values of a schema's shape (mostly valid), from the route's own JSON Schema ----

function ofSchema(schema: Schema | undefined, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 5) return fc.jsonValue({ maxDepth: 1 });
  if ("const" in schema) return fc.constant(schema.const);
  if (schema.anyOf) return fc.oneof(...schema.anyOf.map((s) => ofSchema(s, depth + 1)));
  switch (schema.type) {
    case "string":
      return fc.string({
        minLength: schema.minLength ?? 0,
        maxLength: Math.min(schema.maxLength ?? 12, 12),
        unit: "grapheme-ascii",
      });
    case "integer":
      return fc.integer({ min: schema.minimum ?? 0, max: Math.min(schema.maximum ?? 1000, 1000) });
    case "number":
      return fc.double({ noNaN: true, noDefaultInfinity: true });
    case "boolean":
      return fc.boolean();
    case "null":
      return fc.constant(null);
    case "array":
      return fc.array(ofSchema(schema.items, depth + 1), { maxLength: 3 });
    case "object": {
      const props = schema.properties ?? {};
      // Operations of batch and sync: the body follows the schema of the chosen op.
      if (props.op?.anyOf && props.body) {
        return fc.constantFrom(...Object.keys(OP_BODIES)).chain((op) =>
          fc
            .record(
              Object.fromEntries(
                Object.entries(props)
                  .filter(([k]) => k !== "op" && k !== "body")
                  .map(([k, s]) => [k, ofSchema(s, depth + 1)]),
              ),
              { requiredKeys: (schema.required ?? []).filter((k) => k !== "op" && k !== "body") },
            )
            .chain((rest) =>
              ofSchema(OP_BODIES[op as keyof typeof OP_BODIES] as Schema, depth + 1).map((body) => ({
                ...rest,
                op,
                body,
              })),
            ),
        );
      }
      return fc.record(
        Object.fromEntries(Object.entries(props).map(([k, s]) => [k, ofSchema(s, depth + 1)])),
        {
          requiredKeys: schema.required ?? [],
        },
      );
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** Every place in a JSON value, as a path of keys (the root is []). */
function placesOf(value: unknown, path: (string | number)[] = []): (string | number)[][] {
  const out = [path];
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) out.push(...placesOf(v, [...path, i]));
  } else if (value && typeof value === "object")
    for (const [k, v] of Object.entries(value)) out.push(...placesOf(v, [...path, k]));
  return out;
}

function setAt(value: unknown, path: (string | number)[], replacement: unknown): unknown {
  if (path.length === 0) return replacement;
  const [head, ...rest] = path;
  if (Array.isArray(value)) return value.map((v, i) => (i === head ? setAt(v, rest, replacement) : v));
  const obj = value as Record<string, unknown>;
  return { ...obj, [head as string]: setAt(obj[head as string], rest, replacement) };
}

type Mutation =
  | { kind: "replace"; at: number; with: unknown }
  | { kind: "unknownKey"; at: number; key: string; with: unknown }
  | { kind: "dropKey"; at: number };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({ kind: fc.constant("replace" as const), at: fc.nat(), with: nastyValue }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("unknownKey" as const),
      at: fc.nat(),
      key: fc.oneof(nastyString, fc.constantFrom("fileID", "conten", "__proto__", "constructor")),
      with: nastyValue,
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("dropKey" as const), at: fc.nat() }) },
);

function applyMutation(value: unknown, m: Mutation): unknown {
  const places = placesOf(value);
  const path = places[m.at % places.length]!;
  if (m.kind === "replace") return setAt(value, path, m.with);
  const objects = places.filter((p) => {
    let v: unknown = value;
    for (const k of p) v = (v as Record<string | number, unknown>)[k];
    return v !== null && typeof v === "object" && !Array.isArray(v);
  });
  if (objects.length === 0) return setAt(value, path, m.kind === "unknownKey" ? m.with : undefined);
  const target = objects[m.at % objects.length]!;
  let obj: Record<string, unknown> = value as Record<string, unknown>;
  for (const k of target) obj = obj[k as string] as Record<string, unknown>;
  if (m.kind === "unknownKey") return setAt(value, target, { ...obj, [m.key]: m.with });
  const keys = Object.keys(obj);
  if (keys.length === 0) return setAt(value, target, { x: 1 });
  const { [keys[m.at % keys.length]!]: _dropped, ...rest } = obj;
  return setAt(value, target, rest);
}

// ---- encoding a request, including what JSON.stringify and encodeURIComponent cannot carry ----

/** Percent-encodes text as UTF-8; a lone surrogate becomes the raw bytes of its (invalid) UTF-8 form. */
function pct(text: string): string {
  let out = "";
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    if (cp >= 0xd800 && cp <= 0xdfff) {
      out += `%${(0xe0 | (cp >> 12)).toString(16)}%${(0x80 | ((cp >> 6) & 0x3f)).toString(16)}%${(0x80 | (cp & 0x3f)).toString(16)}`;
    } else out += encodeURIComponent(ch);
  }
  return out;
}

/** JSON text that keeps lone surrogates as `\ud800` escapes (JSON.stringify already does). */
const jsonText = (value: unknown) => JSON.stringify(value) ?? "null";

type BodyForm = "json" | "invalid-utf8" | "proto" | "not-json" | "text";

interface Generated {
  route: RouteEntry;
  params: Record<string, string>;
  query: Record<string, unknown>;
  rawQuery: string;
  body: unknown;
  bodyForm: BodyForm;
  headers: Record<string, string>;
}

// ---- the account under test ----

let t: TestServer;
let alice: TestUser;
let bob: TestUser;
const pool: Record<string, string[]> = {};

async function ok(res: Res, what: string) {
  if (res.status >= 300) throw new Error(`${what}: ${res.status} ${res.text}`);
  return res.body;
}

beforeAll(async () => {
  t = await startTestServer();
  alice = await t.user();
  bob = await t.user();
  const folder = await mkdir(alice, { name: "dir", tags: ["t"] });
  const file = await mkfile(alice, { name: "note.md", content: "Hello 🌍 world", folderId: folder.id });
  const other = await mkfile(alice, { name: "other.txt", content: "x" });
  const bobs = await mkfile(bob, { name: "bobs.md", content: "not alice's" });
  const comment = (
    await ok(await alice.api.post(`/api/v1/files/${file.id}/comments`, { body: "c" }), "comment")
  ).comment;
  const suggestion = (
    await ok(
      await alice.api.post(`/api/v1/files/${file.id}/suggestions`, {
        selection_start: 0,
        selection_end: 5,
        suggested_text: "Hi",
      }),
      "suggestion",
    )
  ).suggestion;
  const share = (
    await ok(
      await alice.api.post("/api/v1/shares", { fileId: other.id, email: bob.email, role: "reader" }),
      "share",
    )
  ).share;
  const device = (
    await ok(await alice.api.post("/api/v1/devices", { name: "laptop", platform: "linux" }), "device")
  ).device;
  const temp = (await ok(await alice.api.post(`/api/v1/files/${file.id}/share`, {}), "temp url")).tempUrl;
  pool.file = [file.id, other.id, bobs.id];
  pool.folder = [folder.id, "root"];
  pool.comment = [comment.id];
  pool.suggestion = [suggestion.id];
  pool.share = [share.id];
  pool.device = [device.id];
  pool.tempUrl = [temp.id];
  pool.token = [temp.token];
  pool.version = ["1", "2"];
  pool.etag = [file.etag, '"1-0000000000"', "*", 'W/"x"'];
});
afterAll(() => t.close());

/** The fixture ids that fit a path parameter, from the parameter's name and the path around it. */
function fixturesFor(url: string, name: string): string[] {
  if (name === "version") return pool.version!;
  if (name === "token") return pool.token!;
  if (name === "tempUrlId") return pool.tempUrl!;
  if (name === "itemId") return url.includes("/suggestions") ? pool.suggestion! : pool.comment!;
  for (const [segment, kind] of [
    ["/folders/", "folder"],
    ["/shares/", "share"],
    ["/devices/", "device"],
    ["/files/", "file"],
  ] as const)
    if (url.includes(segment)) return pool[kind]!;
  return ["x"];
}

function requestFor(route: RouteEntry): fc.Arbitrary<Generated> {
  const schema = route.schema ?? {};
  const paramNames = [...route.url.matchAll(/:(\w+)/g)].map((m) => m[1]!);
  const params = fc.record(
    Object.fromEntries(
      paramNames.map((name) => [
        name,
        fc.oneof(
          { weight: 3, arbitrary: fc.constantFrom(...fixturesFor(route.url, name)) },
          { weight: 1, arbitrary: nastyString.filter((s) => s.length > 0) },
          { weight: 1, arbitrary: fc.constantFrom("%ff%fe", "%00", "a".repeat(10_000), "%2e%2e") },
        ),
      ]),
    ),
  );
  const query = ofSchema(schema.querystring as Schema).map((q) =>
    q && typeof q === "object" ? (q as Record<string, unknown>) : {},
  );
  const body = schema.body ? ofSchema(schema.body as Schema) : fc.constant(undefined);
  const headers = fc.record(
    {
      "if-match": fc.oneof(
        fc.constantFrom(...pool.etag!),
        fc.string({ unit: "grapheme-ascii", maxLength: 20 }),
      ),
      "idempotency-key": fc.oneof(
        fc.string({ unit: "grapheme-ascii", maxLength: 8 }),
        fc.constant("k".repeat(300)),
      ),
      "x-request-id": fc.constantFrom("<script>", "ok-1", "x".repeat(200)),
      accept: fc.constantFrom("text/markdown", "*/*", "application/json", "image/png"),
    },
    { requiredKeys: [] },
  );
  return fc
    .record({
      params,
      query,
      body,
      headers,
      // what to break: the body (most), the query, or the encoding of the body
      breakWhat: fc.constantFrom("body", "body", "body", "query", "none"),
      mutation,
      bodyForm: fc.constantFrom<BodyForm>(
        "json",
        "json",
        "json",
        "json",
        "json",
        "json",
        "invalid-utf8",
        "proto",
        "not-json",
        "text",
      ),
      rawQueryExtra: fc.constantFrom(
        "",
        "",
        "",
        "&limit=99999999999999999999",
        "&cursor=%00",
        "&x=%ff",
        "&before=1e308",
      ),
    })
    .map((g) => {
      const brokenBody =
        g.breakWhat === "body" && g.body !== undefined ? applyMutation(g.body, g.mutation) : g.body;
      const brokenQuery =
        g.breakWhat === "query" || (g.breakWhat === "body" && g.body === undefined)
          ? (applyMutation(g.query, g.mutation) as Record<string, unknown>)
          : g.query;
      const q =
        brokenQuery && typeof brokenQuery === "object" && !Array.isArray(brokenQuery)
          ? brokenQuery
          : { q: brokenQuery };
      const rawQuery = Object.entries(q)
        .map(([k, v]) => `${pct(k)}=${pct(typeof v === "string" ? v : jsonText(v))}`)
        .join("&");
      return {
        route,
        params: g.params,
        query: q,
        rawQuery: rawQuery + g.rawQueryExtra,
        body: brokenBody,
        bodyForm: route.method === "GET" || route.method === "DELETE" ? "json" : g.bodyForm,
        headers: g.headers,
      };
    });
}

function encodeBody(g: Generated): { body?: Uint8Array | string; type?: string } {
  if (g.route.method === "GET" || g.route.method === "DELETE") return {};
  const text = g.body === undefined ? "" : jsonText(g.body);
  switch (g.bodyForm) {
    case "invalid-utf8":
      return {
        body: Buffer.concat([
          Buffer.from(text.slice(0, Math.max(1, text.length - 2))),
          Buffer.from([0xff, 0xc3]),
          Buffer.from(text.slice(-2)),
        ]),
        type: "application/json",
      };
    case "proto":
      return { body: '{"__proto__":{"polluted":true},"name":"p.md"}', type: "application/json" };
    case "not-json":
      return { body: `${text.slice(0, -1)},,`, type: "application/json" };
    case "text":
      return { body: typeof g.body === "string" ? g.body : text, type: "text/plain" };
    default:
      return g.body === undefined ? {} : { body: text, type: "application/json" };
  }
}

async function send(g: Generated): Promise<Res & { url: string }> {
  const path = g.route.url.replace(/:(\w+)/g, (_, name: string) => {
    const v = g.params[name]!;
    return /%[0-9a-f]{2}/i.test(v) && !v.includes("%25") ? v : pct(v);
  });
  const url = `${path}${g.rawQuery ? `?${g.rawQuery}` : ""}`;
  const { body, type } = encodeBody(g);
  const headers: Record<string, string> = { ...g.headers, authorization: `Bearer ${alice.key}` };
  if (type) headers["content-type"] = type;
  const res = await fetch(t.url + url, {
    method: g.route.method,
    headers,
    body: body as string | Uint8Array<ArrayBuffer> | undefined,
  });
  const text = await res.text();
  let parsed: unknown = text;
  if ((res.headers.get("content-type") ?? "").includes("json") && text) parsed = JSON.parse(text);
  return { status: res.status, headers: res.headers, body: parsed, text, url };
}

/** Routes a generated request is sent to: the API, the temporary links and the key page. */
function routesUnderTest(): RouteEntry[] {
  return t.server.routeTable.filter(
    (r) => r.url.startsWith("/api") || r.url.startsWith("/t/") || r.url.startsWith("/keys"),
  );
}

describe(`bad input against every request schema (${store})`, () => {
  it(`${RUNS} generated requests: no 5xx, every error in the spec's body, refusals change nothing`, async () => {
    const routes = routesUnderTest();
    expect(routes.length).toBeGreaterThan(60);
    const stats = {
      requests: 0,
      refused: 0,
      accepted: 0,
      byStatus: new Map<number, number>(),
      routesHit: new Set<string>(),
    };
    let fingerprint = await accountFingerprint(alice.api);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...routes).chain((route) => requestFor(route)),
        async (g) => {
          const res = await send(g);
          stats.requests++;
          stats.routesHit.add(`${g.route.method} ${g.route.url}`);
          stats.byStatus.set(res.status, (stats.byStatus.get(res.status) ?? 0) + 1);
          const where = `${g.route.method} ${res.url.slice(0, 300)} ${g.bodyForm} ${jsonText(g.body).slice(0, 300)}`;
          expect(res.status, `${where} -> ${res.text.slice(0, 500)}`).toBeLessThan(500);
          if (res.status >= 400) {
            stats.refused++;
            const e = (res.body as { error?: Record<string, unknown> })?.error;
            expect(e, `${where} -> ${res.text.slice(0, 300)}`).toBeTruthy();
            for (const field of ["code", "message", "resolution", "requestId"])
              expect(
                typeof e![field] === "string" && (e![field] as string).length > 0,
                `${field} in ${res.text}`,
              ).toBe(true);
            expect(e!.requestId).toBe(res.headers.get("x-request-id"));
            if (g.route.method !== "GET")
              expect(await accountFingerprint(alice.api), `${where} changed the account`).toBe(fingerprint);
          } else if (g.route.method !== "GET") {
            stats.accepted++;
            fingerprint = await accountFingerprint(alice.api);
          }
        },
      ),
      { numRuns: RUNS, endOnFailure: true },
    );
    // One summary line per store, for the report.
    console.log(
      `bad-input suite [${store}]: ${stats.requests} generated requests over ${stats.routesHit.size} of ${routes.length} routes; ` +
        `${stats.refused} refused, ${stats.accepted} mutations accepted, 0 5xx; by status ${JSON.stringify(Object.fromEntries([...stats.byStatus].sort((a, b) => a[0] - b[0])))}`,
    );
    expect(stats.requests).toBe(RUNS);
  }, 600_000);
});

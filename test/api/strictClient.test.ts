// What a strict HTTP client expects of every answer: a method a path does not take is 405 with
// `Allow` (not a 404, not a file named `import`); OPTIONS is answered with or without CORS headers;
// every response — probes, preflights, 404s, 405s, MCP's — carries API-Version, X-Request-ID and the
// RateLimit-* trio; MCP's transport failures are the spec's error body. Both stores.
import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSession } from "../../src/server/http/session.ts";
import { accountFingerprint } from "../helpers/fingerprint.ts";
import {
  expectError,
  mkfile,
  type Res,
  startTestServer,
  type TestServer,
  type TestUser,
} from "../helpers/server.ts";

let t: TestServer;
let alice: TestUser;
let fileId: string;

beforeAll(async () => {
  t = await startTestServer();
  alice = await t.user();
  fileId = (await mkfile(alice, { name: "strict.md", content: "unchanged" })).id;
});
afterAll(() => t.close());

/** node:http, since fetch refuses some methods (TRACE) outright. */
function raw(method: string, path: string, headers: Record<string, string> = {}, body = ""): Promise<Res> {
  return new Promise((resolve, reject) => {
    const length = { "content-length": String(Buffer.byteLength(body)) };
    const req = httpRequest(`${t.url}${path}`, { method, headers: { ...headers, ...length } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        const h = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (typeof v === "string") h.set(k, v);
        const json = (res.headers["content-type"] ?? "").includes("json") && text;
        resolve({ status: res.statusCode!, headers: h, body: json ? JSON.parse(text) : text, text });
      });
    });
    req.on("error", reject);
    req.end(body);
  });
}

const SPEC_HEADERS = [
  "api-version",
  "x-request-id",
  "ratelimit-limit",
  "ratelimit-remaining",
  "ratelimit-reset",
];

function expectSpecHeaders(res: Res, what: string) {
  for (const name of SPEC_HEADERS) expect(res.headers.get(name), `${what}: ${name}`).toMatch(/\S/);
  expect(res.headers.get("api-version"), what).toBe("v1");
  for (const name of ["ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"])
    expect(res.headers.get(name), `${what}: ${name}`).toMatch(/^\d+$/);
}

describe("405 Method Not Allowed with Allow", () => {
  it("a method the path does not take is 405 with Allow, before authentication; nothing changes", async () => {
    const before = await accountFingerprint(alice.api);
    const cases: [string, string, string][] = [
      ["TRACE", "/api/v1/files", "GET, HEAD, POST, OPTIONS"],
      ["QUERY", "/api/v1/files", "GET, HEAD, POST, OPTIONS"],
      ["PATCH", "/api/v1/files", "GET, HEAD, POST, OPTIONS"],
      ["PUT", "/api/v1/files/import", "POST, OPTIONS"],
      ["DELETE", "/api/v1/files/import", "POST, OPTIONS"],
      ["PUT", "/api/v1/files/upload", "POST, OPTIONS"],
      ["DELETE", "/api/v1/files/upload", "POST, OPTIONS"],
      ["GET", "/api/v1/files/upload", "POST, OPTIONS"],
      ["POST", `/api/v1/files/${fileId}`, "GET, HEAD, PUT, DELETE, OPTIONS"],
    ];
    for (const [method, path, allow] of cases) {
      for (const auth of [{ authorization: `Bearer ${alice.key}` }, {}] as Record<string, string>[]) {
        // Node's HTTP parser refuses a TRACE with a body (RFC 9110: it has none) before any route.
        const body = method === "TRACE" ? "" : "{}";
        const res = await raw(method, path, { "content-type": "application/json", ...auth }, body);
        expectError(res, 405, "method_not_allowed");
        expect(res.headers.get("allow"), `${method} ${path}`).toBe(allow);
        expectSpecHeaders(res, `${method} ${path}`);
      }
    }
    expect(await accountFingerprint(alice.api)).toBe(before);
    // The file a parametric route would have taken `import` for is untouched, and real ids still route.
    expect((await alice.api.get(`/api/v1/files/${fileId}/raw`)).text).toBe("unchanged");
  });

  it("an unknown path is still 404 route_not_found (not a 405)", async () => {
    const res = await raw("TRACE", "/api/v1/nothing-here");
    expectError(res, 404, "route_not_found");
    expectSpecHeaders(res, "404");
  });
});

describe("OPTIONS", () => {
  it("without Origin: 204 with Allow and the spec's headers (not 400 text/plain)", async () => {
    const res = await t.client().request("OPTIONS", "/api/v1/files");
    expect(res.status).toBe(204);
    expect(res.headers.get("allow")).toBe("GET, HEAD, POST, OPTIONS");
    expectSpecHeaders(res, "OPTIONS");
  });

  it("a browser preflight: 204 with CORS headers, Allow and the spec's headers", async () => {
    const res = await t.client().request("OPTIONS", `/api/v1/files/${fileId}`, {
      headers: { origin: "https://app.example", "access-control-request-method": "PUT" },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.headers.get("access-control-allow-methods")).toContain("PUT");
    expect(res.headers.get("allow")).toBe("GET, HEAD, PUT, DELETE, OPTIONS");
    expectSpecHeaders(res, "preflight");
  });

  it("OPTIONS of an unknown path is 404 in the error body", async () => {
    const res = await t.client().request("OPTIONS", "/nowhere");
    expectError(res, 404, "route_not_found");
    expectSpecHeaders(res, "OPTIONS 404");
  });
});

describe("the spec's headers on every response", () => {
  it("probes and metrics report the caller's window without spending from it", async () => {
    for (const path of ["/healthz", "/readyz", "/metrics"]) {
      const first = await t.client().get(path);
      const second = await t.client().get(path);
      expect(first.status, path).toBe(200);
      expectSpecHeaders(first, path);
      expect(second.headers.get("ratelimit-remaining"), path).toBe(first.headers.get("ratelimit-remaining"));
    }
  });
});

const MCP_ACCEPT = "application/json, text/event-stream";
const rpc = (method: string, params: Record<string, unknown> = {}) =>
  JSON.stringify({ jsonrpc: "2.0", id: 1, method, params });

describe("/mcp answers in the error body when the transport refuses", () => {
  const post = (body: string, headers: Record<string, string>) =>
    alice.api.request("POST", "/mcp", { body, headers });

  it("406 without the Accept an MCP client sends", async () => {
    const res = await post(rpc("tools/list"), {
      "content-type": "application/json",
      accept: "application/json",
    });
    expectError(res, 406, "not_acceptable");
    expectSpecHeaders(res, "406");
  });

  it("415 for a body that is not JSON", async () => {
    const res = await post(rpc("tools/list"), { "content-type": "text/plain", accept: MCP_ACCEPT });
    expectError(res, 415, "unsupported_media_type");
    expectSpecHeaders(res, "415");
  });

  it("400 for JSON that is not JSON-RPC, or broken JSON, or an unsupported protocol version", async () => {
    const cases: [string, Record<string, string>, string][] = [
      ['{"hello":"world"}', {}, "invalid_mcp_request"],
      ["[]", {}, "invalid_mcp_request"],
      ["{not json", {}, "invalid_json"],
      [rpc("tools/list"), { "mcp-protocol-version": "1999-01-01" }, "invalid_mcp_request"],
    ];
    for (const [body, extra, code] of cases) {
      const res = await post(body, { "content-type": "application/json", accept: MCP_ACCEPT, ...extra });
      expectError(res, 400, code);
      expectSpecHeaders(res, `400 ${body}`);
    }
  });

  it("a good request is answered by the MCP server, with the spec's headers, and is metered", async () => {
    const headers = { "content-type": "application/json", accept: MCP_ACCEPT };
    const first = await post(rpc("tools/list"), headers);
    expect(first.status, first.text).toBe(200);
    expect(first.body.result.tools.length).toBeGreaterThan(5);
    expectSpecHeaders(first, "MCP 200");
    const second = await post(rpc("tools/list"), headers);
    expect(Number(second.headers.get("ratelimit-remaining"))).toBeLessThan(
      Number(first.headers.get("ratelimit-remaining")),
    );
    // A JSON-RPC error (an unknown method) stays a JSON-RPC error: the transport worked.
    const unknown = await post(rpc("no/such/method"), headers);
    expect(unknown.status).toBe(200);
    expect(unknown.body.error.code).toBe(-32601);
  });
});

describe("authentication before validation, media type before schema", () => {
  it("cookie-only routes: no session is 401 whatever the body; a session without CSRF is 403 before 400", async () => {
    const anonymous = t.client();
    const noSession: [string, string, unknown][] = [
      ["PATCH", "/api/me/keys/x1", {}],
      ["POST", "/api/me/keys", { label: 5, scopes: "nope", extra: true }],
      ["DELETE", "/api/me/keys/x1", undefined],
      ["PUT", "/api/me/vault/openai", { nonsense: [] }],
      ["GET", "/api/me/keys", undefined],
    ];
    for (const [method, path, json] of noSession) {
      const res = await anonymous.request(method, path, json === undefined ? {} : { json });
      expectError(res, 401, "session_required");
      expectSpecHeaders(res, `${method} ${path}`);
    }
    const cookie = await t.server.store.transaction((tx) => createSession(tx, alice.id, null));
    const res = await anonymous.request("PATCH", "/api/me/keys/x1", {
      json: {},
      headers: { cookie: `session=${cookie}` },
    });
    expectError(res, 403, "csrf_failed");
  });

  it("a text/plain body to a JSON route is 415, not a schema error; upload still takes text", async () => {
    const before = await accountFingerprint(alice.api);
    for (const type of ["text/plain", "text/markdown; charset=utf-8"]) {
      const res = await alice.api.request("POST", "/api/v1/files", {
        body: '{"name":"x.md"}',
        headers: { "content-type": type },
      });
      expectError(res, 415, "unsupported_media_type");
    }
    const put = await alice.api.request("PUT", `/api/v1/files/${fileId}`, {
      body: "new text",
      headers: { "content-type": "text/plain" },
    });
    expectError(put, 415, "unsupported_media_type");
    expect(await accountFingerprint(alice.api)).toBe(before);
    const upload = await alice.api.request("POST", "/api/v1/files/upload?name=up.md", {
      body: "# uploaded",
      headers: { "content-type": "text/markdown" },
    });
    expect(upload.status, upload.text).toBe(201);
  });
});

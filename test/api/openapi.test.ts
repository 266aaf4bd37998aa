// The OpenAPI document: valid OpenAPI 3.1, complete (every route the server answers is in it with
// its responses), named after the spec, and served and linked. Response checking against it runs
// on every API test (test/helpers/contract.ts).
import { Validator } from "@seriousme/openapi-schema-validator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ContractChecker } from "../helpers/contract.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let t: TestServer;
let doc: any;

beforeAll(async () => {
  t = await startTestServer();
  const res = await t.client().get("/openapi.json");
  expect(res.status).toBe(200);
  doc = res.body;
});
afterAll(() => t.close());

const operations = () =>
  Object.entries<Record<string, any>>(doc.paths).flatMap(([path, item]) =>
    Object.entries<any>(item)
      .filter(([m]) => ["get", "put", "post", "delete", "patch"].includes(m))
      .map(([method, op]) => ({ key: `${method.toUpperCase()} ${path}`, op })),
  );

describe("GET /openapi.json", () => {
  it("is a valid OpenAPI 3.1 document", async () => {
    expect(doc.openapi).toBe("3.1.0");
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it("the validator used above rejects a broken document (the check can fail)", async () => {
    const broken = structuredClone(doc);
    broken.paths["/api/v1/files"].get.responses = "none";
    expect((await new Validator().validate(broken)).valid).toBe(false);
  });

  it("documents every route the server answers (100%), each with a success response", () => {
    const served = t.server.routes().map((r) => r.replace(/:(\w+)/g, "{$1}"));
    const documented = new Set(operations().map((o) => o.key));
    const missing = served.filter((r) => !documented.has(r));
    expect(missing).toEqual([]);
    expect(documented.size).toBe(new Set(served).size);
    // The stateless MCP endpoint answers only 405 to GET and DELETE (MCP Streamable HTTP).
    const only405 = new Set(["GET /mcp", "DELETE /mcp"]);
    for (const { key, op } of operations()) {
      expect(op["x-undocumented"], key).toBeUndefined();
      const ok = Object.keys(op.responses).filter(
        (s) => /^[23]\d\d$/.test(s) || (only405.has(key) && s === "405"),
      );
      expect(ok.length, key).toBeGreaterThan(0);
      expect(op.responses["429"], key).toBeDefined();
    }
  });

  it("names operations after the spec and keeps operationIds unique", () => {
    const ids = operations().map((o) => o.op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    const byKey = Object.fromEntries(operations().map((o) => [o.key, o.op.operationId]));
    expect(byKey).toMatchObject({
      "GET /api/me": "listFiles",
      "GET /api/me/files": "listFlatFiles",
      "POST /api/me/files": "createFile",
      "GET /api/me/files/{id}": "getFile",
      "PUT /api/me/files/{id}": "updateFile",
      "GET /api/me/files/{id}/raw": "getFileRaw",
      "GET /api/me/files/{id}/plan": "getFilePlanMetadata",
      "PUT /api/me/files/{id}/plan": "updateFilePlanMetadata",
      "GET /api/me/files/{id}/connections": "getFileConnections",
      "POST /api/me/files/{id}/connections": "connectFiles",
      "DELETE /api/me/files/{id}/connections": "disconnectFiles",
      "GET /api/identity/realtime": "discoverIdentityRealtime",
      "GET /api/me/folders": "listFolders",
      "POST /api/me/folders": "createFolder",
      "GET /api/me/folders/{id}": "getFolder",
      "PUT /api/me/folders/{id}": "updateFolder",
      "DELETE /api/me/folders/{id}": "deleteFolder",
      "GET /api/v1": "discover",
      "GET /api/v1/files": "list",
      "GET /api/v1/files/{id}": "read",
      "PUT /api/v1/files/{id}": "write",
      "POST /api/v1/files": "create",
      "POST /api/v1/files/{id}/share": "tempUrl",
      "POST /api/v1/folders/{id}/share": "folderShare",
      "PUT /api/v1/devices/{id}/state": "pin",
      "POST /api/v1/webhooks": "events",
    });
    expect(doc.paths["/api/v1/folders/{id}/share"].post["x-verb"]).toBe("folder share");
  });

  it("documents 304, the error body, conditional and idempotency headers", () => {
    const read = doc.paths["/api/v1/files/{id}"].get;
    expect(read.responses["304"].content).toBeUndefined();
    expect(read.responses["304"].headers.ETag).toBeDefined();
    expect(read.parameters.map((p: { name: string }) => p.name)).toContain("If-None-Match");
    const write = doc.paths["/api/v1/files/{id}"].put;
    const headers = write.parameters.filter((p: { in: string }) => p.in === "header").map((p: any) => p.name);
    expect(headers).toEqual(expect.arrayContaining(["If-Match", "Idempotency-Key"]));
    expect(write.responses["412"].content["application/json"].schema.$ref).toBe("#/components/schemas/Error");
    const error = doc.components.schemas.Error;
    expect(error.properties.error.required).toEqual(["code", "message", "resolution", "requestId"]);
    for (const h of [
      "API-Version",
      "X-Request-ID",
      "RateLimit-Limit",
      "RateLimit-Remaining",
      "RateLimit-Reset",
    ]) {
      expect(read.responses["200"].headers[h], h).toBeDefined();
    }
    const raw = doc.paths["/api/v1/files/{id}/raw"].get.responses["200"].content;
    expect(Object.keys(raw).sort()).toEqual(["text/markdown", "text/plain"]);
  });

  it("declares bearer keys, OAuth 2.0 with the spec's scopes, and each operation's scope", () => {
    const schemes = doc.components.securitySchemes;
    expect(schemes.apiKey).toMatchObject({ type: "http", scheme: "bearer" });
    const flow = schemes.oauth2.flows.authorizationCode;
    expect(Object.keys(flow.scopes)).toEqual(
      expect.arrayContaining([
        "openid",
        "files:read",
        "files:write",
        "files:share",
        "mcp:use",
        "offline_access",
      ]),
    );
    expect(doc.paths["/api/v1/files"].get.security).toEqual([
      { apiKey: ["files:read"] },
      { oauth2: ["files:read"] },
    ]);
    expect(doc.paths["/api/v1/shares"].post.security).toEqual([
      { apiKey: ["shares:write"] },
      { oauth2: ["files:share"] },
    ]);
    expect(doc.paths["/api/v1"].get.security).toEqual([]);
    expect(doc.paths["/api/me/keys"].get.security).toEqual([{ sessionCookie: [] }]);
    expect(doc.paths["/auth/login"].get["x-surface"]).toBe("signIn");
  });

  it("the contract check flags undocumented statuses, wrong bodies and missing headers", () => {
    const c = new ContractChecker(doc);
    const headers = new Headers({
      "content-type": "application/json",
      "api-version": "v1",
      "x-request-id": "r",
      "ratelimit-limit": "1",
      "ratelimit-remaining": "1",
      "ratelimit-reset": "1",
      "ratelimit-policy": "p",
    });
    c.check(
      "GET",
      "/api/v1/files",
      200,
      headers,
      JSON.stringify({ files: [], nextCursor: null, hasMore: false }),
    );
    expect(c.violations).toEqual([]);
    c.check("GET", "/api/v1/files", 418, headers, "{}");
    c.check("GET", "/api/v1/files", 200, headers, JSON.stringify({ files: "no" }));
    const bare = new Headers({ "content-type": "application/json" });
    c.check(
      "GET",
      "/api/v1/files",
      200,
      bare,
      JSON.stringify({ files: [], nextCursor: null, hasMore: false }),
    );
    expect(c.violations.map((v) => v.problem)).toEqual([
      expect.stringContaining("status 418 is not documented"),
      expect.stringContaining("body does not match"),
      expect.stringContaining("required header API-Version missing"),
      expect.stringContaining("required header X-Request-ID missing"),
      expect.stringContaining("RateLimit-Limit"),
      expect.stringContaining("RateLimit-Remaining"),
      expect.stringContaining("RateLimit-Reset"),
      expect.stringContaining("RateLimit-Policy"),
    ]);
    expect(c.checked).toBe(4);
  });

  it("is linked from discover", async () => {
    const res = await t.client().get("/api/v1");
    expect(res.body.links.openapi).toBe("/openapi.json");
  });
});

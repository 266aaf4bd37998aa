// A JSON body nested deeper than any request needs is refused with the error body, on every route
// that takes JSON (MCP, batch and sync included), before anything walks it recursively: 50,000
// levels were a 500 (a stack overflow in the input guard), and nothing may change either way.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LIMITS } from "../../src/server/domain/limits.ts";
import { nestsDeeperThan } from "../../src/server/http/jsonDepth.ts";
import { accountFingerprint } from "../helpers/fingerprint.ts";
import { expectError, mkfile, startTestServer, type TestServer, type TestUser } from "../helpers/server.ts";

let t: TestServer;
let alice: TestUser;
let fileId: string;

beforeAll(async () => {
  t = await startTestServer();
  alice = await t.user();
  fileId = (await mkfile(alice, { name: "deep.md", content: "kept" })).id;
});
afterAll(() => t.close());

const nested = (levels: number) => `${"[".repeat(levels)}${"]".repeat(levels)}`;

describe("deeply nested JSON", () => {
  it("50,000 levels to every JSON write route (and /mcp) are a 400 json_too_deep; nothing changes", async () => {
    const before = await accountFingerprint(alice.api);
    const routes = t.server.routeTable.filter(
      (r) => (r.schema?.body !== undefined || r.url === "/mcp") && !["GET", "DELETE"].includes(r.method),
    );
    expect(routes.length).toBeGreaterThan(40);
    const body = nested(50_000);
    for (const route of routes) {
      const url = route.url.replace(/:\w+/g, fileId);
      const res = await alice.api.request(route.method, url, {
        body,
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      });
      // Cookie-only routes refuse the bearer credential first (401); every other route reads the body.
      if (res.status === 401) {
        expectError(res, 401, "session_required");
        continue;
      }
      const e = expectError(res, 400, "json_too_deep");
      expect(e.message, `${route.method} ${route.url}`).toContain(String(LIMITS.jsonDepth));
    }
    expect(await accountFingerprint(alice.api)).toBe(before);
  });

  it("the limit is exact: one level more than the limit is refused, the limit itself is parsed", async () => {
    const tooDeep = await alice.api.request("POST", "/api/v1/files", {
      body: `{"name":"a.md","tags":${nested(LIMITS.jsonDepth)}}`,
      headers: { "content-type": "application/json" },
    });
    expectError(tooDeep, 400, "json_too_deep");
    // At the limit the body is parsed and validated like any other: the field is named.
    const atLimit = await alice.api.request("POST", "/api/v1/files", {
      body: `{"name":"a.md","tags":${nested(LIMITS.jsonDepth - 1)}}`,
      headers: { "content-type": "application/json" },
    });
    const e = expectError(atLimit, 400, "validation_failed");
    expect(e.details[0].field).toMatch(/^tags/);
  });

  it("brackets inside strings do not count, escaped quotes do not end a string", async () => {
    const content = `${"[".repeat(10_000)} \\" ${"{".repeat(10_000)}`;
    const res = await alice.api.post("/api/v1/files", { name: "brackets.md", content });
    expect(res.status, res.text).toBe(201);
    expect((await alice.api.get(`/api/v1/files/${res.body.file.id}/raw`)).text).toBe(content);
  });
});

describe("nestsDeeperThan", () => {
  it("measures nesting on the text", () => {
    expect(nestsDeeperThan("[]", 1)).toBe(false);
    expect(nestsDeeperThan("[[]]", 1)).toBe(true);
    expect(nestsDeeperThan('{"a":[{"b":"[[[[["}]}', 3)).toBe(false);
    expect(nestsDeeperThan('{"a":"\\"[[[[","b":[[]]}', 3)).toBe(false);
    expect(nestsDeeperThan('{"a":"\\\\","b":[[[]]]}', 3)).toBe(true);
    expect(nestsDeeperThan('["unterminated [[[[', 1)).toBe(false);
  });
});

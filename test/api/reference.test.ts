// The plain-text reference (/llms.txt, /llms-full.txt, /reference/*.txt): generated from the
// OpenAPI document, so every operation appears on its area's page with its shapes and an example.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, startTestServer, type TestServer, type TestUser } from "../helpers/server.ts";

let t: TestServer;
let alice: TestUser;
let doc: any;

const PAGES = ["files", "folders", "metadata", "collaboration", "sync", "auth", "errors"];

beforeAll(async () => {
  t = await startTestServer();
  alice = await t.user();
  doc = (await t.client().get("/openapi.json")).body;
});
afterAll(() => t.close());

describe("reference pages", () => {
  it("/llms.txt indexes every page, the full text, OpenAPI, the client, the playground and MCP", async () => {
    const res = await t.client().get("/llms.txt");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
    expect(res.text).toMatch(/^# txtfs\n\n> /);
    for (const p of PAGES) expect(res.text).toContain(`(/reference/${p}.txt)`);
    for (const link of ["/llms-full.txt", "/openapi.json", "/client/txtfs.js", "/docs", "/mcp"]) {
      expect(res.text).toContain(link);
    }
  });

  it("each page is short plain text with shapes and curl examples, and every operation is on one", async () => {
    const seen = new Set<string>();
    for (const p of PAGES) {
      const res = await t.client().get(`/reference/${p}.txt`);
      expect(res.status, p).toBe(200);
      // fits a model's context comfortably (~11k tokens), with every field's limits stated
      expect(res.text.length, p).toBeLessThan(44_000);
      expect(res.text, p).toContain("curl -sS");
      for (const m of res.text.matchAll(/operationId:? (\w+)/g)) seen.add(m[1]!);
    }
    const all = Object.values<any>(doc.paths).flatMap((item) =>
      ["get", "post", "put", "patch", "delete"].filter((m) => item[m]).map((m) => item[m].operationId),
    );
    expect(all.filter((id) => !seen.has(id))).toEqual([]);
    const files = (await t.client().get("/reference/files.txt")).text;
    expect(files).toContain("### read — GET /api/v1/files/{id}");
    expect(files).toContain("304: no body");
    expect(files).toMatch(/TxtFileDetail[^\n]*\n\{\n {2}id: string,/);
    const errors = (await t.client().get("/reference/errors.txt")).text;
    expect(errors).toContain("resolution: string");
    expect(errors).toContain("429: Rate limited");
  });

  it("/llms-full.txt has every page; an unknown page is a 404 with the error body", async () => {
    const full = (await t.client().get("/llms-full.txt")).text;
    for (const p of PAGES) expect(full).toContain((await t.client().get(`/reference/${p}.txt`)).text);
    expect(full.split("\n---\n").length).toBe(PAGES.length + 1);
    expectError(await t.client().get("/reference/nope.txt"), 404, "not_found");
  });

  it("the curl examples work as printed", async () => {
    await alice.api.post("/api/v1/files", { name: "from-curl.md", content: "hi" });
    const page = (await t.client().get("/reference/files.txt")).text;
    const example = page
      .split("### list — GET /api/v1/files\n")[1]!
      .split("Example:\n")[1]!
      .split("\n\n")[0]!;
    // Asynchronously: the server answering curl runs in this process.
    const { stdout: out } = await promisify(execFile)("bash", ["-c", example], {
      env: { ...process.env, TXTFS_URL: t.url, TXTFS_API_KEY: alice.key },
      encoding: "utf8",
    });
    expect(JSON.parse(out).files.map((f: { name: string }) => f.name)).toContain("from-curl.md");
  });
});

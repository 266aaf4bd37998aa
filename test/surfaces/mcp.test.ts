// The MCP server through the SDK's own client over Streamable HTTP: every tool, checked through
// the API; auth failures; a reader cannot write through MCP; resources.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN } from "../helpers/cli.ts";
import { startTestServer, type TestServer, type TestUser } from "../helpers/server.ts";

let t: TestServer;
let alice: TestUser;
const clients: Client[] = [];

async function connect(key: string): Promise<Client> {
  const client = new Client({ name: "txtfs-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  clients.push(client);
  return client;
}

/** Calls a tool; returns its text and whether it is an error. */
async function call(client: Client, name: string, args: Record<string, unknown> = {}) {
  const res = (await client.callTool({ name, arguments: args })) as {
    content: { type: string; text: string }[];
    isError?: boolean;
  };
  const text = res.content.map((c) => c.text).join("\n");
  return { text, isError: Boolean(res.isError), json: () => JSON.parse(text) };
}

beforeAll(async () => {
  t = await startTestServer();
  alice = await t.user();
});
afterAll(async () => {
  for (const c of clients) await c.close();
  await t.close();
});

const TOOLS = [
  "workspace_context",
  "list_notes",
  "read_note",
  "write_note",
  "append_note",
  "replace_text",
  "move_note",
  "delete_note",
  "search_notes",
  "get_metadata",
  "set_metadata",
  "connect_notes",
  "related_notes",
  "list_skills",
  "comment",
  "suggest",
  "list_versions",
  "search",
  "fetch",
  "memory_view",
  "memory_create",
  "memory_str_replace",
  "memory_insert",
  "memory_delete",
  "memory_rename",
];

describe("MCP over Streamable HTTP", () => {
  it("lists the tools, each described for models", async () => {
    const c = await connect(alice.key);
    const { tools } = await c.listTools();
    expect(tools.map((x) => x.name).sort()).toEqual([...TOOLS].sort());
    for (const tool of tools) expect(tool.description?.length, tool.name).toBeGreaterThan(20);
  });

  it("every tool works, and its effect is visible through the API", async () => {
    const c = await connect(alice.key);
    const created = await call(c, "write_note", {
      path: "memory/research/today.md",
      content: "# Today\nquokkas are happy\n",
      tags: ["daily"],
    });
    expect(created.isError, created.text).toBe(false);
    const { id, etag } = created.json();
    const api = (await alice.api.get(`/api/v1/files/${id}`)).body;
    expect(api).toMatchObject({ name: "today.md", content: "# Today\nquokkas are happy\n", tags: ["daily"] });

    const read = await call(c, "read_note", { path: "memory/research/today.md" });
    expect(read.text).toContain(`etag: ${etag}`);
    expect(read.text).toContain("quokkas are happy");

    // no silent overwrite: replacing needs the etag
    const blind = await call(c, "write_note", { path: "memory/research/today.md", content: "gone" });
    expect(blind.isError).toBe(true);
    expect(blind.text).toMatch(/^if_match_required: .*\nResolution: /);
    const stale = await call(c, "write_note", { id, content: "x", ifMatch: '"0-0000000000000000"' });
    expect(stale.text).toMatch(/^precondition_failed/);
    expect((await alice.api.get(`/api/v1/files/${id}`)).body.content).toBe("# Today\nquokkas are happy\n");

    expect((await call(c, "append_note", { id, content: "- wombats too" })).isError).toBe(false);
    expect((await call(c, "replace_text", { id, find: "happy", replace: "very happy" })).isError).toBe(false);
    expect((await alice.api.get(`/api/v1/files/${id}`)).body.content).toBe(
      "# Today\nquokkas are very happy\n- wombats too",
    );
    const fresh = (await alice.api.get(`/api/v1/files/${id}`)).body.etag;
    expect((await call(c, "write_note", { id, content: "rewritten\n", ifMatch: fresh })).isError).toBe(false);

    await call(c, "write_note", { path: "memory/other.md", content: "about quokkas" });
    expect(
      (await call(c, "set_metadata", { path: "memory/other.md", context: "animal notes", tags: ["zoo"] }))
        .isError,
    ).toBe(false);
    expect((await call(c, "get_metadata", { path: "memory/other.md" })).json()).toMatchObject({
      context: "animal notes",
      tags: ["zoo"],
    });
    const linked = await call(c, "connect_notes", {
      path: "memory/other.md",
      to: "memory/research/today.md",
      reason: "same topic",
    });
    expect(linked.json()).toMatchObject({ created: true, reason: "same topic" });
    const related = (await call(c, "related_notes", { path: "memory/other.md" })).json();
    expect(related.related[0].path).toBe("memory/research/today.md");
    const apiRelated = (await alice.api.get(`/api/v1/files/${related.related[0].id}/connections`)).status;
    expect(apiRelated).toBe(200);

    const found = (await call(c, "search_notes", { query: "quokkas" })).json().results;
    expect(found.map((h: { path: string }) => h.path)).toEqual(["memory/other.md"]);
    const searched = (await call(c, "search", { query: "quokkas" })).json().results;
    const fetched = (await call(c, "fetch", { id: searched[0].id })).json();
    expect(fetched).toMatchObject({ title: "memory/other.md", text: "about quokkas" });

    const listed = (await call(c, "list_notes", { folder: "memory" })).json();
    expect(listed.notes.map((n: { path: string }) => n.path)).toEqual([
      "memory/other.md",
      "memory/research/today.md",
    ]);
    await call(c, "write_note", {
      path: "skills/summarize/SKILL.md",
      content: "---\nname: summarize\ndescription: Summarize notes\n---\n",
    });
    expect((await call(c, "list_skills")).json().skills.map((s: { skill: string }) => s.skill)).toContain(
      "summarize",
    );
    const ctx = (await call(c, "workspace_context")).json();
    expect(ctx.folders.map((f: { path: string }) => f.path)).toEqual(
      expect.arrayContaining(["memory", "memory/research", "skills"]),
    );

    expect((await call(c, "comment", { id, body: "source?", quote: "rewritten" })).isError).toBe(false);
    expect((await call(c, "suggest", { id, find: "rewritten", replace: "revised" })).isError).toBe(false);
    expect((await alice.api.get(`/api/v1/files/${id}/comments`)).body.comments[0]).toMatchObject({
      body: "source?",
      selected_text: "rewritten",
    });
    expect((await alice.api.get(`/api/v1/files/${id}/suggestions`)).body.suggestions[0]).toMatchObject({
      suggested_text: "revised",
    });
    const versions = (await call(c, "list_versions", { id })).json().versions;
    expect(versions.length).toBeGreaterThanOrEqual(4);

    expect((await call(c, "move_note", { id, to: "memory/moved.md" })).isError).toBe(false);
    expect((await alice.api.get(`/api/v1/files/${id}`)).body).toMatchObject({ name: "moved.md" });
    expect((await call(c, "delete_note", { path: "memory/moved.md" })).isError).toBe(false);
    expect((await alice.api.get(`/api/v1/files/${id}`)).status).toBe(404);
    expect((await call(c, "read_note", { path: "memory/moved.md" })).text).toMatch(/^not_found/);
  });

  it("long notes are paged: no result is larger than 20,000 characters", async () => {
    const c = await connect(alice.key);
    const big = "x".repeat(45_000);
    await call(c, "write_note", { path: "big.txt", content: big });
    const first = await call(c, "read_note", { path: "big.txt" });
    expect(first.text.length).toBeLessThan(20_300);
    expect(first.text).toContain("nextOffset: 20000");
    const last = await call(c, "read_note", { path: "big.txt", offset: 40_000 });
    expect(last.text).not.toContain("nextOffset");
    expect(last.text.endsWith("x".repeat(5000))).toBe(true);
  });

  it("resources: notes by txtfs:// URI and the reference pages", async () => {
    const c = await connect(alice.key);
    await call(c, "write_note", { path: "res/a.md", content: "resource text" });
    const { resources } = await c.listResources();
    expect(resources.map((r) => r.uri)).toEqual(
      expect.arrayContaining(["txtfs://notes/res/a.md", "txtfs://reference/files.txt"]),
    );
    const note = await c.readResource({ uri: "txtfs://notes/res/a.md" });
    expect((note.contents[0] as { text: string }).text).toBe("resource text");
    const ref = await c.readResource({ uri: "txtfs://reference/files.txt" });
    expect((ref.contents[0] as { text: string }).text).toContain("# txtfs reference: Files");
  });

  it("refuses a missing or bad key with 401 in the error body", async () => {
    await expect(connect("txt_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")).rejects.toThrow(
      /401|nauthorized|invalid/i,
    );
    const res = await fetch(`${t.url}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(res.status).toBe(401);
    // This server takes API keys only: no OAuth metadata to point at (test/api/mcpOAuth.test.ts has
    // the server with an identity provider, whose 401 names it).
    expect(res.headers.get("www-authenticate")).toBe('Bearer realm="txtfs"');
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("unauthenticated");
  });

  it("access rules are the API's: a reader cannot write, a read-only key cannot write", async () => {
    const bob = await t.user();
    const carol = await t.user();
    const note = (await bob.api.post("/api/v1/files", { name: "bobs.md", content: "bob's text" })).body.file;
    expect(
      (await bob.api.post("/api/v1/shares", { fileId: note.id, email: carol.email, role: "reader" })).status,
    ).toBe(201);
    const c = await connect(carol.key);
    expect((await call(c, "read_note", { id: note.id })).text).toContain("bob's text");
    for (const [tool, args] of [
      ["append_note", { id: note.id, text: "carol was here" }],
      ["replace_text", { id: note.id, find: "bob", replace: "carol" }],
      ["set_metadata", { id: note.id, tags: ["mine"] }],
      ["delete_note", { id: note.id }],
    ] as const) {
      const out = await call(c, tool, args);
      expect(out.isError, tool).toBe(true);
      expect(out.text, tool).toMatch(/^(read_only_access|owner_only|forbidden)/);
    }
    // readers may comment, as in the API
    expect((await call(c, "comment", { id: note.id, body: "nice" })).isError).toBe(false);
    expect((await bob.api.get(`/api/v1/files/${note.id}`)).body).toMatchObject({
      content: "bob's text",
      tags: [],
    });

    const readOnly = await t.user(undefined, ["files:read", "folders:read"]);
    const r = await connect(readOnly.key);
    const denied = await call(r, "write_note", { path: "x.md", content: "x" });
    expect(denied.text).toMatch(/^insufficient_scope: .*files:write/);
    expect((await readOnly.api.get("/api/v1/files")).body.files).toHaveLength(0);
  });
});

describe("txtfs mcp over stdio", () => {
  async function stdio(args: string[]): Promise<Client> {
    const client = new Client({ name: "txtfs-test", version: "1.0.0" });
    const env = Object.fromEntries(Object.entries(process.env).filter(([, v]) => v !== undefined)) as Record<
      string,
      string
    >;
    await client.connect(
      new StdioClientTransport({ command: BIN, args: ["mcp", ...args], env, stderr: "pipe" }),
    );
    clients.push(client);
    return client;
  }

  it("--url/--key: the remote service's tools, as that key", async () => {
    const c = await stdio(["--url", t.url, "--key", alice.key]);
    expect((await c.listTools()).tools.map((x) => x.name)).toContain("write_note");
    const out = await call(c, "write_note", { path: "via-stdio.md", content: "over stdio" });
    expect(out.isError, out.text).toBe(false);
    expect((await alice.api.get(`/api/v1/files/${out.json().id}`)).body.content).toBe("over stdio");
    const denied = await stdio(["--url", t.url, "--key", "txt_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"]).catch(
      (e) => e,
    );
    expect(String(denied)).toMatch(/401|nauthorized|invalid/i);
  }, 60_000);

  it("--serve: a local service on the embedded store, no account needed; notes persist", async () => {
    const data = mkdtempSync(join(tmpdir(), "txtfs-mcp-"));
    try {
      const c = await stdio(["--serve", "--data", data]);
      expect((await call(c, "write_note", { path: "local/n.md", content: "kept" })).isError).toBe(false);
      await c.close();
      const again = await stdio(["--serve", "--data", data]);
      expect((await call(again, "read_note", { path: "local/n.md" })).text).toContain("kept");
      await again.close();
    } finally {
      rmSync(data, { recursive: true, force: true });
    }
  }, 60_000);
});

describe("MCP with OAuth access tokens", () => {
  it("a token with mcp:use connects and acts with its other scopes; one without mcp:use gets 403", async () => {
    const { signIn } = await import("../helpers/oidc.ts");
    const srv = await startTestServer({ devIdp: {} });
    try {
      const issuer = `${srv.url}/dev-idp`;
      const withMcp = await signIn({
        issuer,
        user: "alice",
        password: "alice-password",
        scope: "openid files:read files:write mcp:use",
      });
      const client = new Client({ name: "oauth-test", version: "1" });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp`), {
          requestInit: { headers: { Authorization: `Bearer ${withMcp.access_token}` } },
        }),
      );
      clients.push(client);
      const out = await call(client, "write_note", { path: "oauth.md", content: "by token" });
      expect(out.isError, out.text).toBe(false);
      expect((await call(client, "read_note", { path: "oauth.md" })).text).toContain("by token");

      const without = await signIn({
        issuer,
        user: "alice",
        password: "alice-password",
        scope: "openid files:read files:write",
      });
      const res = await fetch(`${srv.url}/mcp`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${without.access_token}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      });
      expect(res.status).toBe(403);
      expect(res.headers.get("www-authenticate")).toContain('scope="mcp:use"');
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("insufficient_scope");
    } finally {
      await srv.close();
    }
  }, 60_000);
});

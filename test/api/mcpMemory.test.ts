// The memory tool's commands over MCP, through the SDK's own client: view, create, str_replace,
// insert, delete, rename over /memories, each checked through the API; refusals change nothing;
// the access rules are the API's; read_note's line reads; append_note's `content` (and its old
// name). Both stores.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accountFingerprint } from "../helpers/fingerprint.ts";
import { startTestServer, type TestServer, type TestUser } from "../helpers/server.ts";

let t: TestServer;
let alice: TestUser;
const clients: Client[] = [];

async function connect(key: string): Promise<Client> {
  const client = new Client({ name: "memory-agent", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${key}` } },
    }),
  );
  clients.push(client);
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown>) {
  const res = (await client.callTool({ name, arguments: args })) as {
    content: { type: string; text: string }[];
    isError?: boolean;
  };
  return { text: res.content.map((c) => c.text).join("\n"), isError: Boolean(res.isError) };
}

/** The note at a path, through the API (its content, or undefined when there is none). */
async function noteText(user: TestUser, path: string): Promise<string | undefined> {
  const index = (await user.api.get("/api/me/files")).body as {
    files: { id: string; name: string; folderId: string | null }[];
    folders: { id: string; name: string; parentFolderId: string | null }[];
  };
  const folderPath = (id: string | null): string => {
    const f = index.folders.find((x) => x.id === id);
    return f ? [folderPath(f.parentFolderId), f.name].filter(Boolean).join("/") : "";
  };
  const file = index.files.find((f) => [folderPath(f.folderId), f.name].filter(Boolean).join("/") === path);
  return file ? (await user.api.get(`/api/v1/files/${file.id}/raw`)).text : undefined;
}

beforeAll(async () => {
  t = await startTestServer();
  alice = await t.user();
});
afterAll(async () => {
  for (const c of clients) await c.close();
  await t.close();
});

describe("the memory tool's commands", () => {
  it("view of an empty memory, create, view with line numbers and a range", async () => {
    const c = await connect(alice.key);
    const empty = await call(c, "memory_view", { path: "/memories" });
    expect(empty.isError).toBe(false);
    expect(empty.text).toContain("/memories");
    const created = await call(c, "memory_create", {
      path: "/memories/projects/plan.md",
      file_text: "# Plan\nfirst\nsecond\nthird\n",
    });
    expect(created.text).toBe("File created successfully at: /memories/projects/plan.md");
    expect(await noteText(alice, "memories/projects/plan.md")).toBe("# Plan\nfirst\nsecond\nthird\n");
    const dir = await call(c, "memory_view", { path: "/memories" });
    expect(dir.text).toContain("/memories/projects/");
    expect(dir.text).toContain("/memories/projects/plan.md");
    const file = await call(c, "memory_view", { path: "/memories/projects/plan.md" });
    expect(file.text).toBe(
      "Here's the content of /memories/projects/plan.md with line numbers:\n" +
        "     1\t# Plan\n     2\tfirst\n     3\tsecond\n     4\tthird",
    );
    const range = await call(c, "memory_view", { path: "/memories/projects/plan.md", view_range: [2, 3] });
    expect(range.text).toMatch(/ {5}2\tfirst\n {5}3\tsecond$/);
    const toEnd = await call(c, "memory_view", { path: "/memories/projects/plan.md", view_range: [4, -1] });
    expect(toEnd.text).toMatch(/ {5}4\tthird$/);
    const outside = await call(c, "memory_view", { path: "/memories/projects/plan.md", view_range: [3, 9] });
    expect(outside.isError).toBe(true);
    expect(outside.text).toMatch(/^invalid_range/);
  });

  it("create never overwrites; paths outside /memories are refused; nothing changes", async () => {
    const c = await connect(alice.key);
    await call(c, "memory_create", { path: "/memories/keep.md", file_text: "kept" });
    const before = await accountFingerprint(alice.api);
    const again = await call(c, "memory_create", { path: "/memories/keep.md", file_text: "lost?" });
    expect(again.isError).toBe(true);
    expect(again.text).toMatch(/^file_exists/);
    for (const path of ["/etc/passwd", "/memories/../secret.md", "notes/x.md", "/memoriesx/a.md"]) {
      const res = await call(c, "memory_create", { path, file_text: "x" });
      expect(res.isError, path).toBe(true);
      expect(res.text, path).toMatch(/^invalid_path/);
    }
    expect(await accountFingerprint(alice.api)).toBe(before);
    expect(await noteText(alice, "memories/keep.md")).toBe("kept");
  });

  it("str_replace: one occurrence is replaced; a missing or repeated old_str changes nothing and names the lines", async () => {
    const c = await connect(alice.key);
    await call(c, "memory_create", {
      path: "/memories/prefs.md",
      file_text: "colour: blue\nfood: pizza\ncolour: blue\ntea: green\n",
    });
    const before = await accountFingerprint(alice.api);
    const twice = await call(c, "memory_str_replace", {
      path: "/memories/prefs.md",
      old_str: "colour: blue",
      new_str: "colour: red",
    });
    expect(twice.isError).toBe(true);
    expect(twice.text).toContain("Multiple occurrences of old_str `colour: blue` in lines: 1, 3");
    const missing = await call(c, "memory_str_replace", {
      path: "/memories/prefs.md",
      old_str: "coffee",
      new_str: "tea",
    });
    expect(missing.isError).toBe(true);
    expect(missing.text).toContain("did not appear verbatim in /memories/prefs.md");
    expect(await accountFingerprint(alice.api)).toBe(before);
    const once = await call(c, "memory_str_replace", {
      path: "/memories/prefs.md",
      old_str: "food: pizza",
      new_str: "food: sushi",
    });
    expect(once.isError, once.text).toBe(false);
    expect(once.text).toContain("The memory file has been edited.");
    expect(await noteText(alice, "memories/prefs.md")).toBe(
      "colour: blue\nfood: sushi\ncolour: blue\ntea: green\n",
    );
  });

  it("insert after a line (0 = top); past the end is refused", async () => {
    const c = await connect(alice.key);
    await call(c, "memory_create", { path: "/memories/list.md", file_text: "a\nb\n" });
    await call(c, "memory_insert", { path: "/memories/list.md", insert_line: 0, insert_text: "top" });
    await call(c, "memory_insert", {
      path: "/memories/list.md",
      insert_line: 2,
      insert_text: "between\nlines",
    });
    await call(c, "memory_insert", { path: "/memories/list.md", insert_line: 5, insert_text: "end" });
    expect(await noteText(alice, "memories/list.md")).toBe("top\na\nbetween\nlines\nb\nend\n");
    const past = await call(c, "memory_insert", {
      path: "/memories/list.md",
      insert_line: 7,
      insert_text: "x",
    });
    expect(past.isError).toBe(true);
    expect(past.text).toMatch(/^invalid_range/);
    expect(await noteText(alice, "memories/list.md")).toBe("top\na\nbetween\nlines\nb\nend\n");
  });

  it("rename a file and a directory; never onto an existing path; delete a file and a directory", async () => {
    const c = await connect(alice.key);
    await call(c, "memory_create", { path: "/memories/old/one.md", file_text: "1" });
    await call(c, "memory_create", { path: "/memories/old/deeper/two.md", file_text: "2" });
    await call(c, "memory_create", { path: "/memories/taken.md", file_text: "t" });
    const onto = await call(c, "memory_rename", {
      old_path: "/memories/old/one.md",
      new_path: "/memories/taken.md",
    });
    expect(onto.isError).toBe(true);
    expect(onto.text).toMatch(/^file_exists/);
    expect(await noteText(alice, "memories/taken.md")).toBe("t");
    const file = await call(c, "memory_rename", {
      old_path: "/memories/old/one.md",
      new_path: "/memories/moved/uno.md",
    });
    expect(file.isError, file.text).toBe(false);
    expect(await noteText(alice, "memories/moved/uno.md")).toBe("1");
    expect(await noteText(alice, "memories/old/one.md")).toBeUndefined();
    const dir = await call(c, "memory_rename", { old_path: "/memories/old", new_path: "/memories/archive" });
    expect(dir.isError, dir.text).toBe(false);
    expect(await noteText(alice, "memories/archive/deeper/two.md")).toBe("2");
    expect((await call(c, "memory_delete", { path: "/memories/moved/uno.md" })).text).toBe(
      "File deleted: /memories/moved/uno.md",
    );
    expect(await noteText(alice, "memories/moved/uno.md")).toBeUndefined();
    const gone = await call(c, "memory_delete", { path: "/memories/archive" });
    expect(gone.isError, gone.text).toBe(false);
    expect(await noteText(alice, "memories/archive/deeper/two.md")).toBeUndefined();
    const view = await call(c, "memory_view", { path: "/memories" });
    expect(view.text).not.toContain("archive");
    const root = await call(c, "memory_delete", { path: "/memories" });
    expect(root.isError).toBe(true);
    expect(await noteText(alice, "memories/taken.md")).toBe("t");
  });

  it("the API's access rules: a read-only key views but cannot create; a shared reader cannot edit", async () => {
    const owner = await connect(alice.key);
    await call(owner, "memory_create", { path: "/memories/ro.md", file_text: "read only" });
    const readOnly = await t.user(alice.email.replace("@", "+ro@"), ["files:read", "folders:read"]);
    const ro = await connect(readOnly.key);
    // (a different account: its own empty memory)
    expect((await call(ro, "memory_view", { path: "/memories" })).isError).toBe(false);
    const refused = await call(ro, "memory_create", { path: "/memories/x.md", file_text: "x" });
    expect(refused.isError).toBe(true);
    expect(refused.text).toMatch(/^insufficient_scope/);

    // alice shares her memory folder with bob as reader: he sees it as /memories, and cannot edit it
    const bob = await t.user();
    const folders = (await alice.api.get("/api/me/files")).body.folders as { id: string; name: string }[];
    const memories = folders.find((f) => f.name === "memories")!;
    const share = await alice.api.post("/api/v1/shares", {
      folderId: memories.id,
      email: bob.email,
      role: "reader",
    });
    expect(share.status, share.text).toBe(201);
    const b = await connect(bob.key);
    expect((await call(b, "memory_view", { path: "/memories/ro.md" })).text).toContain("     1\tread only");
    for (const [name, args] of [
      ["memory_str_replace", { path: "/memories/ro.md", old_str: "read", new_str: "write" }],
      ["memory_insert", { path: "/memories/ro.md", insert_line: 0, insert_text: "x" }],
      ["memory_delete", { path: "/memories/ro.md" }],
      ["memory_rename", { old_path: "/memories/ro.md", new_path: "/memories/mine.md" }],
    ] as const) {
      const res = await call(b, name, args);
      expect(res.isError, name).toBe(true);
      expect(res.text, name).toMatch(/^(read_only_access|owner_only|forbidden)/);
    }
    expect(await noteText(alice, "memories/ro.md")).toBe("read only");
  });
});

describe("read_note reads lines; append_note takes content", () => {
  it("head, tail and view_range; only one at a time", async () => {
    const c = await connect(alice.key);
    const content = Array.from({ length: 50 }, (_, i) => `line ${i + 1}`).join("\n");
    const res = await alice.api.post("/api/v1/files", { name: "long.md", content });
    const id = res.body.file.id as string;
    const body = (r: { text: string }) => r.text.split("\n---\n")[1];
    expect(body(await call(c, "read_note", { id, head: 2 }))).toBe("line 1\nline 2");
    expect(body(await call(c, "read_note", { id, tail: 2 }))).toBe("line 49\nline 50");
    const mid = await call(c, "read_note", { id, view_range: [10, 12] });
    expect(body(mid)).toBe("line 10\nline 11\nline 12");
    expect(mid.text).toContain("lines: 10-12 of 50");
    const both = await call(c, "read_note", { id, head: 2, tail: 2 });
    expect(both.isError).toBe(true);
    expect(both.text).toMatch(/^invalid_range/);
  });

  it("append_note takes content; text is still accepted (deprecated); neither or both is refused", async () => {
    const c = await connect(alice.key);
    const id = (await alice.api.post("/api/v1/files", { name: "log.md", content: "start" })).body.file.id;
    expect((await call(c, "append_note", { id, content: "one" })).isError).toBe(false);
    expect((await call(c, "append_note", { id, text: "two" })).isError).toBe(false);
    expect((await call(c, "append_note", { id })).isError).toBe(true);
    expect((await call(c, "append_note", { id, content: "x", text: "y" })).isError).toBe(true);
    expect((await alice.api.get(`/api/v1/files/${id}/raw`)).text).toBe("start\none\ntwo");
  });
});

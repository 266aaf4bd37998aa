// One run: a note read through MCP (read_note over Streamable HTTP, the SDK client) against the
// same read through REST (GET /api/v1/files/:id), sequentially, after a warm-up.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createLogger } from "../src/lib/logger.ts";
import { createKey, createUser } from "../src/server/domain/accounts.ts";
import { startServer } from "../src/server/serve.ts";

const N = Number(process.env.N ?? 300);
const dataDir = mkdtempSync(join(tmpdir(), "txtfs-bench-mcp-"));
const server = await startServer({
  host: "127.0.0.1",
  port: 0,
  dataDir,
  retentionDays: 90,
  logger: createLogger("bench", "warn"),
  rateLimit: { limit: 1_000_000 },
});
try {
  const key = await server.store.transaction(async (tx) => {
    const u = await createUser(tx, "bench@example.com", "Bench");
    return (await createKey(tx, u.id, { label: "bench" })).secret;
  });
  const auth = { Authorization: `Bearer ${key}` };
  const created = await fetch(`${server.url}/api/v1/files`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ name: "note.md", content: "# Note\n".repeat(50) }),
  });
  const { file } = (await created.json()) as { file: { id: string } };
  const client = new Client({ name: "bench", version: "1" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: auth } }),
  );

  const rest = async () => {
    const r = await fetch(`${server.url}/api/v1/files/${file.id}`, { headers: auth });
    await r.text();
  };
  const mcp = async () => {
    await client.callTool({ name: "read_note", arguments: { id: file.id } });
  };
  const time = async (fn: () => Promise<void>) => {
    for (let i = 0; i < 30; i++) await fn();
    const t0 = performance.now();
    for (let i = 0; i < N; i++) await fn();
    return (performance.now() - t0) / N;
  };
  const restMs = await time(rest);
  const mcpMs = await time(mcp);
  process.stdout.write(
    `read, ${N} sequential calls: REST ${restMs.toFixed(2)} ms/call, MCP read_note ${mcpMs.toFixed(2)} ms/call, ratio ${(mcpMs / restMs).toFixed(1)}x\n`,
  );
  await client.close();
} finally {
  await server.close();
  rmSync(dataDir, { recursive: true, force: true });
}

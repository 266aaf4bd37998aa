// txtfs mcp: the MCP server over stdio for local agents. It bridges stdio to a service's /mcp
// endpoint, so the tools run in the service with its access rules: a remote one (--url/--key) or
// one run in this process on the embedded store (--serve, like txtfs mount --serve).
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { Command } from "commander";
import type { Logger } from "../lib/logger.ts";
import { dataDir } from "../lib/paths.ts";

async function serveLocally(data: string, log: Logger) {
  // Loaded on use: other txtfs commands should not pay for the server's modules at startup.
  const { startServer } = await import("../server/serve.ts");
  const { createKey, createUser } = await import("../server/domain/accounts.ts");
  const server = await startServer({
    host: "127.0.0.1",
    port: 0,
    dataDir: data,
    retentionDays: 90,
    logger: log,
    rateLimit: { limit: 1_000_000 },
  });
  const keyFile = join(data, "mcp.key");
  let key = existsSync(keyFile) ? readFileSync(keyFile, "utf8").trim() : "";
  if (!key) {
    key = await server.store.transaction(async (tx) => {
      const user =
        (await tx.users.list())[0] ??
        (await createUser(tx, `${process.env.USER || "me"}@localhost`, "Local user"));
      return (await createKey(tx, user.id, { label: "local mcp" })).secret;
    });
    writeFileSync(keyFile, `${key}\n`, { mode: 0o600 });
  }
  return { server, key };
}

export function registerMcp(program: Command): void {
  program
    .command("mcp")
    .description("Run the MCP server over stdio for local agents (tools on your notes).")
    .option("--url <url>", "the txtfs service", process.env.TXTFS_URL)
    .option("--key <key>", "API key (or OAuth access token with mcp:use)", process.env.TXTFS_API_KEY)
    .option("--serve", "run the service in this process on the embedded store (no account needed)")
    .option("--data <dir>", "data directory for --serve", dataDir())
    .action(async (opts) => {
      // Loaded when the command runs: `txtfs --help` loads no logger (see main.ts).
      const { createLogger } = await import("../lib/logger.ts");
      const log = createLogger("txtfs-mcp", process.env.TXTFS_LOG_LEVEL ?? "warn");
      let url: string = opts.url;
      let key: string = opts.key;
      let stopServer = async () => {};
      if (opts.serve) {
        const local = await serveLocally(opts.data, log);
        url = local.server.url;
        key = opts.key ?? local.key;
        stopServer = () => local.server.close();
      }
      if (!url || !key) {
        throw new Error(
          "no service: pass --url and --key (or TXTFS_URL/TXTFS_API_KEY), or --serve for a local one",
        );
      }
      const { StreamableHTTPClientTransport } = await import(
        "@modelcontextprotocol/sdk/client/streamableHttp.js"
      );
      const { StdioServerTransport } = await import("@modelcontextprotocol/sdk/server/stdio.js");
      const remote = new StreamableHTTPClientTransport(new URL("/mcp", url), {
        requestInit: { headers: { Authorization: `Bearer ${key}` } },
      });
      const local = new StdioServerTransport();
      let closing = false;
      const close = async () => {
        if (closing) return;
        closing = true;
        await remote.close().catch(() => {});
        await local.close().catch(() => {});
        await stopServer();
        process.exit(0);
      };
      // Messages pass through unchanged; a failed upstream request becomes a JSON-RPC error.
      local.onmessage = (message: JSONRPCMessage) => {
        remote.send(message).catch((err: Error) => {
          log.warn({ err }, "upstream request failed");
          if ("id" in message && message.id !== undefined && "method" in message) {
            void local.send({
              jsonrpc: "2.0",
              id: message.id,
              error: { code: -32000, message: err.message },
            });
          }
        });
      };
      remote.onmessage = (message: JSONRPCMessage) => void local.send(message);
      remote.onerror = (err) => log.warn({ err }, "upstream error");
      local.onclose = () => void close();
      process.on("SIGTERM", () => void close());
      process.on("SIGINT", () => void close());
      await remote.start();
      await local.start();
    });
}

// Regenerates the TypeScript client's types from this server's OpenAPI document:
// clients/typescript/openapi.json, src/openapi.ts (openapi-typescript) and dist/txtfs.js.
// `node scripts/gen-client.ts` after changing a route's schemas; a test fails while they differ.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger } from "../src/lib/logger.ts";
import { startServer } from "../src/server/serve.ts";
import { CLIENT_DIR, clientJs, clientTypes } from "./clientTypes.ts";

const dataDir = mkdtempSync(join(tmpdir(), "txtfs-gen-"));
const server = await startServer({
  host: "127.0.0.1",
  port: 0,
  dataDir,
  retentionDays: 90,
  logger: createLogger("gen-client", "warn"),
});
try {
  const doc = server.openapi();
  writeFileSync(new URL("openapi.json", CLIENT_DIR), `${JSON.stringify(doc, null, 2)}\n`);
  writeFileSync(new URL("src/openapi.ts", CLIENT_DIR), await clientTypes(doc));
  mkdirSync(new URL("dist/", CLIENT_DIR), { recursive: true });
  writeFileSync(new URL("dist/txtfs.js", CLIENT_DIR), clientJs());
  process.stdout.write("wrote clients/typescript/{openapi.json,src/openapi.ts,dist/txtfs.js}\n");
} finally {
  await server.close();
  rmSync(dataDir, { recursive: true, force: true });
}

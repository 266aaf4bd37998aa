// Writes the API's size into the README's figures, counted as the front page and /llms.txt count
// it (src/server/openapi/counts.ts). `node scripts/gen-counts.ts` after adding or removing a route;
// test/api/counts.test.ts fails while the README says otherwise.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger } from "../src/lib/logger.ts";
import { countApi, describeCounts } from "../src/server/openapi/counts.ts";
import { startServer } from "../src/server/serve.ts";

export const README = new URL("../README.md", import.meta.url);
/** The README's figure, between these words (the test reads it the same way). */
export const FIGURE = /(Figures \(at this commit; `npm run gen:counts` writes them\): )\*\*[^*]+\*\*/;

const dataDir = mkdtempSync(join(tmpdir(), "txtfs-counts-"));
const server = await startServer({
  host: "127.0.0.1",
  port: 0,
  dataDir,
  retentionDays: 90,
  logger: createLogger("gen-counts", "warn"),
});
try {
  const text = readFileSync(README, "utf8");
  if (!FIGURE.test(text)) throw new Error("README.md has no figure line to update");
  const counts = describeCounts(countApi(server.openapi() as { paths: Record<string, object> }));
  writeFileSync(README, text.replace(FIGURE, `$1**${counts}**`));
  process.stdout.write(`README.md: ${counts}\n`);
} finally {
  await server.close();
  rmSync(dataDir, { recursive: true, force: true });
}

// The API's size is counted once (src/server/openapi/counts.ts) and said the same way everywhere:
// the front page, /llms.txt and the README's figures; the versions say which is which.
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_DESCRIPTION_VERSION, countApi, describeCounts } from "../../src/server/openapi/counts.ts";
import { ROOT } from "../helpers/cli.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let t: TestServer;
let doc: { paths: Record<string, object>; info: { version: string; description: string } };
const serverVersion = JSON.parse(readFileSync(`${ROOT}/package.json`, "utf8")).version as string;

beforeAll(async () => {
  t = await startTestServer();
  doc = (await t.client().get("/openapi.json")).body;
});
afterAll(async () => {
  await t.close();
});

describe("counts and versions", () => {
  it("counts every route the server answers (HEAD aside) as one operation", () => {
    const served = new Set(t.server.routes().filter((r) => !r.startsWith("HEAD ")));
    expect(countApi(doc).operations).toBe(served.size);
    expect(countApi(doc).paths).toBe(new Set([...served].map((r) => r.split(" ")[1])).size);
  });

  it("the front page, /llms.txt and the README say the same counts", async () => {
    const words = describeCounts(countApi(doc));
    const front = await (await fetch(`${t.url}/`)).text();
    expect(front).toContain(`${words}, generated from the routes`);
    const llms = await (await fetch(`${t.url}/llms.txt`)).text();
    expect(llms).toContain(`[OpenAPI 3.1](/openapi.json): ${words}; description ${API_DESCRIPTION_VERSION}`);
    const readme = readFileSync(`${ROOT}/README.md`, "utf8");
    expect(readme, "run npm run gen:counts").toContain(
      `Figures (at this commit; \`npm run gen:counts\` writes them): **${words}**`,
    );
  });

  it("the description's version and the server's are named apart", async () => {
    expect(doc.info.version).toBe(API_DESCRIPTION_VERSION);
    expect(doc.info.description).toContain(
      `info.version (${API_DESCRIPTION_VERSION}) is the version of this description of API v1; the server is txtfs ${serverVersion}.`,
    );
    const front = await (await fetch(`${t.url}/`)).text();
    expect(front).toContain(
      `API v1 (beta) · its description ${API_DESCRIPTION_VERSION} · server txtfs ${serverVersion}`,
    );
  });
});

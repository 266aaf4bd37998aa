// The playground (/docs) and the front page in headless Chromium: Swagger UI loads from this
// server only, a pasted key authorizes, and listFiles and createFile run for real.
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer, type TestUser } from "../helpers/server.ts";

let browser: Browser;
let t: TestServer;
let alice: TestUser;

beforeAll(async () => {
  browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-dev-shm-usage"],
  });
  t = await startTestServer();
  alice = await t.user();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

/** A page that fails on any request leaving this server (no CDN) and on page errors. */
async function localPage(): Promise<{ page: Page; foreign: string[]; errors: string[] }> {
  const page = await browser.newPage();
  // Swagger UI renders ~140 operations: slow on a shared 2-core machine.
  page.setDefaultTimeout(60_000);
  const foreign: string[] = [];
  const errors: string[] = [];
  await page.route("**/*", (route) => {
    const url = route.request().url();
    if (url.startsWith(t.url) || url.startsWith("data:")) return route.continue();
    foreign.push(url);
    return route.abort();
  });
  page.on("pageerror", (e) => errors.push(String(e)));
  return { page, foreign, errors };
}

async function execute(page: Page, operationId: string, body?: string) {
  const block = page.locator(`[id$="-${operationId}"].opblock`);
  await block.locator(".opblock-summary").first().click();
  if (body !== undefined) await block.locator("textarea.body-param__text").fill(body);
  await block.locator("button.execute").click();
  const status = block.locator(".live-responses-table .response .response-col_status").first();
  await status.waitFor();
  const text = await block.locator(".live-responses-table .response-col_description pre").first().innerText();
  return { status: (await status.innerText()).trim(), text };
}

describe("playground", () => {
  it("loads from this server only, authorizes with a pasted key, runs listFiles and createFile", async () => {
    await alice.api.post("/api/v1/files", { name: "seen-in-playground.md", content: "x" });
    const { page, foreign, errors } = await localPage();
    await page.goto(`${t.url}/docs`);
    await page.locator(".opblock").first().waitFor();
    expect(await page.locator("#session-status").innerText()).toMatch(/Paste an API key/);

    await page.locator("button.authorize").first().click();
    const dialog = page.locator(".modal-ux");
    await dialog.locator("input[type=text], input[type=password]").first().fill(alice.key);
    await dialog.locator("button.authorize").first().click();
    await dialog.locator("button.btn-done, button.close-modal").first().click();

    const listed = await execute(page, "listFiles");
    expect(listed.status).toBe("200");
    expect(listed.text).toContain("seen-in-playground.md");

    const created = await execute(
      page,
      "createFile",
      JSON.stringify({ name: "made-in-playground.md", content: "hi" }),
    );
    expect(created.status).toBe("200");
    expect(created.text).toContain("made-in-playground.md");
    // it really happened: the API shows the new note
    const names = (await alice.api.get("/api/v1/files")).body.files.map((f: { name: string }) => f.name);
    expect(names).toContain("made-in-playground.md");
    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  }, 180_000);

  it("the front page links the playground, reference, key page and dashboard, with the version", async () => {
    const { page, foreign } = await localPage();
    await page.goto(`${t.url}/`);
    const hrefs = await page.locator("a").evaluateAll((as) => as.map((a) => a.getAttribute("href")));
    for (const h of ["/docs", "/llms.txt", "/openapi.json", "/keys", "/dashboard", "/client/txtfs.js"]) {
      expect(hrefs).toContain(h);
    }
    expect(await page.locator("body").innerText()).toMatch(/server txtfs \d+\.\d+\.\d+/);
    expect(foreign).toEqual([]);
    await page.close();
  });
});

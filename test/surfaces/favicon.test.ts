// Every page links an icon and the server serves it: /favicon.ico (what browsers ask for unprompted)
// is a real 16x16 icon Chromium decodes, /favicon.svg the same shape; no page's icon is a 404.
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let browser: Browser;
let t: TestServer;

beforeAll(async () => {
  browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-dev-shm-usage"],
  });
  t = await startTestServer();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe("the pages' icon", { timeout: 60_000 }, () => {
  it("/favicon.ico is an ICO of one 16x16 image, /favicon.svg an SVG", async () => {
    const ico = await fetch(`${t.url}/favicon.ico`);
    expect(ico.status).toBe(200);
    expect(ico.headers.get("content-type")).toBe("image/x-icon");
    const bytes = Buffer.from(await ico.arrayBuffer());
    expect([...bytes.subarray(0, 8)]).toEqual([0, 0, 1, 0, 1, 0, 16, 16]);
    expect(bytes.readUInt32LE(6 + 8)).toBe(bytes.length - 22); // the image fills the rest
    const svg = await fetch(`${t.url}/favicon.svg`);
    expect(svg.status).toBe(200);
    expect(svg.headers.get("content-type")).toMatch(/^image\/svg\+xml/);
    expect(await svg.text()).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  });

  it("each page links both, the links answer 200, and Chromium decodes the ICO at 16x16", async () => {
    const page = await browser.newPage();
    try {
      for (const path of ["/", "/docs", "/keys", "/dashboard"]) {
        await page.goto(t.url + path);
        const hrefs = (await page.evaluate(
          `[...document.querySelectorAll('link[rel="icon"]')].map((l) => l.href)`,
        )) as string[];
        expect(hrefs, path).toEqual([`${t.url}/favicon.ico`, `${t.url}/favicon.svg`]);
        for (const href of hrefs) expect((await fetch(href)).status, href).toBe(200);
      }
      await page.goto(t.url);
      const size = await page.evaluate(
        `(async () => { const img = new Image(); img.src = "/favicon.ico"; await img.decode(); return [img.naturalWidth, img.naturalHeight]; })()`,
      );
      expect(size).toEqual([16, 16]);
    } finally {
      await page.close();
    }
  });
});

// The usage dashboard in headless Chromium, after real traffic generated here: per key and day,
// requests, errors by status, rate-limit hits and latency, as the server counted them.
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { utcDay } from "../../src/lib/time.ts";
import { createKey } from "../../src/server/domain/accounts.ts";
import { createSession } from "../../src/server/http/session.ts";
import { Api, startTestServer, type TestServer, type TestUser } from "../helpers/server.ts";

let browser: Browser;
let t: TestServer;
let alice: TestUser;

beforeAll(async () => {
  browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-dev-shm-usage"],
  });
  // Writes cost 5 points: 40 points admit 8 writes; reads are 1.
  t = await startTestServer({ usageFlushMs: 100, rateLimit: { limit: 40, windowSeconds: 60 } });
  alice = await t.user();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe("usage dashboard", () => {
  it("shows each key's requests, errors by status, rate-limit hits and latency for today", async () => {
    // Key 1: 6 reads, 2 not-found reads, then writes until rate-limited.
    for (let i = 0; i < 6; i++) expect((await alice.api.get("/api/v1/files")).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await alice.api.get("/api/v1/files/f_missing")).status).toBe(404);
    const writes: number[] = [];
    for (let i = 0; i < 8; i++)
      writes.push((await alice.api.post("/api/v1/files", { name: `w${i}.md` })).status);
    const limited = writes.filter((s) => s === 429).length;
    expect(limited).toBeGreaterThan(0);
    // Key 2 of the same user: 3 reads.
    const second = await t.server.store.transaction((tx) => createKey(tx, alice.id, { label: "second" }));
    const api2 = new Api(t.url, second.secret, t.contract);
    for (let i = 0; i < 3; i++) await api2.get("/api/v1/files");
    await new Promise((r) => setTimeout(r, 400)); // the usage flush runs every 100 ms here

    const cookie = await t.server.store.transaction((tx) => createSession(tx, alice.id, null));
    const context = await browser.newContext();
    await context.addCookies([{ name: "session", value: cookie, url: t.url }]);
    const page = await context.newPage();
    await page.goto(`${t.url}/dashboard`);
    const sections = page.locator("section.key");
    expect(await sections.count()).toBe(2);
    const first = page.locator(`section.key`).first();
    const totals = await first.locator(".totals").innerText();
    const total = 6 + 2 + writes.length;
    expect(totals).toBe(`${total} requests, ${2 + limited} errors, ${limited} rate-limited in 14 days`);
    const today = utcDay();
    expect(await first.locator(`svg.chart g.day[data-day="${today}"]`).getAttribute("data-requests")).toBe(
      String(total),
    );
    const row = await first.locator("tbody tr").first().innerText();
    expect(row).toContain(today);
    expect(row).toContain("404×2");
    expect(row).toContain(`429×${limited}`);
    expect(row).toMatch(/≤ \d+ ms/); // latency percentiles
    expect(await page.locator("section.key").nth(1).locator(".totals").innerText()).toBe(
      "3 requests, 0 errors, 0 rate-limited in 14 days",
    );
    // the same numbers as JSON
    // (the page's CSP allows it no requests: ask with the browser context's cookies instead)
    const data = (await (await context.request.get(`${t.url}/api/me/usage`)).json()) as {
      keys: { days: Record<string, unknown>[] }[];
    };
    const day = data.keys[0]!.days.at(-1);
    expect(day).toMatchObject({
      day: today,
      requests: total,
      rateLimited: limited,
      errors: { "404": 2, "429": limited },
    });
    await context.close();
  });

  it("without a session it asks to sign in and shows nothing", async () => {
    const page = await browser.newPage();
    await page.goto(`${t.url}/dashboard`);
    expect(await page.locator("body").innerText()).toContain("Sign in on the key page");
    expect(await page.locator("section.key").count()).toBe(0);
    await page.close();
  });
});

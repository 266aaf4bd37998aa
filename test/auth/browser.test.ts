// The whole sign-in through a real browser: headless Chromium (Debian's package) driven by
// playwright-core, against the in-process OpenID provider. The key page (sign in, mint a key, use it,
// revoke it, see it rejected, CSRF), and `txtfs login` with the browser playing its part.
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { runTxtfs, spawnLogin } from "../helpers/cli.ts";
import { expectError, startTestServer, type TestServer } from "../helpers/server.ts";

const CHROMIUM = "/usr/bin/chromium";
let browser: Browser;
let srv: TestServer;
let configDir: string;

beforeAll(async () => {
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--no-sandbox", "--disable-dev-shm-usage"],
  });
  // Access tokens live 30 s (below the CLI's 60 s refresh margin): each CLI use refreshes first.
  srv = await startTestServer({ devIdp: { accessTokenTtl: 30 } });
  configDir = mkdtempSync(join(tmpdir(), "txtfs-browser-"));
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await srv?.close();
  if (configDir) rmSync(configDir, { recursive: true, force: true });
});

async function signInAt(page: Page, user: string) {
  await page.fill("#login", user);
  await page.fill("#password", `${user}-password`);
  await Promise.all([page.waitForLoadState("load"), page.click("#sign-in")]);
}

describe("the key page in Chromium", () => {
  test("sign in, mint a key, use it, revoke it, see it rejected", async () => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(`${srv.url}/keys`);
      await page.click("#sign-in"); // -> the provider's login page
      expect(page.url()).toContain("/dev-idp/interaction/");
      await signInAt(page, "alice");
      await page.waitForURL(`${srv.url}/keys`);
      expect(await page.textContent("#who")).toBe("alice@dev.txtfs.test");

      // The session cookie is HttpOnly: scripts in the page cannot read it.
      expect(await page.evaluate("document.cookie")).not.toContain("session=");
      const cookies = await context.cookies(srv.url);
      const session = cookies.find((c) => c.name === "session")!;
      expect(session.httpOnly).toBe(true);
      expect(session.sameSite).toBe("Lax");

      await page.fill("#label", "browser key");
      await page.check('input[name="scopes"][value="files:read"]');
      await Promise.all([page.waitForLoadState("load"), page.click("#mint-key")]);
      const key = (await page.textContent("#new-key"))!.trim();
      expect(key).toMatch(/^txt_[0-9A-Za-z]{36}$/);

      const me = await srv.client(key).get("/api/me");
      expect(me.status).toBe(200);
      expect(me.body.user.email).toBe("alice@dev.txtfs.test");
      expect(me.body.identity).toMatchObject({ provider: "dev", subject: "alice" });

      // Listed by prefix (never in full) with its use counted.
      await page.goto(`${srv.url}/keys`);
      const row = page.locator(`tr[data-prefix="${key.slice(0, 12)}"]`);
      expect(await row.locator(".status").textContent()).toBe("active");
      expect(await page.content()).not.toContain(key);

      await Promise.all([page.waitForURL(`${srv.url}/keys`), row.locator("button.revoke").click()]);
      expect(await page.locator(`tr[data-prefix="${key.slice(0, 12)}"] .status`).textContent()).toBe(
        "revoked",
      );
      expectError(await srv.client(key).get("/api/me"), 401, "api_key_revoked");
    } finally {
      await context.close();
    }
  });

  test("a form without its CSRF token is refused (403 csrf_failed) and mints nothing", async () => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(`${srv.url}/auth/login`);
      await signInAt(page, "bob");
      await page.waitForURL(`${srv.url}/keys`);
      const before = await page.locator("#keys tr[data-key-id]").count();
      await page.evaluate(`document.querySelector('#mint input[name="_csrf"]').remove()`);
      const [response] = await Promise.all([
        page.waitForResponse(`${srv.url}/keys`),
        page.click("#mint-key"),
      ]);
      expect(response.status()).toBe(403);
      expect((await response.json()).error.code).toBe("csrf_failed");
      await page.goto(`${srv.url}/keys`);
      expect(await page.locator("#keys tr[data-key-id]").count()).toBe(before);
    } finally {
      await context.close();
    }
  });
});

test("txtfs login in the browser, then expiry and refresh", async () => {
  const env = { TXTFS_CONFIG: configDir, TXTFS_URL: "" };
  const login = await spawnLogin(["--url", srv.url], env);
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(login.authUrl);
    await signInAt(page, "carol");
    await page.waitForURL(/^http:\/\/127\.0\.0\.1:\d+\/callback\?/);
    expect(await page.textContent("h1")).toBe("Signed in");
  } finally {
    await context.close();
  }
  expect(await login.exited).toBe(0);
  expect(login.stdout()).toContain("as carol@dev.txtfs.test");
  const file = join(configDir, "config.json");
  expect(statSync(file).mode & 0o777).toBe(0o600);
  const first = JSON.parse(readFileSync(file, "utf8")).signIn;
  expect(Date.parse(first.expiresAt) - Date.now()).toBeLessThanOrEqual(30_000);

  // The stored token is about to expire: whoami refreshes it before using it.
  const who = await runTxtfs(["whoami"], env);
  expect(who.code, who.stderr).toBe(0);
  expect(who.stdout).toContain("carol@dev.txtfs.test via dev:carol");
  const second = JSON.parse(readFileSync(file, "utf8")).signIn;
  expect(second.accessToken).not.toBe(first.accessToken);
  expect(Date.parse(second.expiresAt)).toBeGreaterThan(Date.parse(first.expiresAt));
  expect((await srv.client(second.accessToken).get("/api/me")).body.identity.subject).toBe("carol");

  expect((await runTxtfs(["logout"], env)).stdout).toContain("tokens revoked");
});

// One-time sign-in links in local use (no identity provider): `txtfs open keys|dashboard|playground`
// with the first user's all-scopes key gives a link that signs a real browser (headless Chromium) in
// and lands on a URL without the token; the link works once, expires, is refused to a key without
// every scope, and never appears in the server's request log.
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { runTxtfs, type ServeProcess, spawnServe } from "../helpers/cli.ts";

const CHROMIUM = "/usr/bin/chromium";
let browser: Browser;
let srv: ServeProcess;
let key: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--no-sandbox", "--disable-dev-shm-usage"],
  });
  srv = await spawnServe(["--log-requests", "--user", "local@example.test"]);
  for (const deadline = Date.now() + 10_000; !/TXTFS_API_KEY=txt_\w+\n/.test(srv.stdout()); ) {
    if (Date.now() > deadline) throw new Error(`no first key:\n${srv.stdout()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  key = /TXTFS_API_KEY=(txt_\w+)/.exec(srv.stdout())![1]!;
  for (const deadline = Date.now() + 10_000; !srv.stdout().includes("txtfs open keys"); ) {
    if (Date.now() > deadline) throw new Error(`serve does not name txtfs open:\n${srv.stdout()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  env = { TXTFS_URL: srv.url, TXTFS_API_KEY: key, TXTFS_CONFIG: "/nonexistent-txtfs-config" };
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await srv?.stop();
});

async function link(page: string): Promise<string> {
  const res = await runTxtfs(["open", page, "--no-browser"], env);
  expect(res.code, res.stderr).toBe(0);
  const url = res.stdout.trim();
  expect(url).toMatch(new RegExp(`^${srv.url}/auth/link\\?token=[0-9A-Za-z]{43}$`));
  return url;
}

describe("one-time sign-in links", { timeout: 60_000 }, () => {
  test("txtfs open keys: the browser lands on /keys signed in, and the token is gone from the URL", async () => {
    const url = await link("keys");
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(url);
      expect(page.url()).toBe(`${srv.url}/keys`);
      expect(await page.textContent("#who")).toBe("local@example.test");
      const session = (await context.cookies(srv.url)).find((c) => c.name === "session")!;
      expect(session.httpOnly).toBe(true);
      // The same session opens the dashboard and the playground.
      await page.goto(`${srv.url}/dashboard`);
      expect(await page.content()).toContain("local@example.test");
      expect(await page.content()).not.toContain("Sign in on the");
    } finally {
      await context.close();
    }
  });

  test("dashboard and playground links land on their pages", async () => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(await link("dashboard"));
      expect(page.url()).toBe(`${srv.url}/dashboard`);
      expect(await page.content()).toContain("local@example.test");
      await page.goto(await link("playground"));
      expect(page.url()).toBe(`${srv.url}/docs`);
      const status = page.locator("#session-status");
      await status.filter({ hasText: /^Signed in/ }).waitFor();
      expect(await status.textContent()).toBe("Signed in as local@example.test.");
    } finally {
      await context.close();
    }
  });

  test("a link works once: a replay is refused and signs nobody in", async () => {
    const url = await link("keys");
    const first = await fetch(url, { redirect: "manual" });
    expect(first.status).toBe(303);
    expect(first.headers.get("location")).toBe("/keys");
    expect(first.headers.get("set-cookie")).toMatch(/^session=\w+/);
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const replay = await page.goto(url);
      expect(replay!.status()).toBe(400);
      expect(JSON.parse(await replay!.text()).error.code).toBe("sign_in_failed");
      expect((await context.cookies(srv.url)).some((c) => c.name === "session")).toBe(false);
      await page.goto(`${srv.url}/keys`);
      expect(await page.locator("#who").count()).toBe(0);
    } finally {
      await context.close();
    }
  });

  test("an expired link is refused; a made-up one too", async () => {
    const minted = await fetch(`${srv.url}/api/me/session/link`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ page: "keys", expiresIn: 1 }),
    });
    expect(minted.status).toBe(201);
    const body = (await minted.json()) as { path: string; expiresAt: string };
    while (Date.now() <= Date.parse(body.expiresAt)) await new Promise((r) => setTimeout(r, 50));
    const late = await fetch(srv.url + body.path, { redirect: "manual" });
    expect(late.status).toBe(400);
    expect(late.headers.get("set-cookie")).toBeNull();
    const made = await fetch(`${srv.url}/auth/link?token=${"a".repeat(43)}`, { redirect: "manual" });
    expect(made.status).toBe(400);
    const tooLong = await fetch(`${srv.url}/api/me/session/link`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ expiresIn: 3600 }),
    });
    expect(tooLong.status).toBe(400);
  });

  test("a key without every scope gets no link (403, one line); no key, 401", async () => {
    const data = /\(data: (\S+)\)/.exec(srv.stdout())![1]!;
    const added = await runTxtfs([
      "admin",
      "key",
      "add",
      "local@example.test",
      "--scopes",
      "files:read,files:write",
      "--data",
      data,
    ]);
    expect(added.code, added.stderr).toBe(0);
    const narrow = added.stdout.trim().split("\n").at(-1)!;
    const res = await runTxtfs(["open", "keys", "--no-browser"], { ...env, TXTFS_API_KEY: narrow });
    expect(res.code).toBe(1);
    expect(res.stdout).toBe("");
    expect(res.stderr).toMatch(
      /^txtfs: 403 insufficient_scope: A sign-in link needs a key with every scope; this one lacks folders:read, /,
    );
    const none = await fetch(`${srv.url}/api/me/session/link`, { method: "POST" });
    expect(none.status).toBe(401);
    const page = await runTxtfs(["open", "settings"], env);
    expect(page.code).toBe(2);
    expect(page.stderr).toBe("txtfs: no page settings: use one of keys, dashboard, playground\n");
  });

  test("the server's request log has the link's path, never its token", async () => {
    const url = await link("keys");
    const token = new URL(url).searchParams.get("token")!;
    expect((await fetch(url, { redirect: "manual" })).status).toBe(303);
    for (const deadline = Date.now() + 10_000; !srv.stderr().includes('"url":"/auth/link"'); ) {
      if (Date.now() > deadline) throw new Error(`no request line for /auth/link:\n${srv.stderr()}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(srv.stderr()).not.toContain(token);
    expect(srv.stderr()).not.toContain("token=");
  });
});

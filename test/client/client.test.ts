// The dependency-free TypeScript client against a real server: the very file the server serves at
// /client/txtfs.js, in Node and in headless Chromium; and its generated parts are current.
import { readFileSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLIENT_DIR, clientJs, clientTypes } from "../../scripts/clientTypes.ts";
import { startTestServer, type TestServer, type TestUser } from "../helpers/server.ts";

const { Txtfs, TxtfsError } = (await import(
  new URL("dist/txtfs.js", CLIENT_DIR).href
)) as typeof import("../../clients/typescript/src/index.ts");

let t: TestServer;
let alice: TestUser;

/** A fetch that records every status it sees. */
function recording() {
  const statuses: number[] = [];
  const f: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    statuses.push(res.status);
    return res;
  };
  return { statuses, fetch: f };
}

beforeAll(async () => {
  t = await startTestServer();
  alice = await t.user();
});
afterAll(() => t.close());

describe("generated parts", () => {
  it("types, module and document are current (npm run gen:client regenerates them)", async () => {
    const doc = t.server.openapi();
    expect(readFileSync(new URL("openapi.json", CLIENT_DIR), "utf8")).toBe(
      `${JSON.stringify(doc, null, 2)}\n`,
    );
    expect(readFileSync(new URL("src/openapi.ts", CLIENT_DIR), "utf8")).toBe(await clientTypes(doc));
    expect(readFileSync(new URL("dist/txtfs.js", CLIENT_DIR), "utf8")).toBe(clientJs());
  });

  it("the server serves that module as JavaScript, and it imports nothing", async () => {
    const res = await fetch(`${t.url}/client/txtfs.js`);
    expect(res.headers.get("content-type")).toMatch(/^text\/javascript/);
    const js = await res.text();
    expect(js).toBe(readFileSync(new URL("dist/txtfs.js", CLIENT_DIR), "utf8"));
    expect(js).not.toMatch(/^\s*import\s/m);
  });
});

describe("in Node", () => {
  it("creates, reads with ETag revalidation (304 from then on), and pages through files", async () => {
    const rec = recording();
    const c = new Txtfs({ baseUrl: t.url, token: alice.key, fetch: rec.fetch });
    const made = [];
    for (let i = 0; i < 5; i++) made.push(await c.create({ name: `p${i}.md`, content: `n${i}` }));
    rec.statuses.length = 0;
    expect((await c.read(made[0]!.id)).content).toBe("n0");
    expect((await c.read(made[0]!.id)).content).toBe("n0");
    expect(rec.statuses).toEqual([304, 304]); // create primed the cache: both reads revalidated
    rec.statuses.length = 0;
    const names = [];
    for await (const f of c.files({ limit: 2 })) names.push(f.name);
    expect(names.sort()).toEqual(["p0.md", "p1.md", "p2.md", "p3.md", "p4.md"]);
    expect(rec.statuses).toEqual([200, 200, 200]); // three pages of at most two
    expect(await c.raw(made[1]!.id)).toBe("n1");
  });

  it("If-Match: a stale write is a typed 412; update() re-reads and retries", async () => {
    const c = new Txtfs({ baseUrl: t.url, token: alice.key });
    const f = await c.create({ name: "race.md", content: "a" });
    await alice.api.put(`/api/v1/files/${f.id}`, { content: "b" }); // someone else saves
    const err = await c.write(f.id, { content: "mine" }, { ifMatch: true }).catch((e) => e);
    expect(err).toBeInstanceOf(TxtfsError);
    expect(err).toMatchObject({ status: 412, code: "precondition_failed" });
    expect(err.requestId).toMatch(/\S/);
    expect(err.resolution).toMatch(/\S/);
    const saved = await c.update(f.id, (cur) => ({ content: `${cur.content}+mine` }));
    expect(saved.content).toBe("b+mine");
  });

  it("a mutation whose answer is lost is retried with the same Idempotency-Key: created once", async () => {
    let calls = 0;
    const keys: string[] = [];
    const flaky: typeof fetch = async (input, init) => {
      keys.push(new Headers(init?.headers).get("idempotency-key") ?? "");
      const res = await fetch(input, init);
      if (++calls === 1) throw new TypeError("fetch failed (connection reset)");
      return res;
    };
    const c = new Txtfs({ baseUrl: t.url, token: alice.key, fetch: flaky });
    const f = await c.create({ name: "once.md", content: "x" });
    expect(keys).toHaveLength(2);
    expect(keys[0]).toBe(keys[1]);
    const all = (await alice.api.get("/api/v1/files?limit=1000")).body.files;
    expect(
      all.filter((x: { name: string }) => x.name === "once.md").map((x: { id: string }) => x.id),
    ).toEqual([f.id]);
  });

  it("429 is retried after Retry-After", async () => {
    const limited = await startTestServer({ rateLimit: { limit: 10, windowSeconds: 2 } });
    try {
      const u = await limited.user();
      const rec = recording();
      const c = new Txtfs({ baseUrl: limited.url, token: u.key, fetch: rec.fetch });
      await c.create({ name: "a.md" }); // 5 points
      await c.create({ name: "b.md" }); // 10
      const started = Date.now();
      await c.create({ name: "c.md" }); // over the limit: waits for the window, then succeeds
      expect(rec.statuses).toContain(429);
      expect(rec.statuses.at(-1)).toBe(201);
      expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    } finally {
      await limited.close();
    }
  });

  it("follows the change feed: history first, then long-polled new changes, until aborted", async () => {
    const bob = await t.user();
    const c = new Txtfs({ baseUrl: t.url, token: bob.key });
    await c.create({ name: "before.md" });
    const abort = new AbortController();
    const seen: string[] = [];
    const following = (async () => {
      for await (const ch of c.follow({ cursor: 0, wait: 10, signal: abort.signal })) {
        seen.push(ch.file?.name ?? ch.id);
        if (seen.length === 2) abort.abort();
      }
    })();
    await new Promise((r) => setTimeout(r, 300)); // the follower is now waiting in a long-poll
    await bob.api.post("/api/v1/files", { name: "after.md" });
    await following;
    expect(seen).toEqual(["before.md", "after.md"]);
    expect(c.cursor).toBeGreaterThan(0);
  });
});

describe("in headless Chromium", () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await chromium.launch({
      executablePath: "/usr/bin/chromium",
      args: ["--no-sandbox", "--disable-dev-shm-usage"],
    });
  }, 60_000);
  afterAll(() => browser?.close());

  it("imports /client/txtfs.js from the server and creates, lists and reads", async () => {
    const page = await browser.newPage();
    await page.goto(`${t.url}/llms.txt`);
    // A string, not a function: the test runner would rewrite a function's import().
    const out = (await page.evaluate(`(async () => {
      const { Txtfs } = await import("/client/txtfs.js");
      const c = new Txtfs({ baseUrl: location.origin, token: ${JSON.stringify(alice.key)} });
      const f = await c.create({ name: "browser.md", content: "from chromium" });
      const names = [];
      for await (const x of c.files()) names.push(x.name);
      const again = await c.read(f.id);
      let code = "";
      try {
        await c.read("f_nope");
      } catch (e) {
        code = e.status + " " + e.code + " " + (e instanceof Error);
      }
      return { names, content: again.content, code };
    })()`)) as { names: string[]; content: string; code: string };
    expect(out.names).toContain("browser.md");
    expect(out.content).toBe("from chromium");
    expect(out.code).toBe("404 not_found true");
    await page.close();
  });
});

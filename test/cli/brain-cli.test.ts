// txtfs ideate / context / transcribe / render / admin user plan against a real server whose AI
// provider is the stand-in on loopback; every failure status is one clear line.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { operatorOf, setAiKey, setPlan } from "../helpers/brain.ts";
import { runTxtfs } from "../helpers/cli.ts";
import { type FakeOpenAi, startFakeOpenAi } from "../helpers/fakeOpenAi.ts";
import { mkdir, mkfile, startTestServer, type TestServer, type TestUser } from "../helpers/server.ts";

let fake: FakeOpenAi;
let t: TestServer;
let me: TestUser;
const dir = mkdtempSync(join(tmpdir(), "txtfs-brain-cli-"));
const env = (u: TestUser) => ({ TXTFS_URL: t.url, TXTFS_API_KEY: u.key, TXTFS_CONFIG: dir });

beforeAll(async () => {
  fake = await startFakeOpenAi();
  t = await startTestServer({ brain: operatorOf(fake) });
  me = await t.user();
});
afterAll(async () => {
  await t.close();
  await fake.close();
});

describe("txtfs brain commands", { timeout: 60_000 }, () => {
  it("ideate: 402 is one clear line; after `admin user plan EMAIL pro` it creates the note", async () => {
    await mkfile(me, { name: "kites.md", content: "kite flying in wind" });
    const denied = await runTxtfs(["ideate", "kites"], env(me));
    expect(denied.code).toBe(1);
    expect(denied.stderr).toMatch(/^the brain is writing…\ntxtfs: 402 ai_key_required: /);
    expect(denied.stderr).not.toMatch(/\n\s+at /);
    const plan = await runTxtfs([
      "admin",
      "user",
      "plan",
      me.email,
      "pro",
      "--data",
      t.dataDir,
      ...(t.db ? ["--db", t.db] : []),
    ]);
    expect(plan.stdout.trim()).toBe(`${me.email}\tpro`);
    const res = await runTxtfs(["ideate", "kites"], env(me));
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(
      /^created Ideas\/Growing kites\.md \(f_\w+\)\n {2}connected to kites\.md: builds on kites\.md\n/,
    );
    expect(res.stderr).toContain("the brain is writing");
  });

  it("context: figures, --analyze proposals, --accept applies them", async () => {
    const fig = await runTxtfs(["context"], env(me));
    expect(fig.stdout).toMatch(/^\d+ notes, 1 folders/);
    const noKey = await runTxtfs(["context", "--analyze"], env(me));
    expect(noKey.stderr).toMatch(/\ntxtfs: 409 ai_not_activated: /);
    await setAiKey(t, me, "sk-cli-key-00000000", { baseUrl: fake.baseUrl });
    const an = await runTxtfs(["context", "--analyze", "kites"], env(me));
    expect(an.code, an.stderr).toBe(0);
    const id = /^(prop_\w+)\tfile_context/m.exec(an.stdout)![1]!;
    const acc = await runTxtfs(["context", "--accept", id], env(me));
    expect(acc.stdout.trim()).toBe(`${id}\taccepted`);
  });

  it("transcribe and render", async () => {
    const d = await mkdir(me, { name: "Memos" });
    const memo = join(dir, "memo.m4a");
    writeFileSync(memo, Buffer.alloc(100, 1));
    const tr = await runTxtfs(["transcribe", memo, "--folder", "Memos", "--tags", "voice"], env(me));
    expect(tr.code, tr.stderr).toBe(0);
    expect(tr.stdout).toMatch(
      /^created Remember to call the plumber on Monday\.md \(f_\w+\) from audio with whisper-fake/,
    );
    expect((await me.api.get(`/api/v1/folders/${d.id}`)).body.files).toHaveLength(1);
    const r = await runTxtfs(["render", "mermaid", "Memos"], env(me));
    expect(r.stdout).toMatch(/^flowchart LR\n {2}n1\["Remember to call the plumber on Monday\.md"\]\n$/);
    const bad = await runTxtfs(["transcribe", join(dir, "notes.txt")], env(me));
    expect(bad.stderr).toMatch(/^txtfs: cannot tell the type of notes\.txt/);
  });

  it("429 and 502 are one line with the retry time or the provider's host", async () => {
    const u = await t.user();
    await setPlan(t, u, "pro");
    fake.fail(429, 1, 9);
    const limited = await runTxtfs(["ideate", "x"], env(u));
    expect(limited.stderr).toMatch(/\ntxtfs: 429 ai_provider_rate_limited: .* \(retry after 9 s\)\n/);
    fake.fail(500, 3);
    const failed = await runTxtfs(["ideate", "x"], env(u));
    expect(failed.stderr).toMatch(
      new RegExp(
        `\\ntxtfs: 502 ai_provider_error: The AI provider ${new URL(fake.url).host} failed \\(HTTP 500\\)`,
      ),
    );
  });
});

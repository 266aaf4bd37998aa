// txtfs ideate / context / transcribe / render / admin user plan against a real server whose AI
// provider is the stand-in on loopback; every failure status is one clear line.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { operatorOf, setAiKey, setPlan } from "../helpers/brain.ts";
import { BIN, runTxtfs } from "../helpers/cli.ts";
import { type FakeOpenAi, startFakeOpenAi } from "../helpers/fakeOpenAi.ts";
import { lacking } from "../helpers/kernel.ts";
import { mountFixture, q, sh } from "../helpers/mount.ts";
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

describe.skipIf(lacking("fuse"))(
  "brain commands name notes by their path in a mount",
  { timeout: 60_000 },
  () => {
    const m = mountFixture();
    afterAll(() => m.close());

    it("render and ideate --grow take a path inside the mount, as pin does", async () => {
      const mounted = await m.start();
      const menv = { TXTFS_URL: mounted.url, TXTFS_API_KEY: mounted.key, TXTFS_CONFIG: m.dirs.config };
      expect((await m.sh("mkdir -p plans && printf 'kites\\n' > plans/kite.md")).code).toBe(0);
      const note = join(m.dirs.mnt, "plans", "kite.md");

      const rendered = await runTxtfs(["render", "mermaid", note], menv);
      expect(rendered.stderr).toBe("");
      expect(rendered.stdout).toBe('flowchart LR\n  n1["kite.md"]\n');
      const folder = await runTxtfs(["render", "mermaid", join(m.dirs.mnt, "plans")], menv);
      expect(folder.stdout).toBe(rendered.stdout);
      // Relative to a working directory inside the mount, as a shell user types it.
      const vars = Object.entries(menv)
        .map(([k, v]) => `${k}=${q(v)}`)
        .join(" ");
      const here = await sh(`${vars} ${q(process.execPath)} ${q(BIN)} render mermaid kite.md`, {
        cwd: join(m.dirs.mnt, "plans"),
      });
      expect(here.stderr).toBe("");
      expect(here.stdout).toBe(rendered.stdout);
      // The note is found: the service answers (this account has no AI provider), not "no note".
      const grow = await runTxtfs(["ideate", "--grow", note], menv);
      expect(grow.stderr).toMatch(/txtfs: 402 ai_key_required/);
      expect(grow.stderr).not.toMatch(/no note/);

      // A mount of another service: the same path would be another note there.
      const other = await runTxtfs(["render", "mermaid", note], { ...menv, TXTFS_URL: "http://127.0.0.1:9" });
      expect(other.code).toBe(1);
      expect(other.stderr).toBe(
        `txtfs: ${note} is in the mount of ${mounted.url}, but this command talks to http://127.0.0.1:9: set TXTFS_URL (and its key) to that service, or give the note's account path\n`,
      );
    });
  },
);

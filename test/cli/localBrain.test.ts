// Local use turns the brain on from the command line: `txtfs mount --serve --ai-base-url URL
// --ai-model NAME` points the in-process service at an OpenAI-compatible provider (here the stand-in
// on loopback), and `txtfs ideate` works next with the key the mount printed.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runTxtfs } from "../helpers/cli.ts";
import { type FakeOpenAi, startFakeOpenAi } from "../helpers/fakeOpenAi.ts";
import { lacking } from "../helpers/kernel.ts";
import {
  type MountDirs,
  makeMountDirs,
  removeMountDirs,
  sh,
  startMount,
  txtfsEnv,
} from "../helpers/mount.ts";

let fake: FakeOpenAi;
const made: MountDirs[] = [];

beforeAll(async () => {
  fake = await startFakeOpenAi();
});
afterAll(async () => {
  await fake?.close();
  for (const d of made) await removeMountDirs(d);
});

const dirs = () => {
  const d = makeMountDirs("txtfs-local-brain-");
  made.push(d);
  return d;
};

describe.skipIf(lacking("fuse"))("the brain in local use", { timeout: 90_000 }, () => {
  it("mount --serve --ai-base-url --ai-model: ideate writes a note with the provider's answer", async () => {
    const d = dirs();
    // The provider's key from a 0600 file, never from the command line.
    const keyFile = join(d.base, "ai.key");
    writeFileSync(keyFile, "sk-local-provider-key\n", { mode: 0o600 });
    fake.acceptKeys = ["sk-local-provider-key"];
    const m = await startMount(d, {
      args: ["--ai-base-url", fake.baseUrl, "--ai-model", "fake-chat", "--ai-key-file", keyFile],
    });
    try {
      expect((await sh("printf 'kite flying in wind\\n' > kites.md", { cwd: m.mnt })).code).toBe(0);
      expect((await runTxtfs(["sync", m.mnt], txtfsEnv(d))).code).toBe(0);
      const env = { ...txtfsEnv(d), TXTFS_URL: m.url, TXTFS_API_KEY: m.key };
      const res = await runTxtfs(["ideate", "kites"], env);
      expect(res.code, res.stderr).toBe(0);
      expect(res.stdout).toMatch(/^created Ideas\/Growing kites\.md \(f_\w+\)\n/);
      // The provider was asked with the model given on the command line.
      expect(fake.chats().at(-1)?.model).toBe("fake-chat");
      expect(fake.requests.at(-1)?.authorization).toBe("Bearer sk-local-provider-key");
      // The note is in the mount too.
      const cat = await sh("cat 'Ideas/Growing kites.md'", { cwd: m.mnt });
      expect(cat.code, cat.stderr).toBe(0);
      // With nothing exported, `txtfs open` finds the service the mount runs on its data dir.
      const open = await runTxtfs(["open", "keys", "--no-browser"], {
        ...txtfsEnv(d),
        TXTFS_URL: "",
        TXTFS_API_KEY: "",
      });
      expect(open.code, open.stderr).toBe(0);
      expect(open.stdout).toMatch(new RegExp(`^${m.url}/auth/link\\?token=\\w{43}\n$`));
      const signedIn = await fetch(open.stdout.trim(), { redirect: "manual" });
      expect(signedIn.status).toBe(303);
      expect(signedIn.headers.get("set-cookie")).toMatch(/^session=/);
    } finally {
      await m.stop();
      fake.acceptKeys = null;
    }
  });

  it("without --ai-*: ideate's 402 names the flags that turn the brain on", async () => {
    const d = dirs();
    const m = await startMount(d);
    try {
      const env = { ...txtfsEnv(d), TXTFS_URL: m.url, TXTFS_API_KEY: m.key };
      const res = await runTxtfs(["ideate", "kites"], env);
      expect(res.code).toBe(1);
      expect(res.stderr).toMatch(/txtfs: 402 ai_key_required: /);
      expect(res.stderr).toContain("txtfs mount --serve --ai-base-url URL --ai-model NAME");
    } finally {
      await m.stop();
    }
  });

  it("bad --ai-* options are one line, exit 2, and nothing is mounted", async () => {
    const d = dirs();
    const cases: [string[], RegExp][] = [
      [["--serve", "--ai-base-url", "not a url", "--ai-model", "m"], /--ai-base-url not a url is not a URL/],
      [["--serve", "--ai-base-url", fake.baseUrl], /--ai-base-url needs --ai-model/],
      [
        ["--serve", "--ai-base-url", fake.baseUrl, "--ai-model", "m", "--ai-key-file", "/nonexistent/ai.key"],
        /--ai-key-file \/nonexistent\/ai\.key: ENOENT/,
      ],
      [
        ["--url", "http://127.0.0.1:1", "--ai-base-url", fake.baseUrl, "--ai-model", "m"],
        /--ai-\* options need --serve/,
      ],
    ];
    for (const [args, message] of cases) {
      const res = await runTxtfs(["mount", d.mnt, ...args], txtfsEnv(d));
      expect(res.code, res.stderr).toBe(2);
      expect(res.stderr.trim().split("\n")).toHaveLength(1);
      expect(res.stderr).toMatch(message);
    }
    expect((await sh(`grep -c ' ${d.mnt} ' /proc/mounts || true`)).stdout.trim()).toBe("0");
  });
});

// The client's README, run as written: its Node snippet (extracted from the README here) runs with
// node against a real server, once through `npm install` of the package folder and once through
// the file the server serves; and an http: import really is what Node refuses.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../helpers/cli.ts";
import { startTestServer, type TestServer, type TestUser } from "../helpers/server.ts";

const README = readFileSync(join(ROOT, "clients/typescript/README.md"), "utf8");
const section = README.split("## In Node")[1]!.split("\n## ")[0]!;
const [install, example] = [...section.matchAll(/```(?:sh|js)\n([\s\S]*?)```/g)].map((m) => m[1]!);
const [npmLine, curlLine] = install!.trim().split("\n");

let t: TestServer;
let me: TestUser;
const dirs: string[] = [];

function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
    execFile(cmd, args, { cwd, env: { ...process.env, ...env }, timeout: 60_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    ),
  );
}

function project(): string {
  const dir = mkdtempSync(join(tmpdir(), "txtfs-client-readme-"));
  dirs.push(dir);
  writeFileSync(join(dir, "package.json"), '{"name":"example","private":true,"type":"module"}\n');
  return dir;
}

beforeAll(async () => {
  t = await startTestServer();
  me = await t.user();
});
afterAll(async () => {
  await t.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe("the client's README", { timeout: 120_000 }, () => {
  it("has an install block and a Node example", () => {
    expect(npmLine).toMatch(/^npm install \/path\/to\/txtfs\/clients\/typescript /);
    expect(curlLine).toMatch(/^curl -sO "\$TXTFS_URL\/client\/txtfs\.js" /);
    expect(example).toContain('from "@txtfs/client"');
  });

  const expectRan = (res: { code: number; stdout: string; stderr: string }) => {
    expect(res.code, res.stderr).toBe(0);
    const lines = res.stdout.trim().split("\n");
    expect(lines).toContain("idea.md");
    expect(lines.at(-2)).toMatch(/^\w+ f_\w+$/); // a change from the feed
    expect(lines.at(-1)).toBe("404 not_found");
  };

  it("npm install of the package folder, then the example as written", async () => {
    const dir = project();
    // The README's one placeholder: where the clone is.
    const [cmd, ...args] = npmLine!.split("#")[0]!.trim().replace("/path/to/txtfs", ROOT).split(" ");
    const installed = await run(cmd!, args, dir, { npm_config_audit: "false", npm_config_fund: "false" });
    expect(installed.code, installed.stderr).toBe(0);
    writeFileSync(join(dir, "example.mjs"), example!);
    expectRan(await run(process.execPath, ["example.mjs"], dir, { TXTFS_URL: t.url, TXTFS_API_KEY: me.key }));
  });

  it("the served file, downloaded as written, then the example importing ./txtfs.js", async () => {
    const dir = project();
    const env = { TXTFS_URL: t.url, TXTFS_API_KEY: me.key };
    const got = await run("bash", ["-c", curlLine!], dir, env);
    expect(got.code, got.stderr).toBe(0);
    writeFileSync(join(dir, "example.mjs"), example!.replace('"@txtfs/client"', '"./txtfs.js"'));
    expectRan(await run(process.execPath, ["example.mjs"], dir, env));
  });

  it("an http: import is refused by Node, as the README says", async () => {
    const dir = project();
    writeFileSync(join(dir, "http.mjs"), `import { Txtfs } from "${t.url}/client/txtfs.js";\n`);
    const res = await run(process.execPath, ["http.mjs"], dir);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain("ERR_UNSUPPORTED_ESM_URL_SCHEME");
  });
});

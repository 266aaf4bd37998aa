// The txtfs binary: serve (first user, graceful shutdown), admin commands, and the launcher.
import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterEach, describe, expect, it } from "vitest";
import { BIN, runTxtfs, type ServeProcess, spawnServe } from "../helpers/cli.ts";
import { Api } from "../helpers/server.ts";

const dirs: string[] = [];
const servers: ServeProcess[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), "txtfs-cli-"));
  dirs.push(d);
  return d;
};

afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("txtfs serve", () => {
  it("creates and prints a first user and key once, which work against the API", async () => {
    const data = tempDir();
    const s = await spawnServe(["--data", data, "--user", "ada@example.com"]);
    servers.push(s);
    await new Promise((r) => setTimeout(r, 200));
    const key = /TXTFS_API_KEY=(txt_\w+)/.exec(s.stdout())?.[1];
    expect(key).toBeTruthy();
    expect(s.stdout()).toContain("ada@example.com");
    const me = await new Api(s.url, key).get("/api/me");
    expect(me.status).toBe(200);
    expect(me.body.user.email).toBe("ada@example.com");
    expect(await s.stop()).toBe(0);

    // a second start on the same store prints no new key
    const again = await spawnServe(["--data", data]);
    servers.push(again);
    await new Promise((r) => setTimeout(r, 200));
    expect(again.stdout()).not.toContain("TXTFS_API_KEY");
    expect((await new Api(again.url, key).get("/api/me")).status).toBe(200);
  });

  it("SIGTERM lets in-flight requests finish, exits 0 and leaves a clean store", async () => {
    const data = tempDir();
    const s = await spawnServe(["--data", data]);
    servers.push(s);
    await new Promise((r) => setTimeout(r, 200));
    const api = new Api(s.url, /TXTFS_API_KEY=(txt_\w+)/.exec(s.stdout())![1]);
    await api.post("/api/v1/files", { name: "kept.md", content: "still here" });
    // a long-poll is in flight when the signal arrives: it must get its (empty) answer
    const longPoll = api.get("/api/v1/changes?cursor=latest&wait=30");
    await new Promise((r) => setTimeout(r, 300));
    const started = Date.now();
    s.child.kill("SIGTERM");
    const res = await longPoll;
    expect(res.status).toBe(200);
    expect(res.body.changes).toEqual([]);
    expect(await s.exited).toBe(0);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(s.stderr()).toContain("stopped cleanly");
    expect(s.stderr()).not.toMatch(/\n\s+at /); // no stack traces
    // new connections are refused once it is down
    await expect(fetch(`${s.url}/api/v1`)).rejects.toThrow();
    const db = new DatabaseSync(join(data, "txtfs.db"));
    expect(db.prepare("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
    expect(db.prepare("SELECT content FROM files").all()).toEqual([{ content: "still here" }]);
    db.close();
  });

  it("counts requests_today and last_used_at per key (flushed at shutdown at the latest)", async () => {
    const data = tempDir();
    const s = await spawnServe(["--data", data]);
    servers.push(s);
    await new Promise((r) => setTimeout(r, 200));
    const api = new Api(s.url, /TXTFS_API_KEY=(txt_\w+)/.exec(s.stdout())![1]);
    for (let i = 0; i < 3; i++) expect((await api.get("/api/me")).status).toBe(200);
    expect(await s.stop()).toBe(0);
    const list = await runTxtfs(["admin", "key", "list", "--data", data]);
    const row = list.stdout.trim().split("\n")[1]!.split("\t");
    expect(row[7]).toBe("3"); // requests today
    expect(Date.now() - Date.parse(row[6]!)).toBeLessThan(60_000); // last used
  });

  it("refuses a port in use with a clear message", async () => {
    const s = await spawnServe(["--data", tempDir()]);
    servers.push(s);
    const port = new URL(s.url).port;
    const r = await runTxtfs(["serve", "--port", port, "--data", tempDir()]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/EADDRINUSE|in use/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it("rejects bad options without a stack trace", async () => {
    const r = await runTxtfs(["serve", "--port", "nope"]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("port");
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});

describe("txtfs admin", () => {
  it("adds users and keys; the key is alone on the last line and works; revoke stops it", async () => {
    const data = tempDir();
    const add = await runTxtfs([
      "admin",
      "user",
      "add",
      "grace@example.com",
      "--name",
      "Grace",
      "--data",
      data,
    ]);
    expect(add.code).toBe(0);
    expect(add.stdout.trim()).toMatch(/^u_[0-9A-Z]{26}$/);
    const dup = await runTxtfs(["admin", "user", "add", "grace@example.com", "--data", data]);
    expect(dup.code).toBe(1);
    expect(dup.stderr).toContain("already exists");

    const list = await runTxtfs(["admin", "user", "list", "--data", data]);
    expect(list.stdout).toContain("grace@example.com\tGrace");

    const key = await runTxtfs([
      "admin",
      "key",
      "add",
      "grace@example.com",
      "--scopes",
      "files:read,folders:read",
      "--expires",
      "30d",
      "--label",
      "ci",
      "--data",
      data,
    ]);
    expect(key.code).toBe(0);
    const lines = key.stdout.trim().split("\n");
    const secret = lines.at(-1)!;
    expect(secret).toMatch(/^txt_[0-9A-Za-z]{36}$/);
    expect(key.stdout).toContain("scopes: files:read,folders:read");
    const expires = Date.parse(/expires: (\S+)/.exec(key.stdout)![1]!);
    expect(Math.abs(expires - Date.now() - 30 * 86400_000)).toBeLessThan(60_000);

    const s = await spawnServe(["--data", data]);
    servers.push(s);
    const api = new Api(s.url, secret);
    expect((await api.get("/api/me")).status).toBe(200);
    expect((await api.post("/api/v1/files", { name: "x.md" })).status).toBe(403); // read-only scopes

    const keys = await runTxtfs(["admin", "key", "list", "grace@example.com", "--data", data]);
    const row = keys.stdout.split("\n").find((l) => l.includes(secret.slice(0, 12)))!;
    expect(row).toContain("ci");
    expect(row).toContain("active");
    const id = row.split("\t")[0]!;
    const revoke = await runTxtfs(["admin", "key", "revoke", id, "--data", data]);
    expect(revoke.code).toBe(0);
    const denied = await api.get("/api/me");
    expect(denied.status).toBe(401);
    expect(denied.body.error.code).toBe("api_key_revoked");
    expect((await runTxtfs(["admin", "key", "list", "--data", data])).stdout).toContain("revoked");
  });

  it("explains bad input: unknown user, unknown scope, bad duration, bad email", async () => {
    const data = tempDir();
    await runTxtfs(["admin", "user", "add", "h@example.com", "--data", data]);
    const noUser = await runTxtfs(["admin", "key", "add", "nobody@example.com", "--data", data]);
    expect(noUser.code).toBe(1);
    expect(noUser.stderr).toMatch(/No user/);
    const badScope = await runTxtfs([
      "admin",
      "key",
      "add",
      "h@example.com",
      "--scopes",
      "files:rule",
      "--data",
      data,
    ]);
    expect(badScope.code).toBe(1);
    expect(badScope.stderr).toContain("files:rule");
    const badDur = await runTxtfs([
      "admin",
      "key",
      "add",
      "h@example.com",
      "--expires",
      "soon",
      "--data",
      data,
    ]);
    expect(badDur.code).not.toBe(0);
    expect(badDur.stderr).toContain("duration");
    const badEmail = await runTxtfs(["admin", "user", "add", "not-an-email", "--data", data]);
    expect(badEmail.code).toBe(1);
    for (const r of [noUser, badScope, badDur, badEmail]) expect(r.stderr).not.toMatch(/\n\s+at /);
    // nothing was created by the failures
    expect((await runTxtfs(["admin", "key", "list", "--data", data])).stdout.trim().split("\n")).toHaveLength(
      1,
    );
  });
});

describe("launcher", () => {
  it("an old Node gets a clear message, not a stack trace", () => {
    const system = ["/usr/bin/node", "/usr/local/bin/node"].find((p) => existsSync(p));
    const version = system ? execFileSync(system, ["--version"]).toString().trim() : "";
    const [major, minor] = version.slice(1).split(".").map(Number);
    if (!system || major! > 22 || (major === 22 && minor! >= 13)) {
      // No old Node here (machines of this kind ship Node 20 as /usr/bin/node): the launcher runs.
      expect(spawnSync(process.execPath, [BIN, "--version"]).status).toBe(0);
      return;
    }
    // Copied away from the project, so it cannot fall back to the project's own Node 24 (and
    // without the sources beside it, it is an installed txtfs: scripts/install is the way).
    const dir = join(tempDir(), "bin");
    mkdirSync(dir);
    copyFileSync(BIN, join(dir, "txtfs"));
    const r = spawnSync(system, [join(dir, "txtfs"), "--version"]);
    expect(r.status).toBe(1);
    expect(r.stderr.toString()).toContain("Node.js >= 22.13 is required");
    expect(r.stderr.toString()).toContain("scripts/install");
    expect(r.stderr.toString()).not.toMatch(/\n\s+at /); // no stack trace
  });

  it("prints its version", async () => {
    const r = await runTxtfs(["--version"]);
    expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });
});

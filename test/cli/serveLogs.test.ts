// serve's log options: --log-file (reopened on SIGHUP, for logrotate), --log-level, --log-requests,
// and clear errors for bad --log-level / --trust-proxy values.
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runTxtfs, type ServeProcess, spawnServe } from "../helpers/cli.ts";

const dirs: string[] = [];
const servers: ServeProcess[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), "txtfs-logs-"));
  dirs.push(d);
  return d;
};
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const lines = (file: string) =>
  existsSync(file)
    ? readFileSync(file, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { level: number; msg: string; reqId?: string })
    : [];

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("txtfs serve logs", () => {
  it("--log-file takes the logs (stderr stays quiet); SIGHUP reopens it after a rotation", async () => {
    const dir = tempDir();
    const file = join(dir, "logs", "txtfs.log"); // the folder is created
    const s = await spawnServe(["--log-file", file, "--log-requests", "--log-level", "debug"]);
    servers.push(s);
    await fetch(`${s.url}/healthz`, { headers: { "x-request-id": "before-rotation" } });
    await until(() => lines(file).some((l) => l.reqId === "before-rotation"), "the request's log line");
    expect(s.stderr()).toBe("");

    renameSync(file, `${file}.1`); // what logrotate does
    s.child.kill("SIGHUP");
    await until(() => lines(file).some((l) => l.msg.includes("log file reopened")), "the reopened file");
    await fetch(`${s.url}/healthz`, { headers: { "x-request-id": "after-rotation" } });
    await until(() => lines(file).some((l) => l.reqId === "after-rotation"), "a line in the new file");
    expect(lines(`${file}.1`).some((l) => l.reqId === "after-rotation")).toBe(false);
    expect(lines(`${file}.1`).some((l) => l.reqId === "before-rotation")).toBe(true);
    // the process lived through the SIGHUP
    expect((await fetch(`${s.url}/readyz`)).status).toBe(200);
    await s.stop();
    expect(lines(file).some((l) => l.msg === "stopped cleanly")).toBe(true);
  });

  it("--log-level warn keeps info lines out; without --log-requests there is no line per request", async () => {
    const dir = tempDir();
    const warnFile = join(dir, "warn.log");
    const warn = await spawnServe(["--log-file", warnFile, "--log-level", "warn", "--log-requests"]);
    servers.push(warn);
    await fetch(`${warn.url}/healthz`, { headers: { "x-request-id": "filtered" } });
    await warn.stop();
    expect(existsSync(warnFile)).toBe(true);
    expect(lines(warnFile).filter((l) => l.level < 40)).toEqual([]); // request lines are info

    const infoFile = join(dir, "info.log");
    const info = await spawnServe(["--log-file", infoFile]);
    servers.push(info);
    await fetch(`${info.url}/healthz`, { headers: { "x-request-id": "unlogged" } });
    await info.stop();
    expect(lines(infoFile).some((l) => l.msg === "stopped cleanly")).toBe(true); // info is on
    expect(lines(infoFile).some((l) => l.reqId === "unlogged")).toBe(false);
  });

  it("stops on SIGTERM when nobody reads its stdout and stderr any more (a parent that died)", async () => {
    const s = await spawnServe([]);
    servers.push(s);
    // The reading ends close, as when the process that started it is gone: every write fails (EPIPE).
    s.child.stdout!.destroy();
    s.child.stderr!.destroy();
    s.child.kill("SIGTERM");
    const code = await Promise.race([
      s.exited,
      new Promise((r) => setTimeout(() => r("still running"), 5_000)),
    ]);
    expect(code).toBe(0);
  });

  it("explains bad --log-level and --trust-proxy values", async () => {
    const level = await runTxtfs(["serve", "--log-level", "loud"]);
    expect(level.code).not.toBe(0);
    expect(level.stderr).toMatch(
      /--log-level.*loud.*Allowed choices are fatal, error, warn, info, debug, trace, silent/s,
    );
    const proxy = await runTxtfs(["serve", "--trust-proxy", "10.0.0.0/8,not-an-address"]);
    expect(proxy.code).not.toBe(0);
    expect(proxy.stderr).toContain('"not-an-address"');
    expect(proxy.stderr).not.toMatch(/\n\s+at /);
  });
});

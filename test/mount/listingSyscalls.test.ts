// What a listing costs the daemon in system calls: a stat's owner is the vfs's, so the binding must
// not ask the kernel for the daemon's uid and gid once per entry (`find` over 100,000 notes made
// 200,000 such calls). Counted with strace attached to the real daemon while `ls -l` runs.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type MountFixture, mountFixture } from "../helpers/mount.ts";
import { waitFor } from "../helpers/webhookReceiver.ts";

const NOTES = 300;
const hasStrace = (() => {
  try {
    execFileSync("strace", ["-V"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

let m: MountFixture;

beforeAll(async () => {
  m = mountFixture();
  const mount = await m.start();
  const files = Array.from({ length: NOTES }, (_, i) => ({ path: `many/n${i}.md`, content: `# ${i}\n` }));
  const res = await mount.api.request("POST", "/api/v1/files/import", { json: { files } });
  expect(res.status).toBe(200);
  await waitFor(
    async () => (await m.sh("ls many | wc -l")).stdout.trim() === String(NOTES),
    "the imported notes in the mount",
    30_000,
  );
  // A fresh mount: the kernel has not listed the folder yet, so `ls -l` below reaches the daemon.
  await m.remount();
}, 90_000);
afterAll(() => m?.close());

describe.skipIf(!hasStrace)("a listing's system calls in the daemon", () => {
  it(`ls -l of ${NOTES} notes asks for the daemon's uid and gid at most once each, not per entry`, async () => {
    const pid = m.current.pid;
    let stderr = "";
    const strace: ChildProcess = spawn(
      "strace",
      ["-f", "-c", "-e", "trace=getuid,getgid,writev", "-p", String(pid)],
      {
        stdio: ["ignore", "ignore", "pipe"],
      },
    );
    strace.stderr!.on("data", (d: Buffer) => (stderr += d));
    const ended = new Promise<void>((done) => strace.on("exit", () => done()));
    try {
      // "Process N attached with M threads", once every thread is traced.
      await waitFor(() => /attached/.test(stderr), "strace attached", 20_000);
      const ls = await m.sh("ls -l many | grep -c '\\.md$'");
      expect(ls.stdout.trim()).toBe(String(NOTES));
    } finally {
      strace.kill("SIGINT"); // strace prints its summary and detaches
      await ended;
    }
    // strace -c's rows: % time, seconds, usecs/call, calls, [errors,] syscall; a call never made has none.
    const calls = (name: string) => {
      const row = stderr.split("\n").find((l) => l.trim().endsWith(` ${name}`));
      return row ? Number(row.trim().split(/\s+/)[3]) : 0;
    };
    expect(stderr).toMatch(/% time/); // the summary came
    // The listing reached the daemon: libfuse answers each request with one writev.
    expect(calls("writev")).toBeGreaterThan(NOTES / 50);
    expect(calls("getuid")).toBeLessThan(10);
    expect(calls("getgid")).toBeLessThan(10);
  }, 60_000);
});

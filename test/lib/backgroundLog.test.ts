// The daemons' log to stderr (src/lib/backgroundLog.ts): lines arrive whole and in order, and a
// descriptor nobody reads any more (EPIPE) ends the log instead of holding the process.
import { spawnSync } from "node:child_process";
import { closeSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BackgroundLog } from "../../src/lib/backgroundLog.ts";

const root = join(import.meta.dirname, "../..");

describe("BackgroundLog", () => {
  it("writes every line, in order, and closes once they are written", async () => {
    const file = join(tmpdir(), `txtfs-bglog-${process.pid}.log`);
    const fd = openSync(file, "w");
    try {
      const log = new BackgroundLog(fd);
      const lines = Array.from({ length: 2000 }, (_, i) => `{"n":${i},"msg":"${"x".repeat(i % 300)}"}\n`);
      for (const l of lines) expect(log.write(l)).toBe(true);
      await new Promise<void>((resolve) => log.flush(resolve));
      const closed = new Promise<void>((resolve) => log.once("close", resolve));
      log.end();
      await closed;
      expect(log.write("after the end\n")).toBe(false);
      expect(readFileSync(file, "utf8")).toBe(lines.join(""));
    } finally {
      closeSync(fd);
      rmSync(file, { force: true });
    }
  });

  it("a process whose stderr reader is gone logs, then exits at once (no endless retries)", () => {
    // A child writes to a pipe whose reading end is closed before it starts: every write fails.
    const script = `
      import { BackgroundLog } from ${JSON.stringify(join(root, "src/lib/backgroundLog.ts"))};
      const log = new BackgroundLog(2);
      for (let i = 0; i < 100; i++) log.write("a line nobody reads\\n");
      log.flushSync();
      setTimeout(() => { log.write("later\\n"); process.exit(7); }, 50);
    `;
    const started = Date.now();
    const r = spawnSync(
      "bash",
      ["-c", `exec 2> >(exit 0); sleep 0.2; exec "$NODE" --input-type=module -e "$SCRIPT"`],
      { env: { ...process.env, NODE: process.execPath, SCRIPT: script }, timeout: 20_000 },
    );
    expect(r.status).toBe(7);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});

// The terminal's rendering of pino's records: one short line each, the level word only when it
// matters, an error's message (never its stack), long values cut.
import { describe, expect, it } from "vitest";
import { readableLine } from "../../src/lib/readableLog.ts";

const rec = (fields: Record<string, unknown>) =>
  JSON.stringify({ level: 30, time: 1, pid: 2, hostname: "h", name: "txtfs-mount", ...fields });

describe("readableLine", () => {
  it("keeps the message and the fields a person needs", () => {
    expect(readableLine(rec({ msg: "Server listening at http://127.0.0.1:1" }))).toBe(
      "txtfs: Server listening at http://127.0.0.1:1\n",
    );
    expect(readableLine(rec({ msg: "unmounted", flushedMs: 2, stoppedMs: 9 }))).toBe(
      "txtfs: unmounted [flushedMs=2, stoppedMs=9]\n",
    );
  });

  it("says warning and error, and shows an error by its message", () => {
    expect(readableLine(rec({ level: 40, msg: "cleaning a stale mount", mountpoint: "/m" }))).toBe(
      "txtfs: warning: cleaning a stale mount [mountpoint=/m]\n",
    );
    const err = { type: "Error", message: "boom", stack: "Error: boom\n    at x (y.ts:1:1)" };
    expect(readableLine(rec({ level: 50, msg: "failed", err }))).toBe("txtfs: error: failed [err=boom]\n");
  });

  it("cuts long values and passes a line that is not a record through", () => {
    const line = readableLine(rec({ msg: "m", paths: Array.from({ length: 50 }, (_, i) => `note-${i}.md`) }));
    expect(line.length).toBeLessThan(160);
    expect(line).toMatch(/…\]\n$/);
    expect(readableLine("not json")).toBe("not json\n");
  });
});

// The lifecycle table is total (every state answers every event) and keeps the write path's
// promises: nothing local is ever overwritten or dropped by a remote event, and only a note that
// never left is forgotten without a request.
import { describe, expect, it } from "vitest";
import { decide, type NoteEvent, type NoteState, TRANSITIONS } from "../../src/vfs/lifecycle.ts";

const states = Object.keys(TRANSITIONS) as NoteState[];
const events: NoteEvent[] = ["close", "unlink", "remote-change", "remote-delete"];
const holdsLocalWork: NoteState[] = ["dirty", "pending-create", "pending-update", "in-flight"];

describe("lifecycle", () => {
  it("every state answers every event", () => {
    expect(states.sort()).toEqual(["clean", "dirty", "in-flight", "new", "pending-create", "pending-update"]);
    for (const s of states) for (const e of events) expect(decide(s, e), `${s} ${e}`).toBeTruthy();
  });

  it("a remote event never replaces or removes a note holding local work", () => {
    for (const s of holdsLocalWork) {
      expect(decide(s, "remote-change"), s).toBe("keep-local");
      expect(decide(s, "remote-delete"), s).toBe("keep-and-recreate");
    }
    expect(decide("clean", "remote-change")).toBe("apply-remote");
    expect(decide("clean", "remote-delete")).toBe("remove");
  });

  it("only what never left is forgotten; what may be on its way is deleted once it is there", () => {
    const forgotten = states.filter((s) => decide(s, "unlink") === "forget").sort();
    expect(forgotten).toEqual(["new", "pending-create"]);
    expect(decide("in-flight", "unlink")).toBe("settle-then-delete");
    expect(decide("dirty", "close")).toBe("save");
    expect(decide("new", "close")).toBe("save-empty");
  });
});

describe("conflict copies", () => {
  it("copies made in the same second get different names that keep the extension and fit 255 bytes", async () => {
    const { conflictName } = await import("../../src/vfs/conflicts.ts");
    const { systemClock } = await import("../../src/vfs/clock.ts");
    const names = new Set(Array.from({ length: 50 }, () => conflictName("note.md", systemClock)));
    expect(names.size).toBe(50);
    for (const n of names) expect(n).toMatch(/^note\.conflict-.+-\d{8}T\d{6}-[0-9a-z]{6}\.md$/);
    const long = conflictName(`${"é".repeat(120)}.md`, systemClock);
    expect(Buffer.byteLength(long)).toBeLessThanOrEqual(255);
    expect(long.endsWith(".md")).toBe(true);
  });
});

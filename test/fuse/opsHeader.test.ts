// native/fuse3/ops.h is generated from src/fuse/protocol.ts: the committed header must be what the
// generator writes now, or C and JavaScript disagree on an operation's number or an open flag.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { NATIVE_FH, Op, OpenFlag } from "../../src/fuse/protocol.ts";
import { OPS_HEADER_PATH, opsHeader } from "../../src/fuse/protocolHeader.ts";

const committed = () => readFileSync(OPS_HEADER_PATH, "utf8");

describe("native/fuse3/ops.h", () => {
  it("is what `npm run gen:fuse-ops` writes from src/fuse/protocol.ts", () => {
    expect(committed(), "run npm run gen:fuse-ops, then rebuild the binding (scripts/setup)").toBe(
      opsHeader(),
    );
  });

  it("says every operation's number and every open flag as protocol.ts does", () => {
    const header = committed();
    for (const [name, n] of Object.entries(Op)) expect(header).toContain(`  OP_${name} = ${n},\n`);
    for (const [name, n] of Object.entries(OpenFlag))
      expect(header).toContain(`#define OPEN_${name} ${n}u\n`);
    expect(header).toContain(`#define NATIVE_FH 0x${NATIVE_FH.toString(16)}u\n`);
  });

  it("numbers the operations once each, and the open flags as distinct bits", () => {
    const ops = Object.values(Op);
    expect(new Set(ops).size).toBe(ops.length);
    const flags = Object.values(OpenFlag);
    for (const f of flags) expect(f & (f - 1), `${f} is one bit`).toBe(0);
    expect(flags.reduce((a, f) => a | f, 0)).toBe(flags.reduce((a, f) => a + f, 0));
  });

  it("is the header the C sources take their numbers from (no other copy in them)", () => {
    const dir = new URL("../../native/fuse3/", import.meta.url);
    const c = readFileSync(new URL("txtfs_fuse3.c", dir), "utf8");
    expect(c).toContain('#include "ops.h"');
    expect(c).not.toMatch(/\bOP_LOOKUP\s*=/);
    expect(readFileSync(new URL("opens.h", dir), "utf8")).not.toMatch(/#define NATIVE_FH/);
  });
});

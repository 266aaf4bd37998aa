// The C header of protocol.ts's numbers (native/fuse3/ops.h), as `npm run gen:fuse-ops` writes it
// and test/fuse/opsHeader.test.ts compares it.
import { NATIVE_FH, Op, OpenFlag, SetAttr } from "./protocol.ts";

export const OPS_HEADER_PATH = new URL("../../native/fuse3/ops.h", import.meta.url);

export function opsHeader(): string {
  const lines = [
    "// Generated from src/fuse/protocol.ts by `npm run gen:fuse-ops`: edit that file, not this one",
    "// (test/fuse/opsHeader.test.ts fails while the two differ). protocol.ts says what each means.",
    "#pragma once",
    "#define FUSE_USE_VERSION 34",
    "#include <fuse_lowlevel.h>",
    "",
    "// The operations handed to JavaScript.",
    "enum {",
    ...Object.entries(Op).map(([name, n]) => `  OP_${name} = ${n},`),
    "};",
    "",
    "// The bits of an open or create answer.",
    ...Object.entries(OpenFlag).map(([name, n]) => `#define OPEN_${name} ${n}u`),
    "",
    "// Handles of read-only opens answered here carry this bit.",
    `#define NATIVE_FH 0x${NATIVE_FH.toString(16)}u`,
    "",
    "// setattr's bits as JavaScript decodes them: libfuse's own.",
    ...Object.entries(SetAttr).map(
      ([name, n]) =>
        `_Static_assert(FUSE_SET_ATTR_${name} == ${n}, "src/fuse/protocol.ts: SetAttr.${name}");`,
    ),
    "",
  ];
  return lines.join("\n");
}

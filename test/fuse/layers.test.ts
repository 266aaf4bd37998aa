// The adapter's boundaries: Vfs stays plain POSIX (what only a kernel adapter needs is behind
// vfs.kernel, a KernelView), the vfs never imports the adapter, and the adapter's handlers call the
// vfs directly (no callback-shaped layer between them).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { VfsKernelView } from "../../src/vfs/kernelView.ts";
import { Vfs } from "../../src/vfs/vfs.ts";

const KERNEL_SHAPED = [
  "nativeStat",
  "statIfKnown",
  "lookupNames",
  "lacksName",
  "unlisted",
  "isNote",
  "appendsOnTheirWay",
  "writesCannotFail",
  "handlesWhoseWritesCannotFail",
  "readPath",
  "fsyncPath",
  "onAttrsChanged",
];

const src = new URL("../../src/", import.meta.url).pathname;
const filesUnder = (dir: string): string[] =>
  readdirSync(join(src, dir), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts"))
    .map((f) => join(src, dir, f));

describe("the FUSE adapter's layers", () => {
  it("Vfs has none of the kernel-shaped methods; its KernelView has each", () => {
    for (const name of KERNEL_SHAPED) {
      expect(name in Vfs.prototype, `Vfs.${name}`).toBe(false);
      const view = Object.getOwnPropertyNames(VfsKernelView.prototype).includes(name);
      expect(view || name === "unlisted", `KernelView.${name}`).toBe(true);
    }
  });

  it("no vfs module imports the FUSE adapter", () => {
    for (const file of filesUnder("vfs"))
      expect(readFileSync(file, "utf8"), file).not.toMatch(/from "(\.\.\/)+fuse\//);
  });

  it("no adapter module answers through fuse-native's callback shape", () => {
    for (const file of filesUnder("fuse")) {
      const text = readFileSync(file, "utf8");
      expect(text, file).not.toMatch(/\bcb\(|type Cb\b|fuseOps\(/);
    }
  });
});

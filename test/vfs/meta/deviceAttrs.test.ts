// What a device keeps that the service has no field for (modes, owners, folder times): every change
// on disk before the call returns, read back by the next daemon; a line torn by a crash is skipped.
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DeviceAttrs, folderKey, noteKey } from "../../../src/vfs/meta/deviceAttrs.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "txtfs-attrs-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const fail = (err: unknown) => {
  throw err;
};

describe("device attributes", () => {
  it("a change is in the log when set returns, and the next load reads it", () => {
    const a = new DeviceAttrs(dir, fail);
    a.load();
    a.set(noteKey("n1"), { mode: 0o755 });
    a.set(folderKey("d1"), { mode: 0o700, mtimeMs: 1_577_836_800_000, uid: 1234 });
    expect(readFileSync(join(dir, "attrs.log"), "utf8").trim().split("\n")).toHaveLength(2);
    const b = new DeviceAttrs(dir, fail);
    b.load();
    expect(b.get(noteKey("n1"))).toEqual({ mode: 0o755 });
    expect(b.get(folderKey("d1"))).toEqual({ mode: 0o700, mtimeMs: 1_577_836_800_000, uid: 1234 });
  });

  it("nothing set forgets an item; forgetting one never kept writes nothing", () => {
    const a = new DeviceAttrs(dir, fail);
    a.load();
    a.set(noteKey("n1"), { mode: 0o600 });
    a.set(noteKey("n1"), { mode: undefined });
    a.set(noteKey("n2"), undefined);
    expect(readFileSync(join(dir, "attrs.log"), "utf8").trim().split("\n")).toHaveLength(2);
    const b = new DeviceAttrs(dir, fail);
    b.load();
    expect(b.get(noteKey("n1"))).toBeUndefined();
  });

  it("a last line torn by a crash is skipped, and the log starts clean", () => {
    const a = new DeviceAttrs(dir, fail);
    a.load();
    a.set(noteKey("n1"), { mode: 0o711 });
    appendFileSync(join(dir, "attrs.log"), '["f:n2",{"mo');
    const b = new DeviceAttrs(dir, fail);
    b.load();
    expect(b.get(noteKey("n1"))).toEqual({ mode: 0o711 });
    expect(b.get(noteKey("n2"))).toBeUndefined();
    b.set(noteKey("n3"), { mode: 0o700 }); // never joined to the torn line
    const c = new DeviceAttrs(dir, fail);
    c.load();
    expect(c.get(noteKey("n3"))).toEqual({ mode: 0o700 });
    expect(c.get(noteKey("n1"))).toEqual({ mode: 0o711 });
  });
});

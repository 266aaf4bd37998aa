import { describe, expect, it } from "vitest";
import { MountError, parseMountOptions } from "../../src/fuse/index.ts";

describe("-o options", () => {
  it("maps libfuse option names to the mount's, values kept", () => {
    expect(parseMountOptions(["allow_other,umask=022", "fsname=notes", "ro"])).toEqual({
      allowOther: true,
      umask: "022",
      fsname: "notes",
    });
  });
  it("refuses unknown options clearly", () => {
    expect(() => parseMountOptions(["big_writes"])).toThrow(MountError);
    expect(() => parseMountOptions(["big_writes"])).toThrow(/unsupported -o option "big_writes"/);
    // The kernel's timeouts are txtfs's own (it tells the kernel of every change): said so.
    expect(() => parseMountOptions(["attr_timeout=5"])).toThrow(
      /-o attr_timeout is not supported: txtfs tells/,
    );
  });
});

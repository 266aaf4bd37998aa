// One mount's exclude list (src/vfs/local/mountExcludes.ts): the defaults, then `.txtfsignore`,
// then `--exclude`, the later deciding; the file read again when its bytes change, a bad line
// skipped and named.
import { describe, expect, it } from "vitest";
import { createLogger } from "../../../src/lib/logger.ts";
import { type IgnoreFileState, MountExcludes } from "../../../src/vfs/local/mountExcludes.ts";

function excludes(patterns: string[]) {
  let file: { text: string; version: number } | undefined;
  let reads = 0;
  const list = new MountExcludes({
    patterns,
    ignoreFile: (): IgnoreFileState | undefined =>
      file && {
        version: String(file.version),
        read: () => {
          reads++;
          return Buffer.from(file!.text);
        },
      },
    log: createLogger("test", "silent"),
  });
  const write = (text: string | undefined) => {
    file = text === undefined ? undefined : { text, version: (file?.version ?? 0) + 1 };
  };
  return { list, write, reads: () => reads };
}

const by = (l: MountExcludes, path: string) => l.match(path, false)?.pattern;

describe("a mount's exclude list", () => {
  it("applies the defaults, then .txtfsignore, then --exclude", () => {
    const { list, write } = excludes(["!keep.draft.md"]);
    expect(by(list, "/a/.x.md.swp")).toBe(".*.sw[a-px]");
    expect(by(list, "/a/x.draft.md")).toBeUndefined();
    write("*.draft.md\n!.*.swp\n");
    expect(by(list, "/a/x.draft.md")).toBe("*.draft.md");
    expect(by(list, "/a/.x.md.swp")).toBeUndefined(); // the file re-includes a default
    expect(by(list, "/keep.draft.md")).toBeUndefined(); // the command line has the last word
  });

  it("reads the file again only when its bytes changed, and forgets it when it goes", () => {
    const { list, write, reads } = excludes([]);
    write("a.md\n");
    expect(by(list, "/a.md")).toBe("a.md");
    expect(by(list, "/b.md")).toBeUndefined();
    expect(reads()).toBe(1);
    write("b.md\n");
    expect(by(list, "/a.md")).toBeUndefined();
    expect(by(list, "/b.md")).toBe("b.md");
    expect(reads()).toBe(2);
    write(undefined);
    expect(by(list, "/b.md")).toBeUndefined();
  });

  it("skips a line that is not a pattern, naming it, and keeps the others", () => {
    const { list, write } = excludes([]);
    write("# mine\n[bad\nprivate/\n");
    expect(by(list, "/private/x.md")).toBe("private/");
    expect(list.problems).toEqual([
      ".txtfsignore line 2: bad exclude pattern '[bad': a [ without its ] (the line is skipped)",
    ]);
    write("private/\n");
    expect(by(list, "/x.md")).toBeUndefined();
    expect(list.problems).toEqual([]);
  });
});

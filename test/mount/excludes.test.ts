// The exclude list through a real mount: `--exclude` patterns, a `.txtfsignore` at the mount root
// and the defaults keep files on this machine (note names included), with their bytes; `txtfs
// status` names each one with the pattern that keeps it; a bad `--exclude` is refused in one line
// with exit 2, and a bad `.txtfsignore` line is skipped and named.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runTxtfs } from "../helpers/cli.ts";
import {
  flatIndex,
  isMounted,
  type MountFixture,
  makeMountDirs,
  mountFixture,
  notePaths,
  removeMountDirs,
  txtfsEnv,
} from "../helpers/mount.ts";

let m: MountFixture;

beforeAll(async () => {
  m = mountFixture();
  await m.start({ args: ["--exclude", "private/", "--exclude", "*.draft.md"] });
}, 60_000);
afterAll(() => m?.close());

/** Paths of the notes on the service. */
const servicePaths = async () => [...(await notePaths(m.current.api)).keys()].sort();

/** `txtfs status` once its record shows `want` (the record is written every 2 s). */
async function statusShowing(want: RegExp): Promise<string> {
  const deadline = Date.now() + 20_000;
  let out = "";
  while (Date.now() < deadline) {
    out = (await runTxtfs(["status"], txtfsEnv(m.dirs))).stdout;
    if (want.test(out)) return out;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`status never showed ${want}:\n${out}`);
}

describe("the exclude list", () => {
  it("keeps excluded notes, the defaults and .txtfsignore's patterns on this machine, bytes intact", async () => {
    const r = await m.sh(
      [
        "printf 'scratch.md\\n# a comment\\n[bad\\n' > .txtfsignore",
        "mkdir private && printf 'mine\\n' > private/diary.md",
        "printf 'wip\\n' > plan.draft.md",
        "printf 'temp\\n' > scratch.md",
        "printf 'apple\\n' > ._mac.md",
        "printf 'kept\\n' > shared.md",
        "cat private/diary.md plan.draft.md scratch.md ._mac.md shared.md",
      ].join(" && "),
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("mine\nwip\ntemp\napple\nkept\n");
    expect(await servicePaths()).toEqual(["shared.md"]);
    // The excluded folder itself is not on the service either: not even its name leaves here.
    expect((await flatIndex(m.current.api)).folders).toEqual([]);
    const status = await statusShowing(/excluded by scratch\.md/);
    expect(status).toContain("local-only: /private/diary.md (excluded by private/)");
    expect(status).toContain("local-only: /plan.draft.md (excluded by *.draft.md)");
    expect(status).toContain("local-only: /scratch.md (excluded by scratch.md)");
    expect(status).toContain("local-only: /._mac.md (excluded by ._*)");
    expect(status).toContain(
      ".txtfsignore line 3: bad exclude pattern '[bad': a [ without its ] (the line is skipped)",
    );
  }, 60_000);

  it("an excluded file renamed to a name that is not excluded goes up; a note moved into an excluded folder leaves the service", async () => {
    let r = await m.sh("mv plan.draft.md plan.md && cat plan.md");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("wip\n");
    expect(await servicePaths()).toEqual(["plan.md", "shared.md"]);
    r = await m.sh("mv shared.md private/shared.md && cat private/shared.md && ls");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("kept\nplan.md\nprivate\nscratch.md\n");
    // An excluded folder keeps what is in it here, as `.git` does: `mv` of a note into it is
    // EXDEV, so mv copies it there and deletes the note.
    expect(await servicePaths()).toEqual(["plan.md"]);
  }, 60_000);

  it("a file written under an excluded name stays local after its close, and after a remount", async () => {
    let r = await m.sh("printf 'one\\n' > notes.draft.md && printf 'two\\n' >> notes.draft.md");
    expect(r.code).toBe(0);
    await m.remount({ args: ["--exclude", "private/", "--exclude", "*.draft.md"] });
    r = await m.sh("cat notes.draft.md private/diary.md");
    expect(r.stdout).toBe("one\ntwo\nmine\n");
    expect(await servicePaths()).toEqual(["plan.md"]);
  }, 60_000);

  it("an edit of .txtfsignore applies to the next file made", async () => {
    const r = await m.sh(
      "printf '*.md\\n!keep.md\\n' > .txtfsignore && echo a > lost.md && echo b > keep.md",
    );
    expect(r.code).toBe(0);
    expect(await servicePaths()).toEqual(["keep.md", "plan.md"]);
    expect((await m.sh("cat lost.md")).stdout).toBe("a\n");
  }, 60_000);
});

describe("a bad --exclude", () => {
  it("is refused in one line with exit 2, and nothing is mounted", async () => {
    const dirs = makeMountDirs("txtfs-exclude-bad-");
    try {
      const r = await runTxtfs(
        ["mount", dirs.mnt, "--serve", "--data", dirs.data, "--exclude", "notes/[a-"],
        txtfsEnv(dirs),
      );
      expect(r.code).toBe(2);
      expect(r.stderr.trim().split("\n")).toEqual([
        "txtfs: --exclude: bad exclude pattern 'notes/[a-': a [ without its ]",
      ]);
      expect(isMounted(dirs.mnt)).toBe(false);
    } finally {
      await removeMountDirs(dirs);
    }
  }, 30_000);
});

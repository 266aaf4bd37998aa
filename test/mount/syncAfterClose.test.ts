// `txtfs sync` after a program closed a file is true about that close. close(2) returns once the
// kernel's FLUSH is answered; the RELEASE comes on its own, and a local-only file (not UTF-8) that
// is text again goes up as its note only at that release. Here the release is held back (a child
// keeps the descriptor until sync has been asked) so the gap is wide, not one in twenty runs.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { contentAt, type MountFixture, mountFixture, q, sh } from "../helpers/mount.ts";

let m: MountFixture;

beforeAll(async () => {
  m = mountFixture();
  await m.start();
});
afterAll(async () => {
  await m?.close();
});

const api = () => m.current.api;

describe("sync after a close", () => {
  it("a local-only file written as text and closed is on the service once sync answers, its release still on its way", async () => {
    expect((await m.sh("printf 'x\\xc3' > lo.md")).code).toBe(0);
    expect(await contentAt(api(), "lo.md")).toBeUndefined(); // kept local: not UTF-8
    const flag = join(m.dirs.base, "sync-asked");
    // The parent writes and closes (FLUSH); the child holds the same open file until sync was asked,
    // then closes it: only then does the kernel send RELEASE.
    const r = await sh(
      `python3 -c ${q(`import os, time
fd = os.open("lo.md", os.O_WRONLY | os.O_TRUNC)
os.write(fd, b"text now\\n")
if os.fork() == 0:
    null = os.open("/dev/null", os.O_WRONLY)
    os.dup2(null, 1); os.dup2(null, 2)
    while not os.path.exists(${JSON.stringify(flag)}): time.sleep(0.05)
    os.close(fd)
    os._exit(0)
os.close(fd)
print("closed")`)}`,
      { cwd: m.dirs.mnt },
    );
    expect(r.stdout).toBe("closed\n");
    writeFileSync(flag, "");
    await m.sync();
    expect(await contentAt(api(), "lo.md")).toBe("text now\n");
  });
});

// Regressions of issue 13 ("no save is ever lost or altered"), one small test per way a save was
// lost or a note's identity or times changed. Scripts run with no pauses between their steps: the
// bugs needed an edit to land while an earlier save was still pending or on its way.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type MountFixture, mountFixture, noteAt, sh } from "../helpers/mount.ts";

let m: MountFixture;

beforeAll(async () => {
  m = mountFixture();
  await m.start();
});
afterAll(() => m?.close());

const api = () => m.current.api;
/** Runs a script in the mount without waiting for delivery afterwards (m.sh waits). */
const run = (script: string) => sh(script, { cwd: m.dirs.mnt, timeoutMs: 60_000 });

describe("saves are never lost", () => {
  it("vim saves a note written a moment before (pending) and one just appended to (20 of 20)", async () => {
    // vim refuses to write when the file's mtime moved since it read it ("changed since reading"):
    // a pending note's mtime once followed the clock and a delivery reset it to the service's.
    const r = await run(`
      lost=0
      for i in $(seq 1 10); do
        printf 'banana\\ncat\\n' > v$i.md && vim -es -c '%s/a/b/g' -c wq v$i.md </dev/null || lost=$((lost+100))
        [ "$(head -1 v$i.md)" = bbnbnb ] || lost=$((lost+1))
        echo apple >> v$i.md; vim -es -c '%s/b/c/g' -c wq v$i.md </dev/null || lost=$((lost+100))
        [ "$(head -1 v$i.md)" = ccncnc ] || lost=$((lost+1))
      done
      echo lost=$lost`);
    expect(r.stdout.trim()).toBe("lost=0");
    await m.sync();
    expect((await noteAt(api(), "v7.md")).content).toBe("ccncnc\ncct\napple\n");
  });

  it("a pending note's mtime is stable until it is written again, and delivery does not move it", async () => {
    const r = await run(`
      printf x > t.md; a=$(stat -c %.9Y t.md); sleep 0.05; b=$(stat -c %.9Y t.md)
      txtfs sync >/dev/null 2>&1 || true
      sleep 1.2; c=$(stat -c %.9Y t.md)
      printf y >> t.md; d=$(stat -c %.9Y t.md)
      echo "$a $b $c $d"`);
    const [a, b, c, d] = r.stdout.trim().split(" ");
    expect(b).toBe(a);
    expect(c).toBe(a);
    expect(Number(d)).toBeGreaterThan(Number(a));
  });
});

describe("times are what programs set", () => {
  it("utimens sets mtime and atime separately; touch -m and touch -a change only theirs", async () => {
    const r = await run(`
      printf x > u.md
      python3 -c "import os; os.utime('u.md', (1000000000, 2000000000))"
      stat -c '%X %Y' u.md
      touch -m -d @1500000000 u.md; stat -c '%X %Y' u.md
      touch -a -d @1200000000 u.md; stat -c '%X %Y' u.md
      printf x > u.bin; touch -m -d @1500000000 u.bin; touch -a -d @1200000000 u.bin; stat -c '%X %Y' u.bin`);
    expect(r.stdout).toBe(
      "1000000000 2000000000\n1000000000 1500000000\n1200000000 1500000000\n1200000000 1500000000\n",
    );
  });

  it("truncate and O_TRUNC move mtime and ctime at once, before delivery", async () => {
    const r = await run(`
      printf abc > tr.md; touch -d @1000000000 tr.md; stat -c '%Y' tr.md
      truncate -s 1 tr.md; stat -c '%Y %Z' tr.md`);
    const [before, after] = r.stdout.trim().split("\n");
    expect(before).toBe("1000000000");
    const [mtime, ctime] = after!.split(" ").map(Number);
    expect(mtime).toBeGreaterThan(1_700_000_000);
    expect(ctime).toBeGreaterThan(1_700_000_000);
  });

  it("a second rsync -a transfers nothing, also after a remount", async () => {
    const src = `${m.dirs.base}/rsync-src`;
    const r = await sh(
      `mkdir -p ${src}/d && for i in 1 2 3; do echo "note $i" > ${src}/d/n$i.md; done && touch -d @1600000000 ${src}/d/*.md && ` +
        `rsync -a --stats ${src}/d/ ${m.dirs.mnt}/rs/ | grep 'files transferred'`,
      { timeoutMs: 30_000 },
    );
    expect(r.stdout).toContain("transferred: 3");
    const again = await sh(`rsync -a --stats ${src}/d/ ${m.dirs.mnt}/rs/ | grep 'files transferred'`);
    expect(again.stdout).toContain("transferred: 0");
    await m.sync();
    await m.remount();
    const after = await sh(`rsync -a --stats ${src}/d/ ${m.dirs.mnt}/rs/ | grep 'files transferred'`);
    expect(after.stdout).toContain("transferred: 0");
    expect((await run("stat -c %Y rs/n2.md")).stdout.trim()).toBe("1600000000");
  });
});

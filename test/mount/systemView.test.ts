// What system tools see of the mount as a whole: `.` and `..` in listings (ls -a, find), the root's
// mtime (the account's newest change, not 1970), and df/statfs (the cache disk's free space).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lacking } from "../helpers/kernel.ts";
import { createNote, flatIndex, type MountFixture, mountFixture, sh } from "../helpers/mount.ts";

let m: MountFixture;

beforeAll(async () => {
  m = mountFixture();
  await m.start();
});
afterAll(() => m?.close());

/** The newest updatedAt of the account's notes and folders, in whole seconds. */
async function newestChange(): Promise<number> {
  const index = await flatIndex(m.current.api);
  const all = [...index.files, ...index.folders].map((x) => Date.parse(x.updatedAt));
  return Math.floor(Math.max(...all) / 1000);
}

describe("the mount as system tools see it", () => {
  it("ls -a lists . and .. in the root and in folders; ls and find do not show or follow them", async () => {
    const r = await m.sh(
      "set -e; mkdir -p dir; printf 'x\\n' > dir/n.md; ls -a; echo --; ls -a dir; echo --; ls; echo --; find . | sort",
    );
    expect(r.code, r.stderr).toBe(0);
    const [root, dir, plain, found] = r.stdout.split("--\n");
    expect(root).toBe(".\n..\ndir\n");
    expect(dir).toBe(".\n..\nn.md\n");
    expect(plain).toBe("dir\n");
    expect(found).toBe(".\n./dir\n./dir/n.md\n");
    const dots = await m.sh("stat -c %F dir/. dir/..");
    expect(dots.stdout).toBe("directory\ndirectory\n");
  });

  it.skipIf(lacking("ptrace"))(
    "a fresh mount lists . and .. and tells each entry's type (no lstat)",
    async () => {
      expect((await m.sh("set -e; mkdir -p typed/sub; printf 'x\\n' > typed/n.md")).code).toBe(0);
      await m.sync();
      await m.remount(); // a listing the kernel never had (READDIRPLUS answers carry each type)
      const r = await m.sh("ls -a typed; stat -c %F typed/. typed/..");
      expect(r.stdout).toBe(".\n..\nn.md\nsub\ndirectory\ndirectory\n");
      // d_type: scandir knows a file from a folder without a stat of either.
      const py =
        "import os; print(sorted((e.name, e.is_dir(follow_symlinks=False)) for e in os.scandir('typed')))";
      const traced = await m.sh(
        `strace -f -e trace=newfstatat,statx,lstat,stat python3 -c "${py}" 2>&1 >/dev/null | grep -c typed/ || true`,
      );
      const listed = await m.sh(`python3 -c "${py}"`);
      expect(listed.stdout).toBe("[('n.md', False), ('sub', True)]\n");
      expect(traced.stdout.trim()).toBe("0");
    },
  );

  it("the root's mtime is the account's newest change, and moves on with a remote change", async () => {
    await m.sh("printf 'a\\n' > root-a.md");
    const shown = Number((await sh(`stat -c %Y ${m.dirs.mnt}`)).stdout.trim());
    expect(shown).toBeGreaterThan(1_700_000_000); // not 1970
    expect(shown).toBe(await newestChange());
    // A change made elsewhere (through the API) arrives by the change feed and moves the root's mtime.
    await new Promise((r) => setTimeout(r, 1100));
    await createNote(m.current.api, { name: "remote-b.md", content: "b" });
    const newest = await newestChange();
    expect(newest).toBeGreaterThan(shown);
    const r = await sh(
      `for i in $(seq 1 100); do [ "$(stat -c %Y ${m.dirs.mnt})" = ${newest} ] && exit 0; sleep 0.1; done; stat -c %Y ${m.dirs.mnt}; exit 1`,
    );
    expect(r.code, r.stdout).toBe(0);
  });

  it("df and statfs report the free space of the disk holding the cache dir", async () => {
    // Both read in one child, one right after the other: the disk is shared and changes meanwhile.
    const r = await sh(
      `stat -f -c '%S %a %b' ${m.dirs.mnt} ${m.dirs.cache}; df -P -B1 ${m.dirs.mnt} | tail -1`,
    );
    expect(r.code, r.stderr).toBe(0);
    const [mnt, cache, df] = r.stdout.trim().split("\n") as [string, string, string];
    const bytes = (line: string) => {
      const [size, avail, blocks] = line.split(" ").map(Number) as [number, number, number];
      return { avail: size * avail, total: size * blocks };
    };
    const a = bytes(mnt);
    const b = bytes(cache);
    expect(a.total).toBe(b.total);
    expect(Math.abs(a.avail - b.avail)).toBeLessThan(64 * 1024 * 1024);
    expect(a.avail).toBeGreaterThan(0);
    // df shows the mount (fsname txtfs) with the same size.
    expect(df).toMatch(new RegExp(`^txtfs\\s+${a.total}\\s`));
  });
});

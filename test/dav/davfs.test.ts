// davfs2 (Linux's WebDAV filesystem, `mount -t davfs`) over a real `txtfs dav`: editors and tools
// run in the davfs2 mount (child processes), and the bytes are checked through the service's API.
import { execFileSync } from "node:child_process";
import { chmodSync, chownSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningDav, startDav } from "../helpers/dav.ts";
import {
  contentAt,
  findByPath,
  isMounted,
  type MountDirs,
  makeMountDirs,
  q,
  removeMountDirs,
  sh,
} from "../helpers/mount.ts";

function davfs2User(): { uid: number; gid: number } | undefined {
  try {
    execFileSync("sh", ["-c", "command -v mount.davfs"]);
    const [uid, gid] = execFileSync("sh", ["-c", "id -u davfs2; id -g davfs2"], { encoding: "utf8" })
      .trim()
      .split("\n");
    return process.getuid?.() === 0 ? { uid: Number(uid), gid: Number(gid) } : undefined;
  } catch {
    return undefined;
  }
}
const davfs2 = davfs2User();

describe.skipIf(!davfs2 || !isMountable())("davfs2 over txtfs dav", () => {
  let dirs: MountDirs;
  let dav: RunningDav;
  let conf: string;
  beforeAll(async () => {
    dirs = makeMountDirs("txtfs-davfs-");
    dav = await startDav(dirs);
    // davfs2 drops to its own user: it must reach its cache dir, and reads the key from a secrets file.
    chmodSync(dirs.base, 0o755);
    const cache = join(dirs.base, "davfs2-cache");
    mkdirSync(cache);
    chownSync(cache, 0, davfs2!.gid);
    chmodSync(cache, 0o775);
    const secrets = join(dirs.base, "davfs2-secrets");
    writeFileSync(secrets, `${dav.url} txtfs ${dav.key}\n`, { mode: 0o600 });
    conf = join(dirs.base, "davfs2.conf");
    // buf_size 64: davfs2 1.6's 16 KiB buffer is smaller than the directory reads of current kernels (EINVAL).
    writeFileSync(conf, `secrets ${secrets}\ncache_dir ${cache}\ndelay_upload 0\nuse_locks 1\nbuf_size 64\n`);
    const mounted = await sh(`mount -t davfs ${q(dav.url)} ${q(dirs.mnt)} -o conf=${q(conf)}`, { cwd: "/" });
    expect(mounted.code, mounted.stderr).toBe(0);
  });
  afterAll(async () => {
    if (dirs && isMounted(dirs.mnt))
      await sh(`umount ${q(dirs.mnt)} || umount -l ${q(dirs.mnt)}`, { cwd: "/" });
    await dav?.stop();
    if (dirs) await removeMountDirs(dirs);
  });

  it("vim, sed -i, cp -r, rsync -a, mv, rm -rf and git checkout: the bytes are on the service", {
    timeout: 120_000,
  }, async () => {
    const run = await sh(
      [
        "set -e",
        "printf 'first line\\n' > note.md",
        "sed -i 's/first/First/' note.md",
        // Last: davfs2 itself shows a file vim just saved as empty until it next asks the server
        // (it does the same over rclone serve webdav); the service has the bytes (checked below).
        "vim -Es -c 'normal Goadded by vim' -c 'wq' note.md",
        "mkdir -p src/sub",
        "printf 'one\\n' > src/sub/one.md",
        "printf 'two\\n' > src/two.txt",
        "cp -r src copy",
        "rsync -a src/ synced/",
        "mv copy moved",
        "mkdir trash && printf 'bye\\n' > trash/bye.md && rm -rf trash",
        "mkdir repo && cd repo && git init -q . && printf 'v1\\n' > r.md && git add r.md",
        "git -c user.email=t@x -c user.name=t commit -qm one && printf 'v2\\n' > r.md",
        "git -c user.email=t@x -c user.name=t commit -qam two && git checkout -q HEAD~1 -- r.md && cd ..",
      ].join("\n"),
      { cwd: dirs.mnt, timeoutMs: 90_000 },
    );
    expect(run.code, run.stderr).toBe(0);
    // davfs2 uploads what is left at unmount: then everything is on the service.
    const un = await sh(`umount ${q(dirs.mnt)}`, { cwd: "/", timeoutMs: 60_000 });
    expect(un.code, un.stderr).toBe(0);
    const api = dav.api;
    await expect
      .poll(() => contentAt(api, "note.md"), { timeout: 20_000 })
      .toBe("First line\nadded by vim\n");
    await expect.poll(() => contentAt(api, "moved/sub/one.md"), { timeout: 20_000 }).toBe("one\n");
    await expect.poll(() => contentAt(api, "moved/two.txt"), { timeout: 20_000 }).toBe("two\n");
    await expect.poll(() => contentAt(api, "synced/sub/one.md"), { timeout: 20_000 }).toBe("one\n");
    expect(await contentAt(api, "src/two.txt")).toBe("two\n");
    expect(await findByPath(api, "copy")).toBeUndefined();
    expect(await findByPath(api, "trash")).toBeUndefined();
    expect(await contentAt(api, "repo/r.md")).toBe("v1\n"); // git checkout's rewrite; .git/ stays local
    // No editor's swap or backup file became a note.
    const index = (await api.get("/api/me/files")).body;
    expect(index.files.map((f: { name: string }) => f.name).sort()).toEqual(
      ["note.md", "one.md", "one.md", "one.md", "r.md", "two.txt", "two.txt", "two.txt"].sort(),
    );
  });
});

function isMountable(): boolean {
  try {
    execFileSync("sh", ["-c", "test -e /dev/fuse"]);
    return true;
  } catch {
    return false;
  }
}

// Real WebDAV clients against a real `txtfs dav`: cadaver (scripted) and rclone's webdav backend
// (sync a folder, then check it byte for byte), each result checked through the service's API.
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningDav, startDav } from "../helpers/dav.ts";
import {
  contentAt,
  findByPath,
  type MountDirs,
  makeMountDirs,
  noteAt,
  q,
  removeMountDirs,
  sh,
} from "../helpers/mount.ts";

const has = (tool: string) => {
  try {
    execFileSync("sh", ["-c", `command -v ${tool}`]);
    return true;
  } catch {
    return false;
  }
};

describe("real WebDAV clients over txtfs dav", () => {
  let dirs: MountDirs;
  let dav: RunningDav;
  beforeAll(async () => {
    dirs = makeMountDirs("txtfs-dav-clients-");
    dav = await startDav(dirs);
  });
  afterAll(async () => {
    await dav?.stop();
    if (dirs) await removeMountDirs(dirs);
  });

  it.skipIf(!has("cadaver"))(
    "cadaver: mkcol, put, propset in urn:txtfs:, lock/put/unlock, copy, move, delete",
    async () => {
      const home = join(dirs.base, "cadaver-home");
      mkdirSync(home);
      writeFileSync(join(home, ".netrc"), `machine 127.0.0.1 login txtfs password ${dav.key}\n`, {
        mode: 0o600,
      });
      writeFileSync(join(dirs.base, "one.md"), "from cadaver\n");
      writeFileSync(join(dirs.base, "two.md"), "locked save\n");
      const script = [
        "mkcol cad",
        "cd cad",
        "put one.md n.md",
        "set namespace urn:txtfs:",
        "propset n.md tags one,two",
        "lock n.md",
        "put two.md n.md",
        "unlock n.md",
        "copy n.md c.md",
        "move c.md m.md",
        "put one.md gone.md",
        "delete gone.md",
        "ls",
        "quit",
      ].join("\n");
      const r = await sh(`HOME=${q(home)} cadaver ${q(dav.url)} <<'EOF'\n${script}\nEOF`, {
        cwd: dirs.base,
        timeoutMs: 30_000,
      });
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(r.stdout).not.toMatch(/failed/);
      await expect.poll(() => contentAt(dav.api, "cad/n.md"), { timeout: 15_000 }).toBe("locked save\n");
      await expect.poll(() => contentAt(dav.api, "cad/m.md"), { timeout: 15_000 }).toBe("locked save\n");
      expect((await noteAt(dav.api, "cad/n.md")).tags).toEqual(["one", "two"]);
      expect(await findByPath(dav.api, "cad/c.md")).toBeUndefined();
      expect(await findByPath(dav.api, "cad/gone.md")).toBeUndefined();
    },
  );

  it.skipIf(!has("rclone"))(
    "rclone sync to its webdav backend, then rclone check --download finds no difference",
    {
      timeout: 60_000,
    },
    async () => {
      const src = join(dirs.base, "vault");
      mkdirSync(join(src, "daily"), { recursive: true });
      mkdirSync(join(src, "img"));
      writeFileSync(join(src, "Home.md"), "# Home\n\n[[daily/2026-12-01]]\n");
      writeFileSync(join(src, "daily", "2026-12-01.md"), "day one\n");
      writeFileSync(join(src, "daily", "2026-12-02.md"), "day two\n");
      writeFileSync(join(src, "img", "pic.png"), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 255, 1, 2]));
      const remote = `:webdav,url=${q(dav.url)},user=txtfs,pass=$(rclone obscure ${q(dav.key)}):vault`;
      const env = `RCLONE_CONFIG=${q(join(dirs.base, "rclone.conf"))}`;
      const sync = async () => {
        const s = await sh(
          `${env} rclone sync ${q(src)} "${remote}" && ${env} rclone check --download ${q(src)} "${remote}"`,
          {
            cwd: dirs.base,
            timeoutMs: 45_000,
          },
        );
        expect(s.code, s.stderr).toBe(0);
        expect(s.stderr).toMatch(/0 differences found/);
      };
      await sync();
      await expect
        .poll(() => contentAt(dav.api, "vault/daily/2026-12-01.md"), { timeout: 15_000 })
        .toBe("day one\n");
      expect(await contentAt(dav.api, "vault/Home.md")).toBe("# Home\n\n[[daily/2026-12-01]]\n");
      const homeId = (await noteAt(dav.api, "vault/Home.md")).id;
      // A second sync: a change, a removal; the changed note keeps its id.
      writeFileSync(join(src, "Home.md"), "# Home\n\nedited\n");
      execFileSync("rm", [join(src, "daily", "2026-12-02.md")]);
      await sync();
      await expect
        .poll(() => contentAt(dav.api, "vault/Home.md"), { timeout: 15_000 })
        .toBe("# Home\n\nedited\n");
      expect((await noteAt(dav.api, "vault/Home.md")).id).toBe(homeId);
      await expect
        .poll(() => findByPath(dav.api, "vault/daily/2026-12-02.md"), { timeout: 15_000 })
        .toBeUndefined();
    },
  );
});
